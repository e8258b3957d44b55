package pushapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// target is one expected result entry of a send, in request order.
type target struct {
	notif  int
	kind   byte // 'u' user, 'd' device, 't' topics
	id     string
	topics []string
}

func targetsOf(batch []Notification) []target {
	n := 0
	for i := range batch {
		n += batch[i].Targets()
	}
	ts := make([]target, 0, n)
	for i := range batch {
		nt := &batch[i]
		for _, id := range nt.UserIDs {
			ts = append(ts, target{notif: i, kind: 'u', id: id})
		}
		for _, id := range nt.DeviceIDs {
			ts = append(ts, target{notif: i, kind: 'd', id: id})
		}
		if len(nt.Topics) > 0 {
			ts = append(ts, target{notif: i, kind: 't', topics: nt.Topics})
		}
	}
	return ts
}

// echo records which echo fields a result entry carried.
type echo uint8

const (
	echoUser echo = 1 << iota
	echoDevice
	echoTopics
)

// echoes reports whether r, carrying the echo fields e, names t.
func (e echo) echoes(r *Result, t *target) bool {
	switch t.kind {
	case 'u':
		return e&echoUser != 0 && r.UserID == t.id
	case 'd':
		return e&echoDevice != 0 && r.DeviceID == t.id
	}
	return e&echoTopics != 0 && slices.Equal(r.Topics, t.topics)
}

func (e echo) key(r *Result) (string, bool) {
	switch {
	case e&echoUser != 0:
		return echoKey('u', r.UserID, nil), true
	case e&echoDevice != 0:
		return echoKey('d', r.DeviceID, nil), true
	case e&echoTopics != 0:
		return echoKey('t', "", r.Topics), true
	}
	return "", false
}

func (e echo) describe(r *Result) string {
	switch {
	case e&echoUser != 0:
		return fmt.Sprintf("userId %q", sanitize(r.UserID, 80))
	case e&echoDevice != 0:
		return fmt.Sprintf("deviceId %q", sanitize(r.DeviceID, 80))
	}
	return fmt.Sprintf("topics %q", r.Topics)
}

// decodeSendResults decodes the body of a 200 or 207 send answer into
// per-notification results. An empty body (200 only) means every target was
// delivered with unknown device counts.
func decodeSendResults(body []byte, status int, batch []Notification) ([][]Result, error) {
	ts := targetsOf(batch)
	flat := make([]Result, len(ts))
	if len(bytes.TrimSpace(body)) == 0 {
		if status != 200 {
			return nil, fmt.Errorf("empty body with status %d: a 207 must list results", status)
		}
		for k := range ts {
			flat[k] = Result{Outcome: OutcomeDelivered}
			fillEcho(&flat[k], &ts[k])
		}
		return split(flat, ts, len(batch)), nil
	}

	s := &scanner{b: body}
	echoes := make([]echo, len(ts))
	counts := make([]int, len(ts)) // one backing array for DeviceCount pointers
	n := 0                         // entries seen; those past len(ts) are read and dropped
	readResults := func() error {
		return s.array(func() error {
			var (
				r     Result
				e     echo
				exp   *target
				count *int
				res   = &r
				ep    = &e
			)
			if n < len(ts) {
				res, ep, exp, count = &flat[n], &echoes[n], &ts[n], &counts[n]
			}
			if err := s.entry(res, ep, exp, count); err != nil {
				return fmt.Errorf("result %d: %w", n, err)
			}
			n++
			return nil
		})
	}
	switch s.peek() {
	case '[':
		if err := readResults(); err != nil {
			return nil, err
		}
	case '{':
		found := false
		err := s.object(func(key []byte) error {
			if !bytes.EqualFold(key, []byte("results")) || found {
				return s.skip(1)
			}
			found = true
			if s.peek() != '[' {
				return fmt.Errorf("results is %s, want array", s.kind())
			}
			return readResults()
		})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, errors.New(`no "results" array in the body`)
		}
	default:
		return nil, fmt.Errorf("body is %s, want a results object or array", s.kind())
	}
	if !s.eof() {
		return nil, s.errorf("data after the results")
	}
	if err := match(flat, echoes, n, ts); err != nil {
		return nil, err
	}
	return split(flat, ts, len(batch)), nil
}

// match checks that the n entries decoded into flat (with their echoes)
// name the targets ts in order; if the order does not hold, it places
// them by echo instead.
func match(flat []Result, echoes []echo, n int, ts []target) error {
	if n != len(ts) {
		return fmt.Errorf("%d results for %d targets", n, len(ts))
	}
	inOrder := true
	for k := range flat {
		if echoes[k] != 0 && !echoes[k].echoes(&flat[k], &ts[k]) {
			inOrder = false
			break
		}
	}
	if !inOrder {
		byEcho := make(map[string][]int, len(ts))
		for k := range ts {
			key := echoKey(ts[k].kind, ts[k].id, ts[k].topics)
			byEcho[key] = append(byEcho[key], k)
		}
		placed := make([]Result, len(flat))
		for k := range flat {
			key, ok := echoes[k].key(&flat[k])
			if !ok {
				return fmt.Errorf("result %d names no target and results are out of order", k)
			}
			q := byEcho[key]
			if len(q) == 0 {
				return fmt.Errorf("result %d names a target not sent (or named twice): %s", k, echoes[k].describe(&flat[k]))
			}
			placed[q[0]], byEcho[key] = flat[k], q[1:]
		}
		copy(flat, placed)
	}
	for k := range flat {
		fillEcho(&flat[k], &ts[k])
	}
	return nil
}

func echoKey(kind byte, id string, topics []string) string {
	if kind == 't' {
		return "t\x00" + strings.Join(topics, "\x00")
	}
	return string(kind) + "\x00" + id
}

// fillEcho sets the echo from the request, so callers always see it the
// way it was sent.
func fillEcho(r *Result, t *target) {
	r.UserID, r.DeviceID, r.Topics = "", "", nil
	switch t.kind {
	case 'u':
		r.UserID = t.id
	case 'd':
		r.DeviceID = t.id
	default:
		r.Topics = slices.Clone(t.topics)
	}
}

func split(flat []Result, ts []target, n int) [][]Result {
	out := make([][]Result, n)
	start := 0
	for i := range n {
		end := start
		for end < len(ts) && ts[end].notif == i {
			end++
		}
		out[i] = flat[start:end:end]
		start = end
	}
	return out
}

// entry decodes one result object into r and its echo fields into e. exp is the target at this position (nil
// past the end), used to share its strings instead of copying the echo.
// count is where a device count is stored.
func (s *scanner) entry(r *Result, e *echo, exp *target, count *int) error {
	var outcome Outcome
	hasOutcome := false
	err := s.object(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("userId")):
			v, err := s.echoStr(exp, 'u')
			if err != nil {
				return fmt.Errorf("userId: %w", err)
			}
			r.UserID, *e = v, *e|echoUser
		case bytes.EqualFold(key, []byte("deviceId")):
			v, err := s.echoStr(exp, 'd')
			if err != nil {
				return fmt.Errorf("deviceId: %w", err)
			}
			r.DeviceID, *e = v, *e|echoDevice
		case bytes.EqualFold(key, []byte("topics")):
			var tops []string
			err := s.array(func() error {
				v, err := s.str()
				if err != nil {
					return err
				}
				tops = append(tops, string(v))
				return nil
			})
			if err != nil {
				return fmt.Errorf("topics: %w", err)
			}
			r.Topics, *e = tops, *e|echoTopics
		case bytes.EqualFold(key, []byte("status")), bytes.EqualFold(key, []byte("outcome")),
			bytes.EqualFold(key, []byte("result")):
			name := outcomeKeyName(key)
			v, err := s.str()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			o, ok := parseOutcome(v)
			if !ok {
				return fmt.Errorf("%s: unknown outcome %q", name, sanitize(string(v), 40))
			}
			outcome, hasOutcome = o, true
		case bytes.EqualFold(key, []byte("deviceCount")):
			n, ok, err := s.count()
			if err != nil {
				return fmt.Errorf("deviceCount: %w", err)
			}
			if ok {
				if count == nil {
					count = new(int)
				}
				*count = n
				r.DeviceCount = count
			}
		case bytes.EqualFold(key, []byte("reason")):
			v, err := s.text()
			if err != nil {
				return fmt.Errorf("reason: %w", err)
			}
			r.Reason = v
		case bytes.EqualFold(key, []byte("message")):
			v, err := s.text()
			if err != nil {
				return fmt.Errorf("message: %w", err)
			}
			r.Message = v
		case bytes.EqualFold(key, []byte("unreachableSince")):
			t, err := s.timestamp()
			if err != nil {
				return fmt.Errorf("unreachableSince: %w", err)
			}
			r.UnreachableSince = t
		default:
			return s.skip(1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !hasOutcome {
		// The field name is not in the spec: infer from what is present,
		// the failure signal first so a failure is never taken for success.
		switch {
		case r.Message != "":
			outcome = OutcomeFailed
		case r.Reason != "":
			outcome = OutcomeSkipped
		case r.DeviceCount != nil:
			outcome = OutcomeDelivered
		default:
			return errors.New("no outcome: none of status, outcome, result, deviceCount, reason, message")
		}
	}
	r.Outcome = outcome
	return nil
}

// outcomeKeyName names an outcome key for errors without copying it.
func outcomeKeyName(key []byte) string {
	for _, n := range [...]string{"status", "outcome"} {
		if bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return "result"
}

func parseOutcome(v []byte) (Outcome, bool) {
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
	if exp != nil && exp.kind == kind && string(v) == exp.id {
		return exp.id, nil
	}
	return string(v), nil
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
		if string(v) == ReasonNoActiveDevice {
			return ReasonNoActiveDevice, nil // the common case, without a copy
		}
		return validUTF8(v), nil
	}
	start := s.i
	if err := s.skip(1); err != nil {
		return "", err
	}
	return validUTF8(s.b[start:s.i]), nil
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// count reads a non-negative integer given as a number or numeric string;
// ok is false for null.
func (s *scanner) count() (n int, ok bool, err error) {
	if s.null() {
		return 0, false, nil
	}
	var v []byte
	if s.peek() == '"' {
		if v, err = s.str(); err != nil {
			return 0, false, err
		}
		v = bytes.TrimSpace(v)
	} else if v, err = s.number(); err != nil {
		return 0, false, err
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

// timestamp reads an RFC 3339 string or epoch milliseconds (a number or a
// numeric string); nil for null.
func (s *scanner) timestamp() (*time.Time, error) {
	if s.null() {
		return nil, nil
	}
	var v []byte
	var err error
	isStr := s.peek() == '"'
	if isStr {
		if v, err = s.str(); err != nil {
			return nil, err
		}
		v = bytes.TrimSpace(v)
		if len(v) == 0 {
			return nil, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
			return &t, nil
		}
	} else if v, err = s.number(); err != nil {
		return nil, err
	}
	ms, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(ms, 0) || math.Abs(ms) > 1e15 {
		return nil, fmt.Errorf("neither RFC 3339 nor epoch milliseconds: %q", sanitize(string(v), 40))
	}
	t := time.UnixMilli(int64(ms)).UTC()
	return &t, nil
}

// recipientsPage is one decoded page of the recipient list.
type recipientsPage struct {
	userIDs []string
	cursor  string // next cursor; empty when this is the last page
}

// decodeRecipients decodes a bare array of user ids, or an object holding
// the list under userIds, recipients or data with an optional next cursor
// under next, nextCursor or cursor. Elements may be strings or objects with
// a userId (or id).
func decodeRecipients(body []byte) (recipientsPage, error) {
	var p recipientsPage
	s := &scanner{b: body}
	list := func() error {
		if s.peek() != '[' {
			return fmt.Errorf("user id list is %s, want array", s.kind())
		}
		return s.array(func() error {
			k := len(p.userIDs)
			id, err := s.recipient()
			if err != nil {
				return fmt.Errorf("recipient %d: %w", k, err)
			}
			p.userIDs = append(p.userIDs, id)
			return nil
		})
	}
	switch s.peek() {
	case '[':
		if err := list(); err != nil {
			return p, err
		}
	case '{':
		found := false
		err := s.object(func(key []byte) error {
			switch {
			case !found && (bytes.EqualFold(key, []byte("userIds")) || bytes.EqualFold(key, []byte("recipients")) ||
				bytes.EqualFold(key, []byte("data"))):
				found = true
				return list()
			case bytes.EqualFold(key, []byte("next")), bytes.EqualFold(key, []byte("nextCursor")),
				bytes.EqualFold(key, []byte("cursor")):
				c, err := s.cursor()
				if err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
				if c != "" {
					p.cursor = c
				}
				return nil
			}
			return s.skip(1)
		})
		if err != nil {
			return p, err
		}
		if !found {
			return p, errors.New(`no user id list (userIds, recipients or data) in the body`)
		}
	default:
		return p, fmt.Errorf("body is %s, want an array or object", s.kind())
	}
	if !s.eof() {
		return p, s.errorf("data after the recipient list")
	}
	return p, nil
}

func (s *scanner) recipient() (string, error) {
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err != nil {
			return "", err
		}
		if len(v) == 0 {
			return "", errors.New("empty user id")
		}
		return validUTF8(v), nil
	case '{':
		var id string
		err := s.object(func(key []byte) error {
			if bytes.EqualFold(key, []byte("userId")) || (id == "" && bytes.EqualFold(key, []byte("id"))) {
				v, err := s.str()
				if err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
				id = validUTF8(v)
				return nil
			}
			return s.skip(1)
		})
		if err != nil {
			return "", err
		}
		if id == "" {
			return "", errors.New("object without userId")
		}
		return id, nil
	}
	return "", fmt.Errorf("is %s, want string", s.kind())
}

func (s *scanner) cursor() (string, error) {
	switch {
	case s.null():
		return "", nil
	case s.peek() == '"':
		v, err := s.str()
		return validUTF8(v), err
	case s.peek() == 't' || s.peek() == 'f':
		return "", errors.New("is boolean, want string")
	case s.peek() == '{' || s.peek() == '[':
		return "", fmt.Errorf("is %s, want string", s.kind())
	}
	v, err := s.number()
	return string(v), err
}

// decodeIssues reads a 400 body: {"issues": [...]} or a bare array. Any
// entry is kept verbatim; path [INDEX, "field", ...] and message are read
// where present. n is the number of notifications sent.
func decodeIssues(body []byte, n int) ([]Issue, bool) {
	var raws []json.RawMessage
	var obj struct {
		Issues []json.RawMessage `json:"issues"`
	}
	if err := json.Unmarshal(body, &obj); err == nil && obj.Issues != nil {
		raws = obj.Issues
	} else if err := json.Unmarshal(body, &raws); err != nil || raws == nil {
		return nil, false
	}
	issues := make([]Issue, 0, len(raws))
	for _, raw := range raws {
		is := Issue{Raw: raw, Index: -1}
		var str string
		var fields struct {
			Path    []json.RawMessage `json:"path"`
			Message json.RawMessage   `json:"message"`
		}
		if json.Unmarshal(raw, &str) == nil {
			is.Message = sanitize(str, 500)
		} else if json.Unmarshal(raw, &fields) == nil {
			is.Index, is.Field = issuePath(fields.Path, n)
			if len(fields.Message) > 0 {
				if json.Unmarshal(fields.Message, &str) == nil {
					is.Message = sanitize(str, 500)
				} else {
					is.Message = sanitize(string(fields.Message), 500)
				}
			}
		}
		issues = append(issues, is)
	}
	return issues, true
}

func issuePath(path []json.RawMessage, n int) (int, string) {
	index := -1
	var b strings.Builder
	for k, el := range path {
		var num float64
		var str string
		switch {
		case json.Unmarshal(el, &num) == nil && num == math.Trunc(num) && num >= 0 && num < 1e9:
			if k == 0 {
				if int(num) < n {
					index = int(num)
				}
				continue
			}
			fmt.Fprintf(&b, "[%d]", int(num))
		case json.Unmarshal(el, &str) == nil:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(str)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(el)
		}
	}
	return index, sanitize(b.String(), 200)
}
