package pushapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Placing a send answer's entries on the targets of its request: in
// order, or by the target each echoes, and merging per-topic entries.

// target is one expected result of a send, in request order: a user id, a
// device id, or a topics object as a whole.
type target struct {
	notif  int32 // 32 bits keep a target in 48 bytes
	kind   byte  // 'u' user, 'd' device, 't' topics
	id     string
	topics []string
}

func targetsOf(batch []Notification) []target { return appendTargets(nil, batch) }

// appendTargets appends the targets of batch to ts.
func appendTargets(ts []target, batch []Notification) []target {
	n := 0
	for i := range batch {
		n += batch[i].Targets()
	}
	ts = slices.Grow(ts, n)
	for i := range batch {
		nt := &batch[i]
		for _, id := range nt.UserIDs {
			ts = append(ts, target{notif: int32(i), kind: 'u', id: id})
		}
		for _, id := range nt.DeviceIDs {
			ts = append(ts, target{notif: int32(i), kind: 'd', id: id})
		}
		if len(nt.Topics) > 0 {
			ts = append(ts, target{notif: int32(i), kind: 't', topics: nt.Topics})
		}
	}
	return ts
}

// perTopicEntries counts result entries when the service answers a topics object
// with one entry per topic rather than one for the array.
func perTopicEntries(ts []target) int {
	n := 0
	for i := range ts {
		if ts[i].kind == 't' {
			n += len(ts[i].topics)
		} else {
			n++
		}
	}
	return n
}

func (t *target) String() string {
	switch t.kind {
	case 'u':
		return fmt.Sprintf("userId %q", sanitize(t.id, 80))
	case 'd':
		return fmt.Sprintf("deviceId %q", sanitize(t.id, 80))
	}
	return fmt.Sprintf("topics %s", quoteList(t.topics))
}

func quoteList(ss []string) string {
	q := make([]string, 0, min(len(ss), 6))
	for i, s := range ss {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(ss)-5))
			break
		}
		q = append(q, strconv.Quote(sanitize(s, 40)))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ambiguous reports a target addressed by two notifications of the
// request whose result entries differ: an entry echoes only the target,
// and the spec promises no order, so which entry is whose cannot be told
// and no outcome may be guessed. (The executor never packs a target twice
// into one request; another caller may.)
func ambiguous(es []entry, ts []target) error {
	// Keys an entry can name: a user, a device, a whole topics array, and
	// one topic of an array answered one entry per topic.
	owner := make(map[string]int32, len(ts))
	var twice map[string]bool
	note := func(key string, notif int32) {
		if n, ok := owner[key]; !ok {
			owner[key] = notif
		} else if n != notif {
			if twice == nil {
				twice = map[string]bool{}
			}
			twice[key] = true
		}
	}
	for k := range ts {
		t := &ts[k]
		note(echoKey(t.kind, t.id, t.topics), t.notif)
		if t.kind == 't' && len(t.topics) > 1 {
			for _, name := range t.topics {
				note("1\x00"+name, t.notif)
			}
		}
	}
	if twice == nil {
		return nil
	}
	first := map[string]*entry{}
	for k := range es {
		e := &es[k]
		var keys []string
		switch {
		case e.echo&echoUser != 0:
			keys = []string{echoKey('u', e.UserID, nil)}
		case e.echo&echoDevice != 0:
			keys = []string{echoKey('d', e.DeviceID, nil)}
		case e.echo&echoTopics != 0 && len(e.Topics) != 1:
			keys = []string{echoKey('t', "", e.Topics)}
		case e.echo&echoTopic != 0:
			keys = []string{echoKey('t', "", []string{e.topic}), "1\x00" + e.topic}
		}
		for _, key := range keys {
			if !twice[key] {
				continue
			}
			if f := first[key]; f == nil {
				first[key] = e
			} else if !sameOutcome(f.Result, e.Result) {
				return fmt.Errorf("the request addressed %s in two notifications and their results differ: an entry echoes only the target and results come in no promised order, so which is whose cannot be told", e.describe())
			}
		}
	}
	return nil
}

// sameOutcome reports whether a and b say the same of their targets.
func sameOutcome(a, b *Result) bool {
	count := func(r *Result) int {
		if r.DeviceCount == nil {
			return -1
		}
		return *r.DeviceCount
	}
	since := func(r *Result) time.Time {
		if r.UnreachableSince == nil {
			return time.Time{}
		}
		return *r.UnreachableSince
	}
	return a.Outcome == b.Outcome && count(a) == count(b) && a.Reason == b.Reason && a.Message == b.Message && since(a).Equal(since(b)) &&
		a.Unreadable == b.Unreadable
}

// match places the n entries es decoded from an answer on the targets ts
// and returns one result per target. Entries are taken in order when their
// echoes (if any) agree with it, else placed by echo. A topics object may
// have one entry for the array or one per topic, merged into one result.
func match(es []entry, rs []Result, n int, ts []target) ([]Result, error) {
	whole, per := len(ts), perTopicEntries(ts)
	if n != whole && n != per {
		if whole == per {
			return nil, fmt.Errorf("%d results for %d targets", n, whole)
		}
		return nil, fmt.Errorf("%d results for %d targets (%d counting one per topic)", n, whole, per)
	}
	if n == whole && inOrder(es, ts) { // the usual answer: rs is the result
		for k := range ts {
			fillEcho(&rs[k], &ts[k])
		}
		return rs[:n:n], nil
	}
	flat := make([]Result, len(ts))
	if !matchInOrder(es, ts, flat, n == per && per != whole) {
		if err := matchByEcho(es, ts, flat); err != nil {
			return nil, err
		}
	}
	for k := range flat {
		fillEcho(&flat[k], &ts[k])
	}
	return flat, nil
}

// inOrder reports whether es, one per target, are in request order: each
// names its target or names none.
func inOrder(es []entry, ts []target) bool {
	for k := range es {
		if e := &es[k]; e.echo != 0 && !e.names(&ts[k]) {
			return false
		}
	}
	return true
}

// matchInOrder places es in request order; entries without an echo are
// taken where they stand. perTopic says what an echo-less entry at a topics
// object is: the first of one per topic, or the array's one.
func matchInOrder(es []entry, ts []target, flat []Result, perTopic bool) bool {
	k := 0
	for t := range ts {
		tg := &ts[t]
		if k >= len(es) {
			return false
		}
		e := &es[k]
		if tg.kind != 't' || e.wholeEcho(tg) || e.echo == 0 && (!perTopic || len(tg.topics) == 1) {
			if e.echo != 0 && !e.names(tg) {
				return false
			}
			flat[t] = *e.Result
			k++
			continue
		}
		m := len(tg.topics)
		if k+m > len(es) {
			return false
		}
		group := es[k : k+m]
		for j := range group {
			if g := &group[j]; g.echo != 0 && (g.echo&echoTopic == 0 || g.topic != tg.topics[j]) {
				return false
			}
		}
		flat[t] = mergeTopics(group)
		k += m
	}
	return k == len(es)
}

// matchByEcho places every entry by the target it names.
func matchByEcho(es []entry, ts []target, flat []Result) error {
	byKey := make(map[string][]int, len(ts)) // user, device, whole topics array -> targets
	byTopic := make(map[string][]int)        // one topic -> topics targets of several topics
	state := make([]int8, len(ts))           // 0 open, 1 placed whole, 2 taking per-topic entries
	groups := make(map[int][]entry)          // per-topic entries of a topics target
	for k := range ts {
		t := &ts[k]
		key := echoKey(t.kind, t.id, t.topics)
		byKey[key] = append(byKey[key], k)
		if t.kind == 't' && len(t.topics) > 1 {
			for _, name := range t.topics {
				byTopic[name] = append(byTopic[name], k)
			}
		}
	}
	pop := func(q map[string][]int, key string, want int8) (int, bool) {
		for len(q[key]) > 0 {
			t := q[key][0]
			q[key] = q[key][1:]
			if state[t] == 0 || state[t] == want {
				return t, true
			}
		}
		return 0, false
	}
	for k := range es {
		e := &es[k]
		var key string
		switch {
		case e.echo&echoUser != 0:
			key = echoKey('u', e.UserID, nil)
		case e.echo&echoDevice != 0:
			key = echoKey('d', e.DeviceID, nil)
		case e.echo&echoTopics != 0 && len(e.Topics) != 1:
			key = echoKey('t', "", e.Topics)
		case e.echo&echoTopic != 0:
			if t, ok := pop(byKey, echoKey('t', "", []string{e.topic}), -1); ok {
				state[t], flat[t] = 1, *e.Result // a topics object of one topic
				continue
			}
			t, ok := pop(byTopic, e.topic, 2)
			if !ok {
				return fmt.Errorf("result %d names a target not sent (or named twice): %s", k, e.describe())
			}
			state[t] = 2
			groups[t] = append(groups[t], *e)
			continue
		default:
			return fmt.Errorf("result %d names no target and results are out of order", k)
		}
		t, ok := pop(byKey, key, -1)
		if !ok {
			return fmt.Errorf("result %d names a target not sent (or named twice): %s", k, e.describe())
		}
		state[t], flat[t] = 1, *e.Result
	}
	for t := range ts {
		switch {
		case state[t] == 0:
			return fmt.Errorf("no result for %s", ts[t].String())
		case state[t] == 2 && len(groups[t]) != len(ts[t].topics):
			return fmt.Errorf("%d results for the %d topics of %s", len(groups[t]), len(ts[t].topics), ts[t].String())
		case state[t] == 2:
			g := groups[t] // in the order of the request's topics
			slices.SortStableFunc(g, func(a, b entry) int {
				return slices.Index(ts[t].topics, a.topic) - slices.Index(ts[t].topics, b.topic)
			})
			flat[t] = mergeTopics(g)
		}
	}
	return nil
}

// mergeTopics makes one result of the per-topic results of one topics
// object: delivered if any topic was (device counts summed when every one
// is known), else failed if any failed (with the first message), else
// skipped.
func mergeTopics(group []entry) Result {
	var failed, skipped *Result
	delivered, sum, known := false, 0, true
	for i := range group {
		r := group[i].Result
		switch r.Outcome {
		case OutcomeDelivered:
			delivered = true
			if r.DeviceCount == nil {
				known = false
			} else {
				sum += *r.DeviceCount
			}
		case OutcomeFailed:
			if failed == nil {
				failed = r
			}
		default:
			if skipped == nil {
				skipped = r
			}
		}
	}
	// What could not be read of any topic is kept.
	unread := ""
	for i := range group {
		if u := group[i].Unreadable; u != "" && !strings.Contains(unread, u) {
			unread = strings.TrimPrefix(unread+"; "+u, "; ")
		}
	}
	switch {
	case delivered:
		out := Result{Outcome: OutcomeDelivered, Unreadable: unread}
		if known {
			out.DeviceCount = &sum
		}
		return out
	case failed != nil:
		return Result{Outcome: OutcomeFailed, Message: failed.Message, Unreadable: unread}
	}
	out := Result{Outcome: OutcomeSkipped, Reason: skipped.Reason, Unreadable: unread}
	for i := range group {
		if u := group[i].UnreachableSince; u != nil {
			out.UnreachableSince = u
			break
		}
	}
	return out
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
		for end < len(ts) && int(ts[end].notif) == i {
			end++
		}
		out[i] = flat[start:end:end]
		start = end
	}
	return out
}
