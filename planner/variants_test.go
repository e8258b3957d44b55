package planner

import (
	"fmt"
	"testing"

	"pushform/config"
	"pushform/state"
)

func variantNote(n int) *config.Message {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%05d", i)
	}
	m := note("notification.spring", "", "", "spring", ids...)
	m.Salt = m.Address
	m.Variants = []config.Variant{
		{Name: "a", Weight: 3, Content: config.Content{Title: "Spring sale", Body: "20% off", Tag: "spring"}},
		{Name: "b", Weight: 1, Content: config.Content{Title: "20% off everything", Body: "Until Sunday", Tag: "spring"}},
	}
	m.Holdout = 0.1
	return m
}

// TestVariantsSplit: every target gets exactly one variant or the
// holdout, in about their shares; apply records the holdout, after which
// nothing changes; adding targets moves no one.
func TestVariantsSplit(t *testing.T) {
	m := variantNote(8000)
	p, err := Make(Input{Config: cfgOf(m)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[string]*Change{}
	for _, c := range p.Changes {
		byAddr[c.Address] = c
	}
	hold, a, b := byAddr["notification.spring.holdout"], byAddr["notification.spring.variant.a"], byAddr["notification.spring.variant.b"]
	if len(p.Changes) != 3 || hold == nil || a == nil || b == nil {
		t.Fatalf("changes: %v", byAddr)
	}
	if hold.Action != ActionHoldout || len(hold.Send) != 0 || a.Action != ActionCreate || a.Content.Title != "Spring sale" || b.Content.Title != "20% off everything" {
		t.Fatalf("holdout %s, a %s %q, b %q", hold.Action, a.Action, a.Content.Title, b.Content.Title)
	}
	if a.Variant == nil || a.Variant.Of != m.Address || a.Variant.Weight != 3 || a.Variant.Share != 0.675 || hold.Variant.Share != 0.1 {
		t.Errorf("variant info: %+v %+v", a.Variant, hold.Variant)
	}
	seen := map[string]string{}
	for _, c := range []*Change{hold, a, b} {
		ids := c.Send
		if c == hold {
			ids = c.Holdout
		}
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("%s in %s and %s", id, prev, c.Address)
			}
			seen[id] = c.Address
		}
	}
	if len(seen) != 8000 {
		t.Errorf("%d of 8000 targets assigned", len(seen))
	}
	for _, tc := range []struct {
		c    *Change
		n    int
		want float64
	}{{hold, len(hold.Holdout), 800}, {a, len(a.Send), 5400}, {b, len(b.Send), 1800}} {
		if float64(tc.n) < tc.want*0.9 || float64(tc.n) > tc.want*1.1 {
			t.Errorf("%s has %d, want about %v", tc.c.Address, tc.n, tc.want)
		}
	}
	if !p.HasChanges() {
		t.Error("a plan that records a holdout has no changes")
	}
	// Apply: the holdout is recorded, the variants delivered.
	st := state.New("test")
	for _, e := range p.RecordEntries(now) {
		if err := st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*Change{a, b} {
		record(st, &config.Message{Address: c.Address, Kind: c.Kind, Targets: config.Targets{Kind: c.TargetKind}}, &Plan{Changes: []*Change{c}}, now, delivered)
	}
	if ho := st.Messages["notification.spring.holdout"]; ho == nil || ho.TargetCount() != len(hold.Holdout) || ho.Target(hold.Holdout[0]).Outcome != state.Holdout {
		t.Fatalf("holdout recorded: %+v", ho)
	}
	p2, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil || p2.HasChanges() {
		t.Fatalf("after apply: %v %+v", err, p2.Summary)
	}
	// 2,000 more users: every earlier one keeps its variant.
	grown := variantNote(10000)
	p3, err := Make(Input{Config: cfgOf(grown), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p3.Changes {
		ids := append(append([]string{}, c.Send...), c.Holdout...)
		for _, id := range ids {
			if seen[id] != "" {
				t.Fatalf("%s moved from %s to %s", id, seen[id], c.Address)
			}
		}
		if len(c.Forget) > 0 {
			t.Errorf("%s forgets %d", c.Address, len(c.Forget))
		}
	}
}

// TestTargetVariant: --target names one variant (or the holdout).
func TestTargetVariant(t *testing.T) {
	m := variantNote(400)
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"notification.spring.variant.b", []string{"notification.spring.variant.b"}},
		{"notification.spring.holdout", []string{"notification.spring.holdout"}},
		{"notification.spring", []string{"notification.spring.holdout", "notification.spring.variant.a", "notification.spring.variant.b"}},
	} {
		p, err := Make(Input{Config: cfgOf(m)}, Options{Now: now, Targets: []string{tc.target}})
		if err != nil {
			t.Fatalf("--target %s: %v", tc.target, err)
		}
		var got []string
		for _, c := range p.Changes {
			got = append(got, c.Address)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("--target %s plans %v, want %v", tc.target, got, tc.want)
		}
	}
	if _, err := Make(Input{Config: cfgOf(m)}, Options{Now: now, Targets: []string{"notification.spring.variant.c"}}); err == nil {
		t.Error("--target of a variant that does not exist was accepted")
	}
}

// TestReplaceVariants: --replace of a notification with variants sends
// every variant again.
func TestReplaceVariants(t *testing.T) {
	m := variantNote(200)
	p, err := Make(Input{Config: cfgOf(m)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	st := state.New("test")
	for _, e := range p.RecordEntries(now) {
		if err := st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	sent := 0
	for _, c := range p.Changes {
		if c.Action != ActionHoldout {
			record(st, &config.Message{Address: c.Address, Kind: c.Kind, Targets: config.Targets{Kind: c.TargetKind}}, &Plan{Changes: []*Change{c}}, now, delivered)
			sent += len(c.Send)
		}
	}
	p, err = Make(Input{Config: cfgOf(m), State: st}, Options{Now: now, Replace: []string{"notification.spring"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Targets != sent {
		t.Errorf("--replace notification.spring sends %d targets, want the %d its variants reached", p.Summary.Targets, sent)
	}
}
