package planner

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"pushform/config"
	"pushform/state"
	"pushform/state/statefile"
)

// compactCopy returns st as plan and apply read it: through a snapshot,
// decoded compact.
func compactCopy(t *testing.T, st *state.State) *state.State {
	t.Helper()
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, st); err != nil {
		t.Fatal(err)
	}
	c, err := statefile.DecodeCompact(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c.Serial = st.Serial // Encode does not bump it; keep the plans comparable
	return c
}

// TestCompactStatePlansAlike: a plan made from a compact state (sorted
// tables, what plan and apply read) is the plan made from the same state
// held in maps, over random histories and configurations, with the
// configured ids in order (the merge path) and out of order.
func TestCompactStatePlansAlike(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			universe := make([]string, 400+rng.IntN(400))
			for i := range universe {
				universe[i] = fmt.Sprintf("u%04d", i)
			}
			pick := func() []string {
				var ids []string
				for _, id := range universe {
					if rng.IntN(3) > 0 {
						ids = append(ids, id)
					}
				}
				if rng.IntN(3) == 0 {
					rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				}
				return ids
			}
			titles := []string{"A", "B"}
			tags := []string{"", "t1", "t2"}
			msgOf := func(addr string) *config.Message {
				return note(addr, titles[rng.IntN(2)], "body", tags[rng.IntN(3)], pick()...)
			}
			h := newHistory(t)
			outcomes := []state.Outcome{state.Delivered, state.Failed, state.Unknown, state.Skipped}
			for range 3 + rng.IntN(5) {
				m := msgOf(fmt.Sprintf("notification.n%d", rng.IntN(4)))
				ids := m.Targets.IDs
				for from := 0; from < len(ids); from += 100 {
					h.send(m, outcomes[rng.IntN(len(outcomes))], ids[from:min(from+100, len(ids))]...)
				}
			}
			var msgs []*config.Message
			for i := range 3 {
				if rng.IntN(4) > 0 {
					msgs = append(msgs, msgOf(fmt.Sprintf("notification.n%d", i)))
				}
			}
			cfg := cfgOf(msgs...)
			recipients := &state.Snapshot{FetchedAt: now, UserIDs: universe[:len(universe)/2]}
			opts := Options{Now: now, RetryUnknown: rng.IntN(3) == 0}
			if len(msgs) > 0 && rng.IntN(4) == 0 {
				opts.Replace = []string{msgs[0].Address}
			}
			want, werr := Make(Input{Config: cfg, State: h.st, Recipients: recipients}, opts)
			got, gerr := Make(Input{Config: cfg, State: compactCopy(t, h.st), Recipients: recipients}, opts)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("map state: %v; compact state: %v", werr, gerr)
			}
			if !reflect.DeepEqual(normalized(got), normalized(want)) {
				t.Errorf("plans differ:\ncompact %+v\nmap     %+v", got.Summary, want.Summary)
				for i := range min(len(got.Changes), len(want.Changes)) {
					if !reflect.DeepEqual(got.Changes[i], want.Changes[i]) {
						t.Errorf("change %d:\ncompact %+v\nmap     %+v", i, got.Changes[i], want.Changes[i])
					}
				}
			}
		})
	}
}

// normalized makes empty and nil lists alike, which no reader tells apart.
func normalized(p *Plan) *Plan {
	if p == nil {
		return nil
	}
	out := *p
	out.Changes = nil
	for _, c := range p.Changes {
		cc := *c
		for _, l := range []*[]string{&cc.Send, &cc.Forget, &cc.Held, &cc.Warnings} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		out.Changes = append(out.Changes, &cc)
	}
	return &out
}

// TestCompactStateLargeUnordered: ids in no order over a large compact
// state go through the finder's hash index and plan alike.
func TestCompactStateLargeUnordered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a state of 100,000 targets")
	}
	m := note("notification.a", "T", "B", "t")
	ids := ids(100_000, "u")
	m.Targets.IDs = ids
	st := recorded(m, state.Delivered, map[string]state.Outcome{ids[7]: state.Failed, ids[99_000]: state.Failed})
	shuffled := slices.Clone(ids[:90_000])
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	m.Targets.IDs = shuffled
	want, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Make(Input{Config: cfgOf(m), State: compactCopy(t, st)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalized(got), normalized(want)) {
		t.Errorf("plans differ: %+v vs %+v", got.Changes[0].Targets, want.Changes[0].Targets)
	}
	if c := got.Changes[0]; c.Targets.Retry != 1 || c.Targets.Forget != 10_000 {
		t.Errorf("targets %+v, want 1 retry and 10,000 forgotten", c.Targets)
	}
}
