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

// BenchmarkRename1M plans a rename with an edit of a million-user
// notification without a moved block: the forget and the create are
// paired (the ledger finds no target that has the edited content).
func BenchmarkRename1M(b *testing.B) {
	users := benchIDs(1_000_000)
	old := note("notification.welcome", "Welcome", "Hello", "", users...)
	renamed := note("notification.welcome_v2", "Welcome", "Hello!", "", users...)
	in := Input{Config: cfgOf(renamed), State: recorded(old, state.Delivered, nil)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || len(p.Renames) != 1 {
			b.Fatalf("plan: %v, %v", err, p.Renames)
		}
	}
}

// BenchmarkReAdd1M plans a million-user notification forgotten and put
// back: the ledger finds every target already has it.
func BenchmarkReAdd1M(b *testing.B) {
	users := benchIDs(1_000_000)
	m := note("notification.welcome", "Welcome", "Hello", "", users...)
	st := compactDelivered(b, m)
	if err := st.ApplyEntry(state.Entry{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: m.Address}}}); err != nil {
		b.Fatal(err)
	}
	in := Input{Config: cfgOf(m), State: st}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.AlreadyDeliveredTargets != 1_000_000 || p.Summary.Requests != 0 {
			b.Fatalf("plan: %v, %+v", err, p.Summary)
		}
	}
}

// compactDelivered returns the state plan and apply read (compact tables)
// after m was delivered to every one of its targets, folded from the
// entries apply journals, 500 targets a request.
func compactDelivered(b *testing.B, m *config.Message) *state.State {
	b.Helper()
	st := state.New("test")
	st.Compact = true
	fp := Fingerprint(m.Kind, m.Content)
	ids := m.Targets.IDs
	outs := make([]*state.Target, 500)
	rec := &state.Target{Outcome: state.Delivered, DeviceCount: 1} // apply shares one record among equal outcomes
	for i := range outs {
		outs[i] = rec
	}
	for batch, from := 0, 0; from < len(ids); batch, from = batch+1, from+500 {
		part := ids[from:min(from+500, len(ids))]
		content := m.Content
		intent := state.Entry{Type: state.EntryIntent, Batch: int64(batch), Time: now,
			Items: []state.Item{{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: &content, Targets: part}}}
		outcome := state.Entry{Type: state.EntryOutcome, Batch: int64(batch), Time: now, RequestID: fmt.Sprintf("req-%d", batch), Status: 200,
			Items: []state.Item{{Address: m.Address, Fingerprint: fp, Targets: part, Outcomes: outs[:len(part)]}}}
		if err := st.ApplyEntry(intent); err != nil {
			b.Fatal(err)
		}
		if err := st.ApplyEntry(outcome); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkNoOp10M plans a campaign of ten million users, all delivered,
// over a compact state: the no-op plan of `go run ./bench -scale 10`
// without reading the files. Skipped with -short.
func BenchmarkNoOp10M(b *testing.B) {
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(10_000_000)...)
	in := Input{Config: cfgOf(m), State: compactDelivered(b, m)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.HasChanges() {
			b.Fatalf("plan: %v, changes %v", err, p.Summary)
		}
	}
}

// BenchmarkCreate10M plans the first send of a ten-million-user campaign:
// 20,000 requests. Skipped with -short.
func BenchmarkCreate10M(b *testing.B) {
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(10_000_000)...)
	in := Input{Config: cfgOf(m)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.Requests != 20_000 {
			b.Fatalf("plan: %v, %d requests", err, p.Summary.Requests)
		}
	}
}

// BenchmarkRolloutFirstStage1M plans a million-user rollout's first
// stage (1%): the bucket walk over the million is what it adds to
// BenchmarkCreate10k's plan of the same 10,000 targets.
func BenchmarkRolloutFirstStage1M(b *testing.B) {
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(1_000_000)...)
	m.Salt = m.Address
	m.Rollout = &config.Rollout{Stages: []float64{0.01, 0.1, 1}, MaxFailureRate: -1}
	in := Input{Config: cfgOf(m)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Make(in, Options{Now: now})
		if err != nil || p.Summary.Targets < 9500 || p.Summary.Targets > 10500 {
			b.Fatalf("plan: %v, %d targets", err, p.Summary.Targets)
		}
	}
}

// BenchmarkCreate10k plans a plain send to 10,000 users.
func BenchmarkCreate10k(b *testing.B) {
	m := note("notification.announce", "Launch", "It is here", "launch", benchIDs(10_000)...)
	in := Input{Config: cfgOf(m)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Make(in, Options{Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}
