package pushapi

import (
	"bytes"
	"errors"
	"fmt"
	"pushform/secret"
	"slices"
	"strings"
)

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

// The fast path. A service answers every entry in a few shapes, such as
// {"userId":"u0000001","status":"delivered","deviceCount":1}: keys in
// the spec's spelling, once each, plain ASCII strings, small counts.
// Reading those straight from the bytes costs a fraction of the
// tokenizer's way. An entry of any other shape is read by the general
// decoder (scanner.entry) from its start; anything else in the answer,
// and any error, sends the whole answer to the general path, so what is
// accepted and refused, and the errors, stay the general path's.

// fast reads a whole answer, {"results":[...]} or [...] of at least one
// and at most rd.most entries, that the general path reads without error.
// False leaves rd to be reset and the answer to the general path.
func (rd *resultsReader) fast(b []byte) bool {
	p := skipWS(b, 0)
	if p >= len(b) {
		return false
	}
	ok := false
	if b[p] != '{' {
		p, ok = rd.fastArray(b, p)
	} else {
		const key = `"results"`
		p = skipWS(b, p+1)
		if !bytes.HasPrefix(b[p:], []byte(key)) {
			return false
		}
		if p = skipWS(b, p+len(key)); p >= len(b) || b[p] != ':' {
			return false
		}
		if p, ok = rd.fastArray(b, skipWS(b, p+1)); ok {
			p = skipWS(b, p)
			ok = p < len(b) && b[p] == '}'
			p++
		}
	}
	return ok && skipWS(b, p) == len(b)
}

// fastArray reads the results array at b[p] and returns the offset past it.
func (rd *resultsReader) fastArray(b []byte, p int) (int, bool) {
	if p >= len(b) || b[p] != '[' {
		return 0, false
	}
	for {
		p = skipWS(b, p+1) // past '[' or ','
		if p >= len(b) || b[p] != '{' || rd.n >= rd.most {
			return 0, false // [] and too many entries: the general path's cases
		}
		e, exp, count := rd.slot()
		q, ok := fastDelivered(b, p, e, exp, count)
		if !ok {
			q, ok = fastEntry(b, p, e, exp, count)
		}
		if !ok {
			// An answer mostly of other shapes is the general path's
			// from the start: it reads them for less.
			if rd.slow++; rd.slow > 4 && rd.slow*4 > rd.n {
				return 0, false
			}
			*e.Result = Result{}
			*e = entry{Result: e.Result}
			if q, ok = rd.generalEntry(b, p, e, exp, count); !ok {
				return 0, false
			}
		}
		rd.done(e)
		if p = skipWS(b, q); p >= len(b) {
			return 0, false
		}
		switch b[p] {
		case ']':
			return p + 1, true
		case ',':
		default:
			return 0, false
		}
	}
}

// generalEntry reads the entry at b[p] with the general decoder and
// returns the offset past it; false on an error, which the general path
// is to report (at its offset in the answer).
func (rd *resultsReader) generalEntry(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	if rd.sub == nil {
		rd.sub = newScanner(b[p:])
	} else {
		rd.in = *bytes.NewBuffer(b[p:])
		rd.sub.reset(&rd.in)
	}
	if rd.sub.entry(e, exp, count) != nil {
		return 0, false
	}
	return p + int(rd.sub.dec.InputOffset()), true
}
