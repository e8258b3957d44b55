package planner

import (
	"fmt"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

func benchIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	return ids
}

// BenchmarkNoOp1M plans a campaign of a million users, all delivered: the
// plan every apply after the first makes.
func BenchmarkNoOp1M(b *testing.B) {
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(1_000_000)...)
	st := recorded(m, state.Delivered, nil)
	in := Input{Config: cfgOf(m), State: st}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.HasChanges() {
			b.Fatalf("plan: %v, changes %v", err, p.Summary)
		}
	}
}

// BenchmarkCreate1M plans the first send of a million-user campaign:
// every target new, 2,000 requests.
func BenchmarkCreate1M(b *testing.B) {
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(1_000_000)...)
	in := Input{Config: cfgOf(m)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.Requests != 2000 {
			b.Fatalf("plan: %v, %d requests", err, p.Summary.Requests)
		}
	}
}

// BenchmarkPack10k plans 10,000 one-user notifications, packed 500 a request.
func BenchmarkPack10k(b *testing.B) {
	var ms []*config.Message
	for i, id := range benchIDs(10_000) {
		ms = append(ms, note(fmt.Sprintf("notification.order[%q]", fmt.Sprint(i)), "Shipped", "Tomorrow", "order-"+id, id))
	}
	in := Input{Config: cfgOf(ms...)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.Requests != 20 {
			b.Fatalf("plan: %v, %d requests", err, p.Summary.Requests)
		}
	}
}

// BenchmarkFrequencyCap1M plans a second million-user notification under
// a cap of one a day, after a first delivered to all of them: the cap
// counts a million deliveries and holds a million targets back.
func BenchmarkFrequencyCap1M(b *testing.B) {
	users := benchIDs(1_000_000)
	first := note("notification.a_first", "Launch", "It is here", "launch", users...)
	second := note("notification.b_second", "Reminder", "Still here", "reminder", users...)
	cfg := cfgOf(first, second)
	cfg.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
	in := Input{Config: cfg, State: recorded(first, state.Delivered, nil)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.CappedTargets != 1_000_000 || p.Summary.Requests != 0 {
			b.Fatalf("plan: %v, %+v", err, p.Summary)
		}
	}
}

// BenchmarkRename1M plans a rename of a million-user notification without
// a moved block: the forget and the create are paired.
func BenchmarkRename1M(b *testing.B) {
	users := benchIDs(1_000_000)
	old := note("notification.welcome", "Welcome", "Hello", "", users...)
	renamed := note("notification.welcome_v2", "Welcome", "Hello", "", users...)
	in := Input{Config: cfgOf(renamed), State: recorded(old, state.Delivered, nil)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || len(p.Renames) != 1 {
			b.Fatalf("plan: %v, %v", err, p.Renames)
		}
	}
}
