package state

import (
	"iter"
	"maps"
	"slices"
	"sort"
	"sync"
)

// The targets of a message are held in one of two ways. A Go map
// (Message.Targets) is what tests and small tools read and write directly.
// A compact table (ids in order with their records, no hashing) is what
// plan and apply use: at ten million targets a map costs about 40 bytes
// and a cache miss a target for every insert and lookup, and its keys must
// be sorted again for every snapshot, while a table costs 24 bytes (its
// ids usually share the memory of the plan's or the snapshot's list), is
// read and written in sequence, and is already in the snapshot's order.
// The accessor methods below work on both; code that may meet a compact
// state (see State.Compact) uses only them.

// Target returns the record of target id, or nil when m has none. It is
// safe for concurrent use with other readers.
func (m *Message) Target(id string) *Target {
	m.ready()
	if m.table != nil {
		return m.table.get(id)
	}
	return m.Targets[id]
}

// TargetCount returns how many targets m records.
func (m *Message) TargetCount() int {
	if l := m.lazy; l != nil {
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if !done {
			return l.n
		}
	}
	if m.table != nil {
		return m.table.count()
	}
	return len(m.Targets)
}

// Compact reports whether m holds its targets in a compact table, with
// Message.Targets nil.
func (m *Message) Compact() bool { return m.table != nil || m.lazy != nil }

// SortedTargets returns m's target ids in increasing order and, at the
// same index, their records. The slices belong to m and must not be
// modified; they are valid until m changes. A compact message may have to
// gather its targets into one list first, which is a change: readers that
// share a message use AllTargets, which never does.
func (m *Message) SortedTargets() (ids []string, recs []*Target) {
	m.ready()
	if m.table != nil {
		return m.table.flat()
	}
	ids = make([]string, 0, len(m.Targets))
	for id := range m.Targets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	recs = make([]*Target, len(ids))
	for i, id := range ids {
		recs[i] = m.Targets[id]
	}
	return ids, recs
}

// AllTargets yields every target and its record: in id order for a
// compact message, in no particular order otherwise. It changes nothing:
// several goroutines may read a message at once this way.
func (m *Message) AllTargets() iter.Seq2[string, *Target] {
	m.ready()
	if m.table != nil {
		return m.table.all()
	}
	return func(yield func(string, *Target) bool) {
		for id, t := range m.Targets {
			if !yield(id, t) {
				return
			}
		}
	}
}

// TargetRuns is AllTargets for writers of millions of targets: a compact
// message's targets in increasing id order, a run at a time, each id with
// the number of its record in records at the same index. ok is false when
// m is not compact or holds targets outside its runs (removed ones, or
// ones set since it was gathered); AllTargets serves then. Like
// AllTargets, it never changes m; nothing yielded may be modified.
func (m *Message) TargetRuns() (runs iter.Seq2[[]string, []uint32], records []*Target, ok bool) {
	m.ready()
	t := m.table
	if t == nil || t.dead > 0 || len(t.more) > 0 {
		return nil, nil, false
	}
	return func(yield func([]string, []uint32) bool) {
		for _, seg := range t.segs {
			if !yield(seg.ids, seg.recs) {
				return
			}
		}
	}, t.records, true
}

// SetTarget records t for target id.
func (m *Message) SetTarget(id string, t *Target) {
	m.updateTargets([]string{id}, func(int, *Target) *Target { return t })
}

// DeleteTarget removes target id.
func (m *Message) DeleteTarget(id string) {
	m.ready()
	if m.table != nil {
		m.table.remove(id)
		return
	}
	delete(m.Targets, id)
}

// SetSortedTargets makes m compact, holding exactly ids (strictly
// increasing) with the records recs (parallel, none nil). m keeps both
// slices; it never writes to ids, which may be shared with other readers.
// It panics when the lengths differ; the caller has checked the order.
func (m *Message) SetSortedTargets(ids []string, recs []*Target) {
	if len(ids) != len(recs) {
		panic("state: SetSortedTargets with ids and records of different lengths")
	}
	m.Targets = nil
	m.table = &targetTable{}
	if len(ids) > 0 {
		m.table.segs = []segment{{ids: ids, recs: m.table.internAll(recs), borrowed: true}}
		m.table.n = len(ids)
	}
}

// SetSortedTargetsFunc is SetSortedTargets with the records given by fill,
// which calls set(i, rec) for every i of ids in order: a decoder then
// needs no list of ten million pointers on the side.
func (m *Message) SetSortedTargetsFunc(ids []string, fill func(set func(i int, rec *Target))) {
	t := &targetTable{}
	recs := make([]uint32, len(ids))
	fill(func(i int, rec *Target) { recs[i] = t.number(rec) })
	if len(ids) > 0 {
		t.segs = []segment{{ids: ids, recs: recs, borrowed: true}}
		t.n = len(ids)
	}
	m.Targets, m.table = nil, t
}

// makeCompact gives a new message m an empty table.
func (m *Message) makeCompact() {
	m.Targets = nil
	m.table = &targetTable{}
}

// updateTargets sets the record of each of ids to f(i, prev), where prev
// is the record it had (nil for none). Ids may repeat; a later one sees
// what f returned for an earlier one. A compact message may keep ids: the
// caller never writes to them.
func (m *Message) updateTargets(ids []string, f func(i int, prev *Target) *Target) {
	m.ready()
	if m.table != nil {
		m.table.update(ids, f)
		return
	}
	if m.Targets == nil {
		m.Targets = make(map[string]*Target, len(ids))
	}
	for i, id := range ids {
		m.Targets[id] = f(i, m.Targets[id])
	}
}

// TargetFinder looks up many targets of one message, fast when the ids
// asked for come in increasing order (a recipients list usually does):
// each lookup then starts where the last one ended. One finder is for one
// goroutine; several may read the same message at once.
type TargetFinder struct {
	m     *Message
	hint  pos
	last  string
	back  int // lookups that went backwards
	index map[string]pos
}

// Finder returns a TargetFinder over m's targets, valid until m changes.
func (m *Message) Finder() *TargetFinder {
	m.ready()
	return &TargetFinder{m: m}
}

// A finder over a table of at least indexFrom targets that has gone
// backwards more than indexAfter times looks ids up in a hash index
// instead (built once per table): ids in no order would otherwise cost a
// binary search each.
const (
	indexAfter = 4096
	indexFrom  = 1 << 16
)

// Find returns the record of target id, or nil.
func (f *TargetFinder) Find(id string) *Target {
	t := f.m.table
	if t == nil {
		return f.m.Targets[id]
	}
	if f.index != nil {
		if p, ok := f.index[id]; ok {
			return t.rec(p)
		}
		return t.more[id]
	}
	if id < f.last {
		f.back++
		if f.back > indexAfter && t.n >= indexFrom {
			f.index = t.hashIndex()
			return f.Find(id)
		}
	}
	f.last = id
	p, ok := t.search(id, f.hint)
	f.hint = p
	if ok {
		return t.rec(p)
	}
	return t.more[id]
}

// targetTable holds targets in segments: runs of ids in increasing order
// with their records, every id of a segment after every id of the one
// before. Apply's requests arrive as consecutive pieces of its send lists,
// and each becomes (or extends) a segment without copying its ids.
// Targets added out of order wait in more until there are enough to merge
// everything into one segment.
type targetTable struct {
	segs []segment
	n    int // ids in segs, removed ones included
	dead int // removed targets in segs (record 0)
	more map[string]*Target
	hint pos // where the last write's search ended

	// records are the distinct records of segs, by number (0 is none): a
	// segment holds numbers, not pointers, so ten million targets cost
	// 4 bytes each and nothing for the garbage collector to scan.
	records []*Target
	numbers map[*Target]uint32
	last    *Target // the record numbered last, and its number: most
	lastNo  uint32  // targets of a request share one

	imu   sync.Mutex
	index map[string]pos // id -> where; nil until needed
}

// segment is a run of ids in increasing order and the numbers of their
// records (0 for a removed target).
type segment struct {
	ids  []string
	recs []uint32
	// borrowed: ids' backing array is not the table's (a plan's send
	// list, a decoded snapshot): it is never written.
	borrowed bool
}

// pos is where an id is: segment s, index i in it.
type pos struct{ s, i int }

// mergeAt is how many out-of-order targets wait in more before a merge:
// a share of the table, so merging stays linear overall.
func (t *targetTable) mergeAt() int { return max(4096, (t.n-t.dead)/2) }

func (t *targetTable) count() int { return t.n - t.dead + len(t.more) }

// rec returns the record of the target at p.
func (t *targetTable) rec(p pos) *Target { return t.records[t.segs[p.s].recs[p.i]] }

// number returns r's number, numbering it when new; nil is 0.
func (t *targetTable) number(r *Target) uint32 {
	switch {
	case r == nil:
		return 0
	case r == t.last:
		return t.lastNo
	}
	no, ok := t.numbers[r]
	if !ok {
		if t.numbers == nil {
			t.numbers = map[*Target]uint32{}
			t.records = append(t.records, nil)
		}
		no = uint32(len(t.records))
		t.records = append(t.records, r)
		t.numbers[r] = no
	}
	t.last, t.lastNo = r, no
	return no
}

// internAll returns the numbers of recs.
func (t *targetTable) internAll(recs []*Target) []uint32 {
	out := make([]uint32, len(recs))
	for i, r := range recs {
		out[i] = t.number(r)
	}
	return out
}

// lastID is the greatest id in segs, "" when there is none.
func (t *targetTable) lastID() (string, bool) {
	if len(t.segs) == 0 {
		return "", false
	}
	ids := t.segs[len(t.segs)-1].ids
	return ids[len(ids)-1], true
}

// search returns where id is in segs, starting from hint; found is false
// when it is not there (p is then meaningless).
func (t *targetTable) search(id string, hint pos) (p pos, found bool) {
	if len(t.segs) == 0 {
		return pos{}, false
	}
	s := hint.s
	if s >= len(t.segs) {
		s = 0
	}
	seg := t.segs[s].ids
	switch {
	case id < seg[0]:
		s = t.segmentOf(id, 0, s)
		hint.i = 0
	case id > seg[len(seg)-1]:
		// Usually the next segment: apply's requests come in order.
		if s+1 < len(t.segs) && id <= t.segs[s+1].ids[len(t.segs[s+1].ids)-1] {
			s++
		} else {
			s = t.segmentOf(id, s+1, len(t.segs))
		}
		hint.i = 0
	default:
		if hint.s != s {
			hint.i = 0
		}
	}
	if s >= len(t.segs) {
		return pos{}, false
	}
	i, ok := gallop(t.segs[s].ids, id, hint.i)
	return pos{s, i}, ok
}

// segmentOf returns the first segment in [lo, hi) whose last id is not
// less than id; hi when there is none.
func (t *targetTable) segmentOf(id string, lo, hi int) int {
	return lo + sort.Search(hi-lo, func(k int) bool {
		ids := t.segs[lo+k].ids
		return ids[len(ids)-1] >= id
	})
}

// gallop returns where id is, or would go, in the increasing ids,
// starting from hint: forward in growing steps when id comes after
// ids[hint], a binary search before it.
func gallop(ids []string, id string, hint int) (int, bool) {
	lo, hi := 0, len(ids)
	if hint < len(ids) {
		switch h := ids[hint]; {
		case h == id:
			return hint, true
		case h < id:
			lo = hint + 1
			for step := 1; ; step *= 2 {
				probe := lo + step - 1
				if probe >= len(ids) {
					break
				}
				if ids[probe] >= id {
					hi = probe + 1
					break
				}
				lo = probe + 1
			}
		default:
			hi = hint
		}
	}
	i, ok := slices.BinarySearch(ids[lo:hi], id)
	return lo + i, ok
}

func (t *targetTable) get(id string) *Target {
	if s := t.segmentOf(id, 0, len(t.segs)); s < len(t.segs) {
		if i, ok := slices.BinarySearch(t.segs[s].ids, id); ok {
			return t.rec(pos{s, i})
		}
	}
	return t.more[id]
}

// hashIndex returns the index of segs, building it on first use.
func (t *targetTable) hashIndex() map[string]pos {
	t.imu.Lock()
	defer t.imu.Unlock()
	if t.index == nil {
		t.index = make(map[string]pos, t.n)
		for s, seg := range t.segs {
			for i, id := range seg.ids {
				t.index[id] = pos{s, i}
			}
		}
	}
	return t.index
}

func (t *targetTable) remove(id string) {
	p, ok := t.search(id, t.hint)
	if !ok {
		delete(t.more, id)
		return
	}
	t.hint = p
	if recs := t.segs[p.s].recs; recs[p.i] != 0 {
		recs[p.i] = 0
		t.dead++
	}
}

// update sets each of ids to f(i, its record or nil). Ids that all come
// after the last one held, in increasing order, are appended without a
// search: the targets of an apply's requests usually do. Ids that are a
// run of a segment (their outcomes, usually) are set where they are.
func (t *targetTable) update(ids []string, f func(i int, prev *Target) *Target) {
	if len(ids) == 0 {
		return
	}
	if len(t.more) == 0 && t.appendable(ids) {
		t.appendNew(ids, f)
		return
	}
	if p, ok := t.search(ids[0], t.hint); ok {
		if t.updateRun(p, ids, f) {
			return
		}
		t.hint = p // updateEach then finds ids[0] at once, not by a second search
	}
	t.updateEach(ids, f)
}

// updateRun is updateEach for ids that are, in order, the ids of the
// segment at p from p on: each is set where it is, with no search. It
// reports false, and changes nothing, for any other ids. FuzzUpdateRun
// holds it to updateEach.
func (t *targetTable) updateRun(p pos, ids []string, f func(i int, prev *Target) *Target) bool {
	seg := t.segs[p.s]
	if len(seg.ids)-p.i < len(ids) || !slices.Equal(seg.ids[p.i:p.i+len(ids)], ids) {
		return false
	}
	for i := range ids {
		t.set(pos{p.s, p.i + i}, i, f)
	}
	t.hint = pos{p.s, p.i + len(ids) - 1}
	return true
}

// updateEach is update one id at a time, each found by a search.
func (t *targetTable) updateEach(ids []string, f func(i int, prev *Target) *Target) {
	for i, id := range ids {
		p, ok := t.search(id, t.hint)
		if ok {
			t.hint = p
			t.set(p, i, f)
			continue
		}
		if last, any := t.lastID(); len(t.more) == 0 && (!any || id > last) {
			t.appendNew(ids[i:i+1], func(int, *Target) *Target { return f(i, nil) })
			continue
		}
		if t.more == nil {
			t.more = map[string]*Target{}
		}
		t.more[id] = f(i, t.more[id])
		if len(t.more) >= t.mergeAt() {
			t.merge()
		}
	}
}

// set sets the record at p to f(i, its record).
func (t *targetTable) set(p pos, i int, f func(i int, prev *Target) *Target) {
	recs := t.segs[p.s].recs
	old := recs[p.i]
	recs[p.i] = t.number(f(i, t.records[old]))
	switch {
	case old == 0 && recs[p.i] != 0:
		t.dead--
	case old != 0 && recs[p.i] == 0:
		t.dead++
	}
}

// appendable reports whether ids are strictly increasing and all after
// the last id held.
func (t *targetTable) appendable(ids []string) bool {
	if last, ok := t.lastID(); ok && ids[0] <= last {
		return false
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// borrowFrom is how many ids a new segment must have to borrow them
// rather than copy them into the last segment.
const borrowFrom = 64

// appendNew appends ids, increasing and after every id held, with records
// f(i, nil): as a new segment that borrows them, or by copying a few into
// the last segment.
func (t *targetTable) appendNew(ids []string, f func(i int, prev *Target) *Target) {
	var last *segment
	if k := len(t.segs); k > 0 {
		last = &t.segs[k-1]
	}
	switch {
	case len(ids) >= borrowFrom:
		// Only ids itself: the elements after them are not the table's
		// to read, so a request's ids are a segment of their own.
		t.segs = append(t.segs, segment{ids: slices.Clip(ids), borrowed: true})
		last = &t.segs[len(t.segs)-1]
	case last != nil && !last.borrowed:
		last.ids = append(last.ids, ids...)
	default:
		t.segs = append(t.segs, segment{ids: slices.Clone(ids)})
		last = &t.segs[len(t.segs)-1]
	}
	if cap(last.recs)-len(last.recs) < len(ids) {
		// Doubled up to a million: grown by append's quarter a request at
		// a time, the records of a long segment were copied over and over
		// into fresh memory (12 ms of a million-target apply, page faults
		// mostly). Past that, a quarter: ten million must fit in 1 GiB.
		last.recs = slices.Grow(last.recs, max(len(ids), min(len(last.recs), 1<<20)))
	}
	for i := range ids {
		last.recs = append(last.recs, t.number(f(i, nil)))
	}
	t.n += len(ids)
	t.hint = pos{len(t.segs) - 1, len(last.ids) - 1}
	t.index = nil
}

// merge gathers every segment and the targets waiting in more into one
// segment of the table's own, leaving out removed targets.
func (t *targetTable) merge() {
	n := t.count()
	ids, recs := make([]string, 0, n), make([]uint32, 0, n)
	for id, r := range t.all() {
		ids, recs = append(ids, id), append(recs, t.number(r))
	}
	t.segs, t.n, t.dead, t.more = nil, len(ids), 0, nil
	if len(ids) > 0 {
		t.segs = []segment{{ids: ids, recs: recs}}
	}
	t.hint = pos{}
	t.index = nil
}

// flat returns every target in id order as one list, and their records
// (a list of its own).
func (t *targetTable) flat() ([]string, []*Target) {
	if len(t.more) > 0 || t.dead > 0 || len(t.segs) > 1 {
		t.merge()
	}
	if len(t.segs) == 0 {
		return nil, nil
	}
	seg := t.segs[0]
	recs := make([]*Target, len(seg.recs))
	for i, r := range seg.recs {
		recs[i] = t.records[r]
	}
	return seg.ids, recs
}

// all yields every target in id order, those waiting in more merged in
// on the way: it changes nothing, so readers may share the table.
func (t *targetTable) all() iter.Seq2[string, *Target] {
	return func(yield func(string, *Target) bool) {
		keys := make([]string, 0, len(t.more))
		for id := range t.more {
			keys = append(keys, id)
		}
		slices.Sort(keys)
		k := 0
		for _, seg := range t.segs {
			for i, id := range seg.ids {
				r := seg.recs[i]
				if r == 0 {
					continue
				}
				for ; k < len(keys) && keys[k] < id; k++ {
					if !yield(keys[k], t.more[keys[k]]) {
						return
					}
				}
				if !yield(id, t.records[r]) {
					return
				}
			}
		}
		for ; k < len(keys); k++ {
			if !yield(keys[k], t.more[keys[k]]) {
				return
			}
		}
	}
}

// clone returns a copy of t to write to, sharing the ids, which neither
// writes.
func (t *targetTable) clone() *targetTable {
	c := &targetTable{n: t.n, dead: t.dead, more: maps.Clone(t.more), segs: make([]segment, len(t.segs)),
		records: slices.Clip(t.records), numbers: maps.Clone(t.numbers)}
	for i, sg := range t.segs {
		c.segs[i] = segment{ids: sg.ids, recs: slices.Clone(sg.recs), borrowed: true}
	}
	return c
}

// clone returns a copy of m to write to: its targets copied (the records
// themselves are never written, and are shared).
func (m *Message) clone() *Message {
	m.ready()
	c := *m
	c.lazy = nil
	c.EarlierTags = maps.Clone(m.EarlierTags)
	c.Targets = maps.Clone(m.Targets)
	if m.table != nil {
		c.table = m.table.clone()
	}
	return &c
}
