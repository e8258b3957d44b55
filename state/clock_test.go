package state

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

func TestLastDelivery(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		current map[string]*Target
		ledger  map[string]*Target
		want    time.Time
	}{
		{"none", nil, nil, time.Time{}},
		{"delivered", map[string]*Target{"u1": {Outcome: Delivered, Time: t0}}, nil, t0},
		{"unknown counts", map[string]*Target{"u1": {Outcome: Delivered, Time: t0}, "u2": {Outcome: Unknown, Time: t0.Add(time.Hour)}}, nil, t0.Add(time.Hour)},
		{"failed, skipped and already-delivered do not", map[string]*Target{
			"u1": {Outcome: Delivered, Time: t0}, "u2": {Outcome: Failed, Time: t0.Add(time.Hour)},
			"u3": {Outcome: Skipped, Time: t0.Add(time.Hour)}, "u4": {Outcome: AlreadyDelivered, Time: t0.Add(time.Hour)},
		}, nil, t0},
		{"forgotten deliveries count", map[string]*Target{"u1": {Outcome: Delivered, Time: t0}},
			map[string]*Target{"u9": {Outcome: Delivered, Time: t0.Add(2 * time.Hour)}}, t0.Add(2 * time.Hour)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New("test")
			if tt.current != nil {
				s.Messages["notification.a"] = &Message{Address: "notification.a", Targets: tt.current}
			}
			if tt.ledger != nil {
				s.Ledger = append(s.Ledger, &Message{Address: "notification.gone", Targets: tt.ledger, ForgottenAt: t0})
			}
			if got := s.LastDelivery(); !got.Equal(tt.want) {
				t.Errorf("LastDelivery %s, want %s", got, tt.want)
			}
			// The same with compact messages, as plan and apply read them.
			for _, m := range append(slices.Collect(maps.Values(s.Messages)), s.Ledger...) {
				ids := slices.Sorted(maps.Keys(m.Targets))
				recs := make([]*Target, len(ids))
				for i, id := range ids {
					recs[i] = m.Targets[id]
				}
				m.Targets = nil
				m.SetSortedTargets(ids, recs)
				if !m.Compact() {
					t.Fatal("not compact")
				}
			}
			if got := s.LastDelivery(); !got.Equal(tt.want) {
				t.Errorf("compact: LastDelivery %s, want %s", got, tt.want)
			}
		})
	}
	var nilState *State
	if !nilState.LastDelivery().IsZero() {
		t.Error("no state: a delivery")
	}
}

// BenchmarkLastDelivery1M: a million targets, a request's worth of 500
// sharing each record, as apply records them.
func BenchmarkLastDelivery1M(b *testing.B) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ids := make([]string, 1_000_000)
	recs := make([]*Target, len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
		if i%500 == 0 {
			recs[i] = &Target{Outcome: Delivered, Time: t0.Add(time.Duration(i) * time.Millisecond)}
		} else {
			recs[i] = recs[i-1]
		}
	}
	s := New("test")
	s.Compact = true
	m := &Message{Address: "notification.a"}
	m.SetSortedTargets(ids, recs)
	s.Messages[m.Address] = m
	b.ResetTimer()
	for range b.N {
		if s.LastDelivery().IsZero() {
			b.Fatal("none")
		}
	}
}
