package statefile_test

import (
	"bytes"
	"slices"
	"testing"

	"pushform/state"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// TestIDReuseSameLines: lines written with an IDReuse are the very bytes
// written without one, whichever ids an outcome names: its intent's slice,
// a copy of it, the slice changed in place since, a list too short to keep,
// or an intent never seen; and intents beyond what is kept.
func TestIDReuseSameLines(t *testing.T) {
	intent, outcome := statetest.BatchEntries(3, 500)
	changed := func() []state.Entry {
		in, out := statetest.BatchEntries(4, 500)
		ids := slices.Clone(in.Items[0].Targets)
		in.Items[0].Targets, out.Items[0].Targets = ids, ids
		first := []state.Entry{in}
		ids[17] = "u9999999" // after the intent was written
		return append(first, out)
	}
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
		{"changed in place", changed},
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
				want, err := statefile.AppendEntryLine(nil, e, statefile.JournalFormat)
				if err != nil {
					t.Fatal(err)
				}
				got, err := statefile.AppendEntryLineReusing(nil, e, statefile.JournalFormat, &r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("entry %d (%s of batch %d): the line differs with reuse", i, e.Type, e.Batch)
				}
			}
		})
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
