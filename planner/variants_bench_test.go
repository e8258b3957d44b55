package planner

import (
	"testing"

	"pushform/state"
)

// BenchmarkVariantsNoOp1M plans a notification in two variants with a
// holdout for a million users, all assigned and delivered: each target's
// assignment is read from the ledger.
func BenchmarkVariantsNoOp1M(b *testing.B) {
	m := variantNote(0)
	m.Targets.IDs = benchIDs(1_000_000)
	st := state.New("test")
	st.Compact = true
	p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	applied(b, st, p, now, delivered)
	in := Input{Config: cfgOf(m), State: st}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.HasChanges() {
			b.Fatalf("plan: %v, changes %v", err, p.Summary)
		}
	}
}
