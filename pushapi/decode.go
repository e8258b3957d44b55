package pushapi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"pushform/secret"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

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

// decodeSendResults decodes the body of a 200 or 207 send answer into
// per-notification results, one per user id, per device id and per topics
// object. An empty body (200 only) means every target was delivered with
// unknown device counts. Messages and reasons are redacted with red, all
// together in the order served, so a key split across them is found too.
// Its working memory comes from pool (nil: allocated afresh).
func decodeSendResults(pool *scratchPool, body []byte, status int, batch []Notification, red *secret.Redactor) ([][]Result, error) {
	return decodeResults(pool, nil, body, status, batch, red, true)
}

// decodeResults is decodeSendResults; fast tries the common shape first
// (off, the differential tests' reference). The results are written into
// mem's arrays (nil: fresh ones).
func decodeResults(pool *scratchPool, mem *resultMem, body []byte, status int, batch []Notification, red *secret.Redactor, fast bool) ([][]Result, error) {
	sc := pool.get()
	defer pool.put(sc)
	sc.ts = appendTargets(sc.ts[:0], batch)
	ts := sc.ts
	allDelivered := func() ([][]Result, error) {
		if status != 200 {
			return nil, fmt.Errorf("the %d answer lists no results: a 207 must list results", status)
		}
		flat := make([]Result, len(ts))
		for k := range ts {
			flat[k] = Result{Outcome: OutcomeDelivered}
			fillEcho(&flat[k], &ts[k])
		}
		return split(flat, ts, len(batch)), nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return allDelivered()
	}

	rd := newResultsReader(ts, sc, mem)
	if fast {
		if rd.fast(body) {
			return rd.finish(batch, red)
		}
		rd.reset()
	}
	s := newScanner(body)
	readResults := func() error {
		return s.array(func() error {
			e, exp, count := rd.slot()
			if err := s.entry(e, exp, count); err != nil {
				return fmt.Errorf("result %d: %w", rd.n, err)
			}
			rd.done(e)
			return nil
		})
	}
	switch s.peek() {
	case '[':
		if err := readResults(); err != nil {
			return nil, err
		}
	case '{':
		found, members := false, 0
		err := s.object(func(key []byte) error {
			members++
			if !bytes.EqualFold(key, []byte("results")) || found {
				return s.skip(1)
			}
			found = true
			if s.peek() != '[' {
				return fmt.Errorf("results is %s, want an array", s.kind())
			}
			return readResults()
		})
		if err != nil {
			return nil, err
		}
		switch {
		case members == 0 && s.eof():
			return allDelivered() // {}: the spec's empty 200
		case !found:
			return nil, errors.New(`the answer is an object without a "results" array`)
		case rd.n == 0 && s.eof() && len(ts) > 0:
			return allDelivered() // {"results": []}: as empty a 200
		}
	default:
		return nil, notJSON(s, body, "a results object or array")
	}
	if !s.eof() {
		return nil, s.errorf("data after the results")
	}
	return rd.finish(batch, red)
}

// resultsReader collects the entries of an answer: results, entries and
// device counts share backing arrays sized by the request.
type resultsReader struct {
	ts               []target
	rs               []Result
	es               []entry
	counts           []int // one backing array for DeviceCount pointers
	most             int   // entries kept; those past most are read and dropped
	n                int   // entries seen
	next, seenTopics int   // the target the next entry is expected for, to share its strings
	// The fast path's: the general decoder of its entries of other
	// shapes, its input, and how many it had.
	sub  *scanner
	in   bytes.Buffer
	slow int
}

// newResultsReader reads the entries for targets ts into mem's results
// (nil: fresh ones), the entries into sc's.
func newResultsReader(ts []target, sc *scratch, mem *resultMem) *resultsReader {
	most := perTopicEntries(ts)
	sc.es = slices.Grow(sc.es[:0], most)
	if mem == nil {
		mem = &resultMem{}
	}
	mem.size(most)
	return &resultsReader{ts: ts, rs: mem.rs, es: sc.es, counts: mem.counts, most: most}
}

// resultMem is the memory of one answer's results and device counts. A
// client lends it to the SendResponse decoded into it, and takes it back
// at SendResponse.Release: a 500-target answer's results are 60 KB, and
// a million targets' answers would otherwise be half of what apply
// allocates.
type resultMem struct {
	rs     []Result
	counts []int
}

// size makes room for n results, zero (a pooled mem is cleared).
func (m *resultMem) size(n int) {
	if cap(m.rs) < n || cap(m.counts) < n {
		m.rs, m.counts = make([]Result, n), make([]int, n)
		return
	}
	m.rs, m.counts = m.rs[:n], m.counts[:n]
}

// scratch is what decoding an answer needs only while it runs: the
// targets and the entries, kept for a later answer.
type scratch struct {
	ts []target
	es []entry
}

// maxPooledTargets bounds the scratch kept: the spec's requests have at
// most 500 targets, a larger one is a caller's exception.
const maxPooledTargets = 4096

// scratchPool recycles the scratch of a client's answers, and the memory
// of their results once released; a nil pool allocates afresh.
type scratchPool struct{ p, results sync.Pool }

func (p *scratchPool) get() *scratch {
	if p == nil {
		return &scratch{}
	}
	return fromPool[scratch](&p.p)
}

// fromPool takes a *T from pool, or a new one.
func fromPool[T any](pool *sync.Pool) *T {
	if v, ok := pool.Get().(*T); ok {
		return v
	}
	return new(T)
}

// put keeps sc, cleared so it holds on to no request or results.
func (p *scratchPool) put(sc *scratch) {
	if p == nil || cap(sc.ts) > maxPooledTargets || cap(sc.es) > maxPooledTargets {
		return
	}
	clear(sc.ts[:cap(sc.ts)])
	clear(sc.es[:cap(sc.es)])
	p.p.Put(sc)
}

// mem is memory for an answer's results.
func (p *scratchPool) mem() *resultMem {
	if p == nil {
		return &resultMem{}
	}
	return fromPool[resultMem](&p.results)
}

// putMem keeps m, cleared so it holds on to no strings of an answer.
func (p *scratchPool) putMem(m *resultMem) {
	if p == nil || cap(m.rs) > maxPooledTargets {
		return
	}
	clear(m.rs[:cap(m.rs)])
	clear(m.counts[:cap(m.counts)])
	p.results.Put(m)
}

// reset forgets the entries read, for reading the answer again.
func (rd *resultsReader) reset() {
	clear(rd.rs)
	rd.es = rd.es[:0]
	rd.n, rd.next, rd.seenTopics, rd.slow = 0, 0, 0, 0
}

// slot is where the next entry goes, the target it is expected for (nil
// past the end) and where its device count goes (nil past most).
func (rd *resultsReader) slot() (e *entry, exp *target, count *int) {
	exp = rd.expected()
	if rd.n < rd.most {
		rd.es = append(rd.es, entry{Result: &rd.rs[rd.n]})
		return &rd.es[rd.n], exp, &rd.counts[rd.n]
	}
	return &entry{Result: &Result{}}, exp, nil // read to report the count, then dropped
}

// done counts the entry e read into the last slot.
func (rd *resultsReader) done(e *entry) {
	rd.n++
	if exp := rd.expected(); exp != nil && exp.kind == 't' && e.echo&echoTopic != 0 && len(exp.topics) > 1 {
		if rd.seenTopics++; rd.seenTopics < len(exp.topics) {
			return
		}
	}
	rd.next, rd.seenTopics = rd.next+1, 0
}

func (rd *resultsReader) expected() *target {
	if rd.next < len(rd.ts) {
		return &rd.ts[rd.next]
	}
	return nil
}

// finish places the entries read on the targets of batch.
func (rd *resultsReader) finish(batch []Notification, red *secret.Redactor) ([][]Result, error) {
	redactTexts(rd.es, red)
	if len(batch) > 1 {
		if err := ambiguous(rd.es, rd.ts); err != nil {
			return nil, err
		}
	}
	flat, err := match(rd.es, rd.rs, rd.n, rd.ts)
	if err != nil {
		return nil, err
	}
	return split(flat, rd.ts, len(batch)), nil
}

// redactTexts redacts the messages, reasons and unreadable fields of es
// together, in the order served, so a key split across them is found too;
// then it cuts unreadable fields to MaxUnreadableBytes.
func redactTexts(es []entry, red *secret.Redactor) {
	if !red.Active() {
		cutUnreadable(es)
		return
	}
	// Most answers hold no text to redact: find the first entry with one
	// (taking the pair apart for every entry cost 14 ns an entry).
	first := slices.IndexFunc(es, func(e entry) bool {
		return e.Message != "" || e.Reason != "" && e.Reason != ReasonNoActiveDevice || e.Unreadable != ""
	})
	if first < 0 {
		return
	}
	var fields []*string
	for i := first; i < len(es); i++ {
		e := &es[i]
		triple := [3]*string{&e.Message, &e.Reason, &e.Unreadable}
		if e.reasonFirst {
			triple[0], triple[1] = triple[1], triple[0]
		}
		for _, f := range triple {
			if *f != "" && *f != ReasonNoActiveDevice {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) > 0 {
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = *f
		}
		red.Join(parts)
		for i, f := range fields {
			*f = parts[i]
		}
	}
	cutUnreadable(es[first:])
}

// cutUnreadable bounds the unreadable fields kept of es: they are the
// service's text, stored with every target that has them.
func cutUnreadable(es []entry) {
	for i := range es {
		if u := es[i].Unreadable; len(u) > MaxUnreadableBytes {
			es[i].Unreadable = strings.ToValidUTF8(u[:MaxUnreadableBytes-len("…")], "") + "…"
		}
	}
}

// notJSON says in plain words what a body that is not the JSON wanted is.
func notJSON(s *scanner, body []byte, want string) error {
	switch k := s.kind(); k {
	case "not JSON":
		if trimmed := bytes.TrimSpace(body); isHTML(trimmed, "") {
			if t := htmlTitle(trimmed); t != "" {
				return fmt.Errorf("the answer is not JSON (it looks like an HTML page: %q)", sanitize(t, 80))
			}
			return errors.New("the answer is not JSON (it looks like an HTML page)")
		}
		start := s.rest()
		return fmt.Errorf("the answer is not JSON (it starts with %q)", sanitize(string(start[:min(len(start), 24)]), 24))
	case "nothing":
		return errors.New("the answer is empty")
	default:
		return fmt.Errorf("the answer is %s, want %s", k, want)
	}
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

// epochMillisFrom is the magnitude from which an epoch number is taken
// for milliseconds rather than seconds.
const epochMillisFrom = 1e11

// timeOf reads a timestamp from the JSON value v (see strTime and
// epochTime); nil for null or a blank string.
func timeOf(v jsontext.Value, buf *[]byte) (*time.Time, error) {
	switch v.Kind() {
	case 'n':
		return nil, nil
	case '"':
		return strTime(unquoted(buf, v))
	case '0':
		return epochTime(v)
	}
	return nil, fmt.Errorf("not a time: %s", v.Kind())
}

// strTime reads the content of a timestamp string: RFC 3339 and the
// forms databases print, told apart from epoch seconds or milliseconds
// (see rfc3339ish); nil when blank.
func strTime(v []byte) (*time.Time, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, nil
	}
	if t, ok := rfc3339ish(v); ok {
		return &t, nil
	}
	return epochTime(v)
}

// rfc3339ish parses RFC 3339 (time.RFC3339Nano) and the forms around it
// a service may print: a space or a lower-case t between date and time,
// a lower-case z, and a numeric offset of hours only (+00, PostgreSQL's
// text form) or without a colon (+0000). A time without an offset is not
// read: its zone is not known.
func rfc3339ish(v []byte) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
		return t, true
	}
	// yyyy-mm-ddThh:mm:ss is 19 bytes; the offset is at least one.
	if len(v) < 20 || len(v) > 64 || v[4] != '-' || v[7] != '-' {
		return time.Time{}, false
	}
	var b [64]byte
	n := copy(b[:], v)
	s := b[:n]
	if c := s[10]; c == ' ' || c == 't' {
		s[10] = 'T'
	}
	if c := s[n-1]; c == 'z' {
		s[n-1] = 'Z'
	}
	// The offset: the last '+' or '-' after the time of day.
	if i := bytes.LastIndexAny(s[19:], "+-"); i >= 0 {
		i += 19
		off := s[i+1:]
		var fixed []byte
		switch {
		case len(off) == 2 && digits(off):
			fixed = append(append(s[:i+1:i+1], off...), ":00"...)
		case len(off) == 4 && digits(off):
			fixed = append(append(append(s[:i+1:i+1], off[:2]...), ':'), off[2:]...)
		}
		if fixed != nil {
			s = fixed
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	return t, err == nil
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// epochTime reads epoch seconds or milliseconds from the text of a number
// (or of a string that is not RFC 3339).
func epochTime(v []byte) (*time.Time, error) {
	n, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(n, 0) || math.Abs(n) > 1e15 {
		return nil, fmt.Errorf("neither RFC 3339 nor epoch seconds or milliseconds: %q", sanitize(string(v), 40))
	}
	// Seconds and milliseconds told apart by magnitude: 1e11 seconds is
	// the year 5138, 1e11 milliseconds is March 1973; a contact time is
	// between the two.
	ms := n
	if math.Abs(n) < epochMillisFrom {
		ms = n * 1000
	}
	t := time.UnixMilli(int64(ms)).UTC()
	return &t, nil
}
