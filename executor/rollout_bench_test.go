package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/sandbox"
	"pushform/state"
)

// The rollout benchmarks plan and apply against the sandbox on loopback:
// a million-target rollout's first stage (1%, about 10,000 targets) must
// take at most 1.1x a plain 10,000-target send; the bucket walk over the
// million must not cost what a send costs. Compare:
//
//	go test ./executor -run - -bench 'Rollout1MFirstStage|PlainSend10k' -count 5

const benchKey = "k-bench"

// benchService starts a sandbox of a million users (u0000000..) and a
// client of it; latency delays each request, as a real service would.
func benchService(b *testing.B, latency time.Duration) *pushapi.Client {
	b.Helper()
	seed, diags := sandbox.ParseSeed("seed.hcl", []byte(`
api_key "k-bench" { environment = "test" }
user_range "u%07d" {
  count       = 1000000
  device      = "d%07d"
  environment = "test"
}
`))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	base, stop, err := sandbox.New(seed, sandbox.Options{Latency: latency}).Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stop() })
	c, err := pushapi.New(pushapi.Options{BaseURL: base, APIKey: benchKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchUsers(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	return ids
}

// planAndApply plans m from an empty state and applies the plan; it
// returns the targets sent. Each run sends new content (the title
// counts runs), so the sandbox's devices never replace anything twice.
func planAndApply(b *testing.B, c *pushapi.Client, m *config.Message) int {
	b.Helper()
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{m}}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	st := state.New("test")
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), c, Options{})
	if err != nil {
		b.Fatal(err)
	}
	_ = res
	return p.Summary.Targets
}

func benchMessage(ids []string) *config.Message {
	return &config.Message{Address: "notification.spring", Kind: config.KindNotification, Salt: "notification.spring",
		Targets: config.Targets{Kind: config.TargetUsers, IDs: ids}, Content: config.Content{Title: "Spring sale", Body: "20% off", Tag: "spring"}}
}

// BenchmarkRollout1MFirstStage plans a rollout of a million users and
// applies its first stage: 1%.
func BenchmarkRollout1MFirstStage(b *testing.B) { benchRollout(b, 0) }

// BenchmarkRollout1MFirstStageLatency50ms is the same against a service
// that answers in 50 ms, as go run ./bench measures apply.
func BenchmarkRollout1MFirstStageLatency50ms(b *testing.B) { benchRollout(b, 50*time.Millisecond) }

// BenchmarkPlainSend10k plans and applies a plain send to 10,000 users.
func BenchmarkPlainSend10k(b *testing.B) { benchPlain(b, 0) }

// BenchmarkPlainSend10kLatency50ms is the same against a 50 ms service.
func BenchmarkPlainSend10kLatency50ms(b *testing.B) { benchPlain(b, 50*time.Millisecond) }

func benchRollout(b *testing.B, latency time.Duration) {
	c := benchService(b, latency)
	m := benchMessage(benchUsers(1_000_000))
	m.Rollout = &config.Rollout{Stages: []float64{0.01, 0.1, 1}, Wait: time.Hour, MaxFailureRate: 0.02}
	sent := 0
	for b.Loop() {
		sent = planAndApply(b, c, m)
	}
	if sent < 9500 || sent > 10500 {
		b.Fatalf("the first stage sent %d targets", sent)
	}
	b.ReportMetric(float64(sent), "targets")
}

func benchPlain(b *testing.B, latency time.Duration) {
	c := benchService(b, latency)
	m := benchMessage(benchUsers(10_000))
	sent := 0
	for b.Loop() {
		sent = planAndApply(b, c, m)
	}
	b.ReportMetric(float64(sent), "targets")
}
