package state

import (
	"iter"
	"slices"
	"sort"
	"sync"
	"unsafe"
)

// The targets of a message are held in one of two ways. A Go map
// (Message.Targets) is what tests and small tools read and write directly.
// A compact table (sorted ids with their records, no hashing) is what plan
// and apply use: at ten million targets a map costs about 40 bytes and a
// cache miss a target for every insert and lookup, and its keys must be
// sorted again for every snapshot, while a table costs 24 bytes (often
// less: its ids may share the plan's list), is read and written in
// sequence, and is already in the snapshot's order. The accessor methods
// below work on both; code that may meet a compact state (see
// State.Compact) uses only them.

// Target returns the record of target id, or nil when m has none. It is
// safe for concurrent use with other readers.
func (m *Message) Target(id string) *Target {
	if m.table != nil {
		return m.table.get(id)
	}
	return m.Targets[id]
}

// TargetCount returns how many targets m records.
func (m *Message) TargetCount() int {
	if m.table != nil {
		return m.table.count()
	}
	return len(m.Targets)
}

// Compact reports whether m holds its targets in a compact table, with
// Message.Targets nil.
func (m *Message) Compact() bool { return m.table != nil }

// SortedTargets returns m's target ids in increasing order and, at the
// same index, their records. The slices belong to m (of a compact
// message) and must not be modified; they are valid until m changes.
func (m *Message) SortedTargets() (ids []string, recs []*Target) {
	if m.table != nil {
		return m.table.sorted()
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
// compact message, in no particular order otherwise.
func (m *Message) AllTargets() iter.Seq2[string, *Target] {
	return func(yield func(string, *Target) bool) {
		if m.table == nil {
			for id, t := range m.Targets {
				if !yield(id, t) {
					return
				}
			}
			return
		}
		ids, recs := m.table.sorted()
		for i, id := range ids {
			if !yield(id, recs[i]) {
				return
			}
		}
	}
}

// SetTarget records t for target id.
func (m *Message) SetTarget(id string, t *Target) {
	switch {
	case m.table != nil:
		m.table.set(id, t)
	case m.Targets == nil:
		m.Targets = map[string]*Target{id: t}
	default:
		m.Targets[id] = t
	}
}

// DeleteTarget removes target id.
func (m *Message) DeleteTarget(id string) {
	if m.table != nil {
		m.table.remove(id)
		return
	}
	delete(m.Targets, id)
}

// SetSortedTargets makes m compact, holding exactly ids (strictly
// increasing) with the records recs (parallel, none nil). m keeps both
// slices and never writes to ids: they may be shared with other readers.
// It panics when the lengths differ; the caller has checked the order.
func (m *Message) SetSortedTargets(ids []string, recs []*Target) {
	if len(ids) != len(recs) {
		panic("state: SetSortedTargets with ids and records of different lengths")
	}
	m.Targets = nil
	m.table = &targetTable{ids: ids, recs: recs, borrowed: true}
}

// makeCompact gives a new message m an empty table.
func (m *Message) makeCompact() {
	m.Targets = nil
	m.table = &targetTable{}
}

// updateTargets sets the record of each of ids to f(i, prev), where prev
// is the record it had (nil for none). Ids may repeat; a later one sees
// what f returned for an earlier one.
func (m *Message) updateTargets(ids []string, f func(i int, prev *Target) *Target) {
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
	hint  int
	last  string
	back  int // lookups that went backwards
	index map[string]int32
}

// Finder returns a TargetFinder over m's targets, valid until m changes.
func (m *Message) Finder() *TargetFinder {
	return &TargetFinder{m: m}
}

// indexAfter is how many backward lookups a finder over a table of at
// least indexFrom targets tolerates before it looks ids up in a hash index
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
		if i, ok := f.index[id]; ok {
			return t.recs[i]
		}
		return t.more[id]
	}
	if id < f.last {
		f.back++
		if f.back > indexAfter && len(t.ids) >= indexFrom {
			f.index = t.hashIndex()
			return f.Find(id)
		}
	}
	f.last = id
	i, ok := t.search(id, f.hint)
	f.hint = i
	if ok {
		return t.recs[i]
	}
	return t.more[id]
}

// targetTable holds targets sorted by id, each with its record; targets
// added out of order wait in more until there are enough to merge in.
type targetTable struct {
	ids  []string
	recs []*Target // parallel to ids; nil for a removed target
	dead int       // nil records in recs
	more map[string]*Target
	// borrowed: ids' backing array is not the table's (a plan's send
	// list, a decoded snapshot): it is never written, only extended in
	// place when the ids appended are the very elements that follow.
	borrowed bool
	hint     int // where the last write's search ended

	imu   sync.Mutex
	index map[string]int32 // id -> position in ids; nil until needed
}

// mergeAt is how many out-of-order targets wait in more before a merge:
// a share of the table, so merging stays linear overall.
func (t *targetTable) mergeAt() int { return max(4096, (len(t.ids)-t.dead)/2) }

func (t *targetTable) count() int { return len(t.ids) - t.dead + len(t.more) }

// search returns where id is, or would be inserted, in ids, starting from
// hint: a gallop forward when id comes after ids[hint], a binary search
// otherwise.
func (t *targetTable) search(id string, hint int) (int, bool) {
	ids := t.ids
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
	if i, ok := slices.BinarySearch(t.ids, id); ok {
		return t.recs[i]
	}
	return t.more[id]
}

// hashIndex returns the index of ids, building it on first use.
func (t *targetTable) hashIndex() map[string]int32 {
	t.imu.Lock()
	defer t.imu.Unlock()
	if t.index == nil {
		t.index = make(map[string]int32, len(t.ids))
		for i, id := range t.ids {
			t.index[id] = int32(i)
		}
	}
	return t.index
}

// changed drops what depends on the positions in ids.
func (t *targetTable) changed() {
	t.index = nil
}

func (t *targetTable) set(id string, rec *Target) {
	t.update([]string{id}, func(int, *Target) *Target { return rec })
}

func (t *targetTable) remove(id string) {
	i, ok := t.search(id, t.hint)
	t.hint = i
	if ok {
		if t.recs[i] != nil {
			t.recs[i] = nil
			t.dead++
		}
		return
	}
	delete(t.more, id)
}

// update sets each of ids to f(i, its record or nil). Ids that all come
// after the last one held, in increasing order, are appended without a
// search: the targets of an apply's requests usually do.
func (t *targetTable) update(ids []string, f func(i int, prev *Target) *Target) {
	if len(ids) == 0 {
		return
	}
	if len(t.more) == 0 && t.appendable(ids) {
		t.appendNew(ids, f)
		return
	}
	for i, id := range ids {
		j, ok := t.search(id, t.hint)
		t.hint = j
		switch {
		case ok:
			rec := f(i, t.recs[j])
			if t.recs[j] == nil {
				t.dead--
			}
			t.recs[j] = rec
		case len(t.more) == 0 && j == len(t.ids):
			t.appendNew(ids[i:i+1], func(int, *Target) *Target { return f(i, nil) })
		default:
			if t.more == nil {
				t.more = map[string]*Target{}
			}
			t.more[id] = f(i, t.more[id])
			if len(t.more) >= t.mergeAt() {
				t.merge()
			}
		}
	}
}

// appendable reports whether ids are strictly increasing and all after
// the last id held.
func (t *targetTable) appendable(ids []string) bool {
	if n := len(t.ids); n > 0 && ids[0] <= t.ids[n-1] {
		return false
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// appendNew appends ids, none of them held, with records f(i, nil).
func (t *targetTable) appendNew(ids []string, f func(i int, prev *Target) *Target) {
	n := len(t.ids)
	switch {
	case n == 0 && t.ids == nil:
		// Borrow the caller's list: an apply's requests are consecutive
		// pieces of one send list, which then grows in place below.
		t.ids, t.borrowed = ids, true
	case t.borrowed && cap(t.ids)-n >= len(ids) && unsafe.SliceData(ids) == &t.ids[:n+1][n]:
		t.ids = t.ids[:n+len(ids)]
	default:
		t.own(len(ids))
		t.ids = append(t.ids, ids...)
	}
	t.recs = slices.Grow(t.recs, len(ids))
	for i := range ids {
		t.recs = append(t.recs, f(i, nil))
	}
	t.hint = len(t.ids) - 1
	t.changed()
}

// own copies a borrowed ids into the table's own array, with room for
// extra more.
func (t *targetTable) own(extra int) {
	if !t.borrowed {
		return
	}
	n := len(t.ids)
	ids := make([]string, n, n+max(extra, n/4))
	copy(ids, t.ids)
	t.ids, t.borrowed = ids, false
}

// merge folds more into ids and drops removed targets, in place: those
// kept move left, then both sorted lists are merged from the back.
func (t *targetTable) merge() {
	if len(t.more) == 0 && t.dead == 0 {
		return
	}
	t.own(len(t.more))
	if t.dead > 0 {
		w := 0
		for i, r := range t.recs {
			if r != nil {
				t.ids[w], t.recs[w] = t.ids[i], r
				w++
			}
		}
		clear(t.ids[w:])
		clear(t.recs[w:])
		t.ids, t.recs, t.dead = t.ids[:w], t.recs[:w], 0
	}
	if k := len(t.more); k > 0 {
		keys := make([]string, 0, k)
		for id := range t.more {
			keys = append(keys, id)
		}
		slices.Sort(keys)
		i := len(t.ids) - 1
		t.ids = append(t.ids, make([]string, k)...)
		t.recs = append(t.recs, make([]*Target, k)...)
		for w, j := len(t.ids)-1, k-1; j >= 0; w-- {
			if i >= 0 && t.ids[i] > keys[j] {
				t.ids[w], t.recs[w] = t.ids[i], t.recs[i]
				i--
			} else {
				t.ids[w], t.recs[w] = keys[j], t.more[keys[j]]
				j--
			}
		}
		t.more = nil
	}
	t.hint = 0
	t.changed()
}

// sorted returns every target in id order.
func (t *targetTable) sorted() ([]string, []*Target) {
	t.merge()
	return t.ids, t.recs
}
