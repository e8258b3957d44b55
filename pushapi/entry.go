package pushapi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// One result entry of a send answer: the tolerant reader
// (scanner.entry) and, beside it, the readers of the common shapes
// (fastEntry, fastDelivered), held to it by FuzzFastEntry.

// echo records which echo fields a result entry carried.
type echo uint8

const (
	echoUser   echo = 1 << iota
	echoDevice      // deviceId
	echoTopics      // topics: [...]
	echoTopic       // one topic: "topic": "a", "topics": "a", or "topics": ["a"]
)

// entry is one decoded result entry (kept in a slice of Results, so an
// answer in request order needs no copy) and how it named its target.
type entry struct {
	*Result
	topic       string // with echoTopic: the one topic it is about
	echo        echo
	reasonFirst bool // reason came before message in the answer
}

// wholeEcho reports whether e names topics target t as a whole.
func (e *entry) wholeEcho(t *target) bool {
	return e.echo&echoTopics != 0 && slices.Equal(e.Topics, t.topics) ||
		len(t.topics) == 1 && e.echo&echoTopic != 0 && e.topic == t.topics[0]
}

// names reports whether e's echo names user or device target t.
func (e *entry) names(t *target) bool {
	switch t.kind {
	case 'u':
		return e.echo&echoUser != 0 && e.UserID == t.id
	case 'd':
		return e.echo&echoDevice != 0 && e.DeviceID == t.id
	}
	return e.wholeEcho(t)
}

func (e *entry) describe() string {
	switch {
	case e.echo&echoUser != 0:
		return fmt.Sprintf("userId %q", sanitize(e.UserID, 80))
	case e.echo&echoDevice != 0:
		return fmt.Sprintf("deviceId %q", sanitize(e.DeviceID, 80))
	case e.echo&echoTopics != 0 && len(e.Topics) != 1:
		return "topics " + quoteList(e.Topics)
	}
	return fmt.Sprintf("topic %q", sanitize(e.topic, 80))
}

// Keys of a result entry, matched without regard to case.
const (
	keyOther = iota
	keyUserID
	keyDeviceID
	keyTopics
	keyTopic
	keyOutcome
	keyDeviceCount
	keyReason
	keyMessage
	keyUnreachableSince
)

func entryKey(key []byte) (int, string) {
	switch string(key) { // the spec's spelling, without folding case
	case "userId":
		return keyUserID, "userId"
	case "status":
		return keyOutcome, "status"
	case "deviceCount":
		return keyDeviceCount, "deviceCount"
	case "reason":
		return keyReason, "reason"
	case "message":
		return keyMessage, "message"
	case "deviceId":
		return keyDeviceID, "deviceId"
	}
	type k struct {
		name string
		id   int
	}
	var cands []k // the keys of this length
	switch len(key) {
	case 5:
		cands = []k{{"topic", keyTopic}}
	case 6:
		cands = []k{{"userId", keyUserID}, {"status", keyOutcome}, {"result", keyOutcome}, {"topics", keyTopics}, {"reason", keyReason}}
	case 7:
		cands = []k{{"outcome", keyOutcome}, {"message", keyMessage}}
	case 8:
		cands = []k{{"deviceId", keyDeviceID}}
	case 11:
		cands = []k{{"deviceCount", keyDeviceCount}}
	case 16:
		cands = []k{{"unreachableSince", keyUnreachableSince}}
	}
	for _, c := range cands {
		if bytes.EqualFold(key, []byte(c.name)) {
			return c.id, c.name
		}
	}
	return keyOther, ""
}

// entry decodes one result object into e. exp is the target expected at
// this position (nil past the end), used to share its strings instead of
// copying the echo; count is where a device count is stored. The echo and
// the outcome must be readable; each optional field is read on its own,
// and one that cannot be (a deviceCount that is no count, an
// unreachableSince that is no time) is kept as served in
// Result.Unreadable, never failing the entry.
func (s *scanner) entry(e *entry, exp *target, count *int) error {
	r := e.Result
	var outcome Outcome
	hasOutcome, countSeen := false, false
	err := s.object(func(key []byte) error {
		id, name := entryKey(key)
		var err error
		switch id {
		case keyUserID:
			r.UserID, err = s.echoStr(exp, 'u')
			e.echo |= echoUser
		case keyDeviceID:
			r.DeviceID, err = s.echoStr(exp, 'd')
			e.echo |= echoDevice
		case keyTopics, keyTopic:
			err = s.topicsEcho(e, exp)
		case keyOutcome:
			var v []byte
			if v, err = s.str(); err == nil {
				o, ok := parseOutcome(v)
				if !ok {
					err = fmt.Errorf("unknown outcome %q", sanitize(string(v), 40))
				}
				outcome, hasOutcome = o, true
			}
		case keyDeviceCount, keyUnreachableSince:
			v, verr := s.value()
			if verr != nil {
				return verr // the JSON itself is broken
			}
			if id == keyDeviceCount {
				countSeen = true
				n, ok, perr := countOf(v, &s.scratch)
				switch {
				case perr != nil:
					e.unread(name, v)
				case ok:
					if count == nil {
						count = new(int)
					}
					*count = n
					r.DeviceCount = count
				}
			} else if t, perr := timeOf(v, &s.scratch); perr != nil {
				e.unread(name, v)
			} else {
				r.UnreachableSince = t
			}
		case keyReason:
			r.Reason, err = s.text()
			e.reasonFirst = r.Message == ""
		case keyMessage:
			r.Message, err = s.text()
		default:
			return s.skip(1)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !hasOutcome {
		if outcome, err = inferOutcome(r, countSeen); err != nil {
			return err
		}
	}
	r.Outcome = outcome
	return nil
}

// fastEntry reads the entry at b[p] ('{') as scanner.entry would when it
// has a common shape, and returns the offset past it; false (e then holds
// anything) for any other. count must not be nil.
func fastEntry(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	r := e.Result
	var seen uint16 // keys read: a repeated one is the general path's
	var outcome Outcome
	hasOutcome := false
	p = skipWS(b, p+1)
	for {
		id, q := fastKey(b, p)
		if id == keyOther || seen&(1<<id) != 0 {
			return 0, false
		}
		if p = skipWS(b, q); p >= len(b) || b[p] != ':' {
			return 0, false
		}
		p = skipWS(b, p+1)
		var ok bool
		seen |= 1 << id
		var v []byte
		switch id {
		case keyDeviceCount:
			if v, p, ok = plainUint(b, p); !ok || len(v) > 9 {
				return 0, false
			}
			*count, _ = smallUint(v)
			r.DeviceCount = count
		case keyUnreachableSince:
			if v, q, ok = plainStr(b, p); ok {
				t, err := strTime(v)
				if err != nil {
					return 0, false
				}
				r.UnreachableSince, p = t, q
			} else if v, q, ok = plainUint(b, p); ok && len(v) <= 20 {
				t, err := epochTime(v)
				if err != nil {
					return 0, false
				}
				r.UnreachableSince, p = t, q
			} else {
				return 0, false
			}
		default:
			if v, p, ok = plainStr(b, p); !ok {
				return 0, false
			}
			switch id {
			case keyUserID:
				r.UserID, e.echo = echoOf(v, exp, 'u'), e.echo|echoUser
			case keyDeviceID:
				r.DeviceID, e.echo = echoOf(v, exp, 'd'), e.echo|echoDevice
			case keyOutcome:
				if outcome, ok = parseOutcome(v); !ok {
					return 0, false
				}
				hasOutcome = true
			case keyReason:
				r.Reason, e.reasonFirst = strText(v), r.Message == ""
			case keyMessage:
				r.Message = strText(v)
			}
		}
		if p = skipWS(b, p); p >= len(b) {
			return 0, false
		}
		if b[p] == '}' {
			p++
			break
		}
		if b[p] != ',' {
			return 0, false
		}
		p = skipWS(b, p+1)
	}
	if !hasOutcome {
		var err error
		if outcome, err = inferOutcome(r, false); err != nil {
			return 0, false
		}
	}
	r.Outcome = outcome
	return p, true
}

// fastDelivered reads the entry at b[p] as fastEntry would when it is the
// commonest one, byte for byte: {"userId":"<the id expected>","status":
// "delivered","deviceCount":<n>}, no white space. Matched whole, it needs
// no key lookups: 15 ns an entry instead of fastEntry's 55 (a million
// results are a million of these). False, with e untouched, for any other.
func fastDelivered(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	const head, tail = `{"userId":`, `,"status":"delivered","deviceCount":`
	if exp == nil || exp.kind != 'u' || len(b)-p < len(head)+len(exp.id)+2+len(tail) || string(b[p:p+len(head)]) != head {
		return 0, false
	}
	id, q, ok := plainStr(b, p+len(head))
	if !ok || string(id) != exp.id || len(b)-q < len(tail) || string(b[q:q+len(tail)]) != tail {
		return 0, false
	}
	v, q, ok := plainUint(b, q+len(tail))
	if !ok || len(v) > 9 || b[q] != '}' {
		return 0, false
	}
	*count, _ = smallUint(v)
	r := e.Result
	r.UserID, r.Outcome, r.DeviceCount = exp.id, OutcomeDelivered, count
	e.echo |= echoUser
	return q + 1, true
}

// fastKey is the key at b[p] when it is in the spec's spelling, and the
// offset past it; keyOther for any other, which the general decoder reads.
// Compared quoted, a match holds no escape.
func fastKey(b []byte, p int) (int, int) {
	b = b[p:]
	is := func(quoted string) bool { return len(b) >= len(quoted) && string(b[:len(quoted)]) == quoted }
	switch {
	case is(`"userId"`):
		return keyUserID, p + len(`"userId"`)
	case is(`"status"`):
		return keyOutcome, p + len(`"status"`)
	case is(`"deviceCount"`):
		return keyDeviceCount, p + len(`"deviceCount"`)
	case is(`"reason"`):
		return keyReason, p + len(`"reason"`)
	case is(`"message"`):
		return keyMessage, p + len(`"message"`)
	case is(`"deviceId"`):
		return keyDeviceID, p + len(`"deviceId"`)
	case is(`"unreachableSince"`):
		return keyUnreachableSince, p + len(`"unreachableSince"`)
	}
	return keyOther, 0
}

// unread keeps optional field name, whose value v could not be read, as
// served.
func (e *entry) unread(name string, v []byte) {
	if e.Unreadable != "" {
		e.Unreadable += "; "
	}
	e.Unreadable += name + ": " + validUTF8(v)
}

// inferOutcome is the outcome of an entry without one: the field name is
// not in the spec, so it is inferred from what is present, the failure
// signal first so a failure is never taken for success. countSeen says a
// deviceCount was there, readable or not.
func inferOutcome(r *Result, countSeen bool) (Outcome, error) {
	switch {
	case r.Message != "":
		return OutcomeFailed, nil
	case r.Reason != "":
		return OutcomeSkipped, nil
	case r.DeviceCount != nil || countSeen:
		return OutcomeDelivered, nil
	}
	return "", errors.New("no outcome: none of status, outcome, result, deviceCount, reason, message")
}

// topicsEcho reads a topics echo: an array, or one topic as a string.
func (s *scanner) topicsEcho(e *entry, exp *target) error {
	if s.peek() == '"' {
		v, err := s.str()
		if err != nil {
			return err
		}
		e.topic, e.echo = string(v), e.echo|echoTopic
		return nil
	}
	var tops []string
	err := s.array(func() error {
		v, err := s.str()
		if err != nil {
			return err
		}
		k := len(tops)
		if exp != nil && exp.kind == 't' && k < len(exp.topics) && string(v) == exp.topics[k] {
			tops = append(tops, exp.topics[k])
		} else {
			tops = append(tops, string(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.Topics, e.echo = tops, e.echo|echoTopics
	if len(tops) == 1 {
		e.topic, e.echo = tops[0], e.echo|echoTopic
	}
	return nil
}

func parseOutcome(v []byte) (Outcome, bool) {
	switch string(v) { // the spec's spelling, without folding case
	case "delivered":
		return OutcomeDelivered, true
	case "skipped":
		return OutcomeSkipped, true
	case "failed":
		return OutcomeFailed, true
	}
	v = bytes.TrimSpace(v)
	for _, o := range [...]Outcome{OutcomeDelivered, OutcomeSkipped, OutcomeFailed} {
		if bytes.EqualFold(v, []byte(o)) {
			return o, true
		}
	}
	return "", false
}

// echoStr reads an echo id, reusing the expected target's string when equal.
func (s *scanner) echoStr(exp *target, kind byte) (string, error) {
	v, err := s.str()
	if err != nil {
		return "", err
	}
	return echoOf(v, exp, kind), nil
}

// echoOf is the echo id v, the expected target's string when equal.
func echoOf(v []byte, exp *target, kind byte) string {
	if exp != nil && exp.kind == kind && string(v) == exp.id {
		return exp.id
	}
	return string(v)
}

// text reads a string, or keeps any other non-null value as its JSON text
// (a structured error message is still worth showing).
func (s *scanner) text() (string, error) {
	if s.null() {
		return "", nil
	}
	if s.peek() == '"' {
		v, err := s.str()
		if err != nil {
			return "", err
		}
		return strText(v), nil
	}
	return s.raw()
}

// strText is the content v of a text string.
func strText(v []byte) string {
	if string(v) == ReasonNoActiveDevice {
		return ReasonNoActiveDevice // the common case, without a copy
	}
	return validUTF8(v)
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// countOf reads a device count from the JSON value v: a non-negative
// integer given as a number or numeric string; ok is false for null (or
// a blank string). buf holds an unescaped string.
func countOf(v jsontext.Value, buf *[]byte) (n int, ok bool, err error) {
	switch v.Kind() {
	case 'n':
		return 0, false, nil
	case '"':
		v = bytes.TrimSpace(unquoted(buf, v))
		if len(v) == 0 {
			return 0, false, nil
		}
	case '0':
	default:
		return 0, false, fmt.Errorf("not a count: %s", v.Kind())
	}
	if n, ok := smallUint(v); ok {
		return n, true, nil
	}
	i, err := strconv.ParseInt(string(v), 10, 0)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
			return 0, false, fmt.Errorf("not an integer: %q", sanitize(string(v), 40))
		}
		i = int64(f)
	}
	if i < 0 {
		return 0, false, fmt.Errorf("negative: %d", i)
	}
	return int(i), true, nil
}

// smallUint parses the common count: up to nine decimal digits.
func smallUint(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
