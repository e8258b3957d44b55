package statefile_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// TestIDReuseSameLines: lines written with an IDReuse are the very bytes
// written without one, whichever ids an outcome names: its intent's slice,
// a copy of it, fewer of them, a list too short to keep, or an intent
// never seen; and intents beyond what is kept.
func TestIDReuseSameLines(t *testing.T) {
	intent, outcome := statetest.BatchEntries(3, 500)
	tests := []struct {
		name    string
		entries func() []state.Entry
	}{
		{"its intent's slice", func() []state.Entry { return []state.Entry{intent, outcome} }},
		{"a copy of the ids", func() []state.Entry {
			out := outcome
			out.Items = []state.Item{outcome.Items[0]}
			out.Items[0].Targets = slices.Clone(outcome.Items[0].Targets)
			return []state.Entry{intent, out}
		}},
		{"a shorter slice of the same ids", func() []state.Entry {
			out := outcome
			out.Items = []state.Item{outcome.Items[0]}
			out.Items[0].Targets = outcome.Items[0].Targets[:400]
			out.Items[0].Outcomes = outcome.Items[0].Outcomes[:400]
			return []state.Entry{intent, out}
		}},
		{"short lists", func() []state.Entry {
			in, out := statetest.BatchEntries(5, 10)
			return []state.Entry{in, out}
		}},
		{"no intent", func() []state.Entry { return []state.Entry{outcome} }},
		{"answered twice", func() []state.Entry { return []state.Entry{intent, outcome, outcome} }},
		{"many intents in flight", func() []state.Entry {
			var ins, outs []state.Entry
			for b := range 600 {
				in, out := statetest.BatchEntries(b, 100)
				ins, outs = append(ins, in), append(outs, out)
			}
			slices.Reverse(outs)
			return append(ins, outs...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r statefile.IDReuse
			for i, e := range tt.entries() {
				sameLine(t, i, e, &r)
			}
		})
	}
}

// TestIDReuseChangedInPlace: an outcome naming its intent's ids, changed
// in place after the intent's line was written, gets a line of the ids it
// holds now, not the intent's encoding.
func TestIDReuseChangedInPlace(t *testing.T) {
	in, out := statetest.BatchEntries(4, 500)
	ids := slices.Clone(in.Items[0].Targets)
	in.Items[0].Targets, out.Items[0].Targets = ids, ids
	var r statefile.IDReuse
	if _, err := statefile.AppendEntryLineReusing(nil, in, statefile.JournalFormat, &r); err != nil {
		t.Fatal(err)
	}
	ids[17] = "u9999999"
	sameLine(t, 1, out, &r)
}

// sameLine fails unless e's journal line written with r is the one
// written without it; i numbers e for the message.
func sameLine(t *testing.T, i int, e state.Entry, r *statefile.IDReuse) {
	t.Helper()
	want, err := statefile.AppendEntryLine(nil, e, statefile.JournalFormat)
	if err != nil {
		t.Fatal(err)
	}
	got, err := statefile.AppendEntryLineReusing(nil, e, statefile.JournalFormat, r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("entry %d (%s of batch %d): the line differs with reuse", i, e.Type, e.Batch)
	}
}

// BenchmarkEntryLineReusing is BenchmarkEntryLine with the outcome's ids
// copied from the intent's line.
func BenchmarkEntryLineReusing(b *testing.B) {
	intent, outcome := statetest.BatchEntries(7, 500)
	var r statefile.IDReuse
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = statefile.AppendEntryLineReusing(buf[:0], intent, statefile.JournalFormat, &r); err != nil {
			b.Fatal(err)
		}
		if buf, err = statefile.AppendEntryLineReusing(buf, outcome, statefile.JournalFormat, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzIDReuse: every journal line written with an IDReuse is the line
// written without one, whatever the intents and outcomes (one or two
// items each) name: an intent's own ids, a copy, a copy with an id
// changed, its ids changed in place since, fewer of them, another
// request's, or ids no intent named; and other entries between.
func FuzzIDReuse(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 1, 0, 0, 2, 1, 1, 2, 1, 1, 2, 3})
	f.Add([]byte("010110")) // an intent's ids changed in place before its outcome
	f.Add([]byte{0, 3, 2, 0, 4, 0, 1, 4, 4, 1, 3, 2, 2, 0, 0, 1, 3, 5, 1, 9, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		base := make([]string, 2000)
		for i := range base {
			base[i] = fmt.Sprintf("u%07d", i)
		}
		at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		sent := map[int64][][]string{} // the ids of each request's items
		var r statefile.IDReuse
		for k := 0; k+2 < len(ops); k += 3 {
			kind, batch, v := ops[k]%3, int64(ops[k+1]%8), int(ops[k+2])
			items := 1 + v%2
			e := state.Entry{Batch: batch, Time: at, Items: make([]state.Item, items)}
			for i := range e.Items {
				e.Items[i].Address = fmt.Sprint("notification.n", i)
			}
			switch kind {
			case 0: // an intent: 40 to 300 ids of base
				e.Type = state.EntryIntent
				var lists [][]string
				for i := range e.Items {
					from := (int(batch)*250 + i*120 + v) % 1700
					ids := base[from : from+40+(v*7+i)%260 : from+300]
					e.Items[i].Targets = ids
					lists = append(lists, ids)
				}
				sent[batch] = lists
			case 1: // an outcome
				e.Type = state.EntryOutcome
				for i := range e.Items {
					var ids []string
					if lists := sent[batch]; i < len(lists) {
						ids = lists[i]
					}
					switch v / 2 % 7 {
					case 1:
						ids = slices.Clone(ids)
					case 2:
						if ids = slices.Clone(ids); len(ids) > 0 {
							ids[len(ids)/2] = "u9999999"
						}
					case 3:
						if len(ids) > 0 {
							ids[len(ids)/3] = "u8888888" // the intent's own, in place
						}
					case 4:
						ids = ids[:len(ids)*2/3]
					case 5:
						if lists := sent[(batch+1)%8]; len(lists) > 0 {
							ids = lists[0]
						}
					case 6:
						ids = base[v : v+100]
					}
					e.Items[i].Targets = ids
					rec := &state.Target{Outcome: state.Delivered}
					e.Items[i].Outcomes = make([]*state.Target, len(ids))
					for j := range ids {
						e.Items[i].Outcomes[j] = rec
					}
				}
			default: // another entry
				e.Type = []state.EntryType{state.EntryForget, state.EntrySnapshot}[v%2]
				e.Items = []state.Item{{Address: "notification.n0", Targets: base[v : v+80]}}
			}
			sameLine(t, k/3, e, &r)
		}
	})
}
