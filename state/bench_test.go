package state_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pushform/state"
)

// bigState is one notification delivered to n users, in batches of 500 as
// apply sends them.
func bigState(n int) *state.State {
	s := state.New("production")
	sum := sha256.Sum256([]byte("content"))
	fp := hex.EncodeToString(sum[:])
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	m := &state.Message{
		Address: "campaign.launch.notification.announce", Kind: "notification", TargetKind: "user_ids",
		Fingerprint: fp, Content: state.Content{Title: "Launch", Body: "It is here", Tag: "launch"},
		Targets: make(map[string]state.Target, n),
	}
	for i := range n {
		batch := i / 500
		m.Targets[fmt.Sprintf("u%07d", i)] = state.Target{
			Outcome: state.Delivered, Fingerprint: fp, DeviceCount: 1,
			RequestID: fmt.Sprintf("req-%08d", batch), Time: t0.Add(time.Duration(batch) * 5 * time.Millisecond),
		}
	}
	s.Messages[m.Address] = m
	return s
}

func reportSize(b *testing.B, path string, targets int) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/float64(targets), "disk-bytes/target")
}

func BenchmarkPersist1M(b *testing.B) {
	const n = 1_000_000
	s := bigState(n)
	f := state.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Persist(s); err != nil {
			b.Fatal(err)
		}
	}
	reportSize(b, f.Path(), n)
}

func BenchmarkReadState1M(b *testing.B) {
	const n = 1_000_000
	f := state.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
	if err := f.Persist(bigState(n)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := f.Read()
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Messages["campaign.launch.notification.announce"].Targets) != n {
			b.Fatal("targets lost")
		}
	}
	reportSize(b, f.Path(), n)
}
