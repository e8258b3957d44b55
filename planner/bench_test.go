package planner

import (
	"fmt"
	"testing"

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
