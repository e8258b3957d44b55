package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sameTargets fails unless the compact message c holds what the map
// message m holds, through every accessor.
// flat also compares SortedTargets, which gathers the segments into one.
func sameTargets(t *testing.T, step string, c, m *Message, flat bool) {
	t.Helper()
	if c.TargetCount() != m.TargetCount() {
		t.Fatalf("%s: compact holds %d targets, map %d", step, c.TargetCount(), m.TargetCount())
	}
	if flat {
		cids, crecs := c.SortedTargets()
		mids, mrecs := m.SortedTargets()
		if !slices.Equal(cids, mids) || !slices.Equal(crecs, mrecs) {
			t.Fatalf("%s: sorted targets differ:\ncompact %v\nmap     %v", step, cids, mids)
		}
	}
	f := c.Finder()
	for id, rec := range m.Targets {
		if got := c.Target(id); got != rec {
			t.Fatalf("%s: Target(%q) = %v, want %v", step, id, got, rec)
		}
		if got := f.Find(id); got != rec {
			t.Fatalf("%s: Find(%q) = %v, want %v", step, id, got, rec)
		}
	}
	for _, id := range []string{"", "zzzz", "u-missing"} {
		if c.Target(id) != m.Target(id) {
			t.Fatalf("%s: Target(%q) differs", step, id)
		}
	}
	n := 0
	prev := ""
	for id, rec := range c.AllTargets() {
		if n > 0 && id <= prev {
			t.Fatalf("%s: AllTargets not in order: %q after %q", step, id, prev)
		}
		if m.Targets[id] != rec {
			t.Fatalf("%s: AllTargets gave %q = %v, want %v", step, id, rec, m.Targets[id])
		}
		prev = id
		n++
	}
}

// TestCompactTargetsMatchMap drives a compact message and a map message
// through the same random writes (appends in order, as apply makes them;
// rewrites; ids out of order; removals) and compares them after each.
func TestCompactTargetsMatchMap(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			recs := make([]*Target, 5)
			for i := range recs {
				recs[i] = &Target{Outcome: Delivered, RequestID: fmt.Sprint("r", i)}
			}
			c := &Message{}
			c.makeCompact()
			m := &Message{Targets: map[string]*Target{}}
			// A send list whose pieces the compact table may borrow.
			list := make([]string, 6000)
			for i := range list {
				list[i] = fmt.Sprintf("u%05d", i*2)
			}
			next, maxSegs := 0, 0
			for step := range 200 {
				name := fmt.Sprintf("step %d", step)
				rec := recs[rng.IntN(len(recs))]
				var ids []string
				op := rng.IntN(7)
				if step < 80 { // first as apply records: pieces of the list, and their outcomes
					op = rng.IntN(2) * 5
				}
				switch {
				case op <= 1 && next < len(list): // the next piece of the list
					k := min(1+rng.IntN(150), len(list)-next)
					ids = list[next : next+k]
					if rng.IntN(3) == 0 { // from another array: a new segment
						ids = slices.Clone(ids)
					}
					next += k
				case op == 2: // ids already held, or in between
					for range rng.IntN(30) {
						ids = append(ids, fmt.Sprintf("u%05d", rng.IntN(2*next+10)))
					}
				case op == 3: // removals
					for range rng.IntN(20) {
						id := fmt.Sprintf("u%05d", rng.IntN(2*next+10))
						c.DeleteTarget(id)
						m.DeleteTarget(id)
					}
				case op == 4: // single sets
					id := fmt.Sprintf("u%05d", rng.IntN(13000))
					c.SetTarget(id, rec)
					m.SetTarget(id, rec)
				case step < 80: // the outcomes of the last piece
					if next > 0 {
						ids = list[max(0, next-1-rng.IntN(100)):next]
					}
				case op == 6 && next > 0: // outcomes of an earlier piece, after removals and merges
					from := rng.IntN(next)
					ids = list[from:min(next, from+1+rng.IntN(120))]
				default: // a run in order, some new
					from := rng.IntN(2*next + 10)
					for i := range rng.IntN(50) {
						ids = append(ids, fmt.Sprintf("u%05d", from+i))
					}
				}
				if len(ids) > 0 {
					f := func(i int, prev *Target) *Target {
						if prev == recs[0] {
							return recs[1] // depends on what was there
						}
						return rec
					}
					c.updateTargets(ids, f)
					m.updateTargets(ids, f)
				}
				sameTargets(t, name, c, m, step%50 == 49)
				maxSegs = max(maxSegs, len(c.table.segs))
			}
			if maxSegs < 3 {
				t.Errorf("the table never held more than %d segments: the test misses the borrowing paths", maxSegs)
			}
			// The borrowed list was never written.
			for i, id := range list {
				if id != fmt.Sprintf("u%05d", i*2) {
					t.Fatalf("the send list was written: [%d] = %q", i, id)
				}
			}
		})
	}
}

// TestCompactTargetsBorrow: the consecutive pieces of one list, as an
// apply records them, are the table's runs, their ids not copied.
func TestCompactTargetsBorrow(t *testing.T) {
	list := make([]string, 2000)
	for i := range list {
		list[i] = fmt.Sprintf("u%05d", i)
	}
	rec := &Target{Outcome: Unknown}
	m := &Message{}
	m.makeCompact()
	for from := 0; from < len(list); from += 500 {
		m.updateTargets(list[from:from+500], func(int, *Target) *Target { return rec })
	}
	runs, _, ok := m.TargetRuns()
	if !ok {
		t.Fatal("no runs")
	}
	from := 0
	for ids := range runs {
		if &ids[0] != &list[from] || len(ids) != 500 {
			t.Errorf("the run from %d is a copy, or %d ids", from, len(ids))
		}
		from += len(ids)
	}
	// A write in the middle does not touch the list.
	m.DeleteTarget("u00100")
	m.SetTarget("u00100x", rec)
	ids, _ := m.SortedTargets()
	if &ids[0] == &list[0] || list[100] != "u00100" || list[101] != "u00101" || list[500] != "u00500" {
		t.Errorf("merging wrote to the borrowed list")
	}
	if m.TargetCount() != 2000 {
		t.Errorf("count %d, want 2000", m.TargetCount())
	}
}

// TestFinderUnordered: lookups in no order over a large table switch to a
// hash index and still find every target.
func TestFinderUnordered(t *testing.T) {
	n := indexFrom
	ids := make([]string, n)
	recs := make([]*Target, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%06d", i)
		recs[i] = &Target{DeviceCount: i}
	}
	m := &Message{}
	m.SetSortedTargets(ids, recs)
	f := m.Finder()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 * indexAfter {
		i := rng.IntN(n)
		if got := f.Find(ids[i]); got != recs[i] {
			t.Fatalf("Find(%q) = %v", ids[i], got)
		}
	}
	if f.index == nil {
		t.Error("no index after many lookups out of order")
	}
	if f.Find("nope") != nil {
		t.Error("found a target that is not there")
	}
}

// TestFork: entries applied to a fork leave the state it was made from as
// it was, and give what they give applied to that state itself; for
// compact and map states.
func TestFork(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprint("compact=", compact), func(t *testing.T) {
			build := func() *State {
				s := New("test")
				s.Compact = compact
				for _, e := range []Entry{
					intent("fp", "t", "u1", "u2", "u3"), outcome("r1", Delivered, "u1", "u2"),
					{Type: EntryIntent, Time: t0, Items: []Item{{Address: "b", Fingerprint: "fb", Targets: []string{"x1", "x2"}}}},
				} {
					if err := s.ApplyEntry(e); err != nil {
						t.Fatal(err)
					}
				}
				return s
			}
			entries := []Entry{
				intent("fp2", "t", "u2", "u4"), outcome("r2", Unknown, "u2", "u4"),
				{Type: EntryForget, Items: []Item{{Address: "a", Targets: []string{"u1"}}}},
				{Type: EntryMove, Items: []Item{{Address: "b", To: "c"}}},
				{Type: EntryOutcome, Time: t0, RequestID: "r3", Items: []Item{{Address: "c", Targets: []string{"x1"}, Outcomes: []*Target{{Outcome: Delivered}}}}},
				{Type: EntryForget, Items: []Item{{Address: "a"}}},
				{Type: EntrySnapshot, Time: t0},
			}
			orig, want := build(), build()
			before := dump(orig)
			f := orig.Fork()
			for i, e := range entries {
				if err := f.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
				if err := want.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
				if got := dump(orig); got != before {
					t.Fatalf("entry %d changed the state the fork was made from:\n%s\nwas\n%s", i, got, before)
				}
				if got, w := dump(f), dump(want); got != w {
					t.Fatalf("entry %d: fork\n%s\nwant\n%s", i, got, w)
				}
			}
		})
	}
}

// dump renders s's messages and targets in order.
func dump(s *State) string {
	var b []byte
	for _, addr := range s.Addresses() {
		m := s.Messages[addr]
		b = fmt.Appendf(b, "%s %s %v:", addr, m.Fingerprint, m.EarlierTags)
		ids := slices.Sorted(func(yield func(string) bool) {
			for id := range m.AllTargets() {
				if !yield(id) {
					return
				}
			}
		})
		for _, id := range ids {
			tg := m.Target(id)
			b = fmt.Appendf(b, " %s=%s/%s/%d", id, tg.Outcome, tg.Fingerprint, tg.Unanswered)
		}
		b = append(b, '\n')
	}
	return fmt.Sprintf("%s recipients=%v", b, s.Recipients != nil)
}

// FuzzUpdateRun: update, with its fast path for the ids of a run of a
// segment (updateRun), leaves a table as updateEach alone does, whatever
// the writes: pieces of a send list and the outcomes of earlier ones, equal
// ids in other memory, ids held in part or out of order, removals.
func FuzzUpdateRun(f *testing.F) {
	f.Add([]byte{0, 99, 0, 0, 120, 0, 1, 0, 99, 1, 10, 20, 2, 0, 99, 3, 5, 9, 4, 7, 0, 1, 0, 99})
	f.Add([]byte{0, 10, 1, 0, 10, 1, 1, 5, 3, 1, 0, 30, 4, 2, 0, 1, 0, 30, 2, 3, 40})
	f.Fuzz(func(t *testing.T, ops []byte) {
		list := make([]string, 700)
		for i := range list {
			list[i] = fmt.Sprintf("u%04d", i*2)
		}
		recs := []*Target{{Outcome: Delivered}, {Outcome: Failed}, {Outcome: Unknown}}
		fast, ref := &targetTable{}, &targetTable{}
		next := 0
		for k := 0; k+2 < len(ops); k += 3 {
			op, a, b := ops[k]%5, int(ops[k+1]), int(ops[k+2])
			var ids []string
			switch op {
			case 0: // the next piece of the list: long ones are borrowed
				n := min(a+1, len(list)-next)
				ids, next = list[next:next+n], next+n
			case 1: // ids of pieces already appended: their outcomes
				from := min(a*2, next)
				ids = list[from:min(next, from+b+1)]
			case 2: // the same, equal ids in other memory
				from := min(a*2, next)
				for _, id := range list[from:min(next, from+b+1)] {
					ids = append(ids, strings.Clone(id))
				}
			case 3: // ids held or not, in no order
				for i := range b % 40 {
					ids = append(ids, fmt.Sprintf("u%04d", (a*7+i*13)%1500))
				}
			case 4:
				id := fmt.Sprintf("u%04d", (a*5+b)%1500)
				fast.remove(id)
				ref.remove(id)
				continue
			}
			rec := recs[b%len(recs)]
			set := func(i int, prev *Target) *Target {
				if prev == recs[0] {
					return recs[1] // depends on what was there
				}
				return rec
			}
			fast.update(ids, set)
			if len(ids) > 0 && len(ref.more) == 0 && ref.appendable(ids) {
				ref.appendNew(ids, set)
			} else {
				ref.updateEach(ids, set)
			}
			if fast.count() != ref.count() {
				t.Fatalf("op %d: %d targets, want %d", k/3, fast.count(), ref.count())
			}
			for id, r := range ref.all() {
				if fast.get(id) != r {
					t.Fatalf("op %d: %s is %v, want %v", k/3, id, fast.get(id), r)
				}
			}
		}
	})
}
