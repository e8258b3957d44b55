package local_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
	"pushform/state/local"
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
		Fingerprint: fp, Content: message.Content{Title: "Launch", Body: "It is here", Tag: "launch"},
		Targets: make(map[string]*state.Target, n),
	}
	for i := range n {
		batch := i / 500
		m.Targets[fmt.Sprintf("u%07d", i)] = &state.Target{
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
	f := local.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
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
	f := local.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
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

// batchEntries are the intent and outcome entries of one 500-target
// request, as apply journals them.
func batchEntries(batch int) (intent, outcome state.Entry) {
	ids := make([]string, 500)
	outs := make([]*state.Target, 500)
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	rec := &state.Target{Outcome: state.Delivered, Fingerprint: "fp", RequestID: "req-1", Time: t0, DeviceCount: 1} // apply shares one record among equal outcomes
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", batch*500+i)
		outs[i] = rec
	}
	content := message.Content{Title: "Launch", Body: "It is here", Tag: "launch"}
	intent = state.Entry{Type: state.EntryIntent, Batch: int64(batch), Time: t0,
		Items: []state.Item{{Address: "notification.a", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &content, Targets: ids}}}
	outcome = state.Entry{Type: state.EntryOutcome, Batch: int64(batch), Time: t0, RequestID: "req-1", Status: 200,
		Items: []state.Item{{Address: "notification.a", Fingerprint: "fp", Targets: ids, Outcomes: outs}}}
	return intent, outcome
}

// BenchmarkAppendParallel appends 500-target entries from 10 goroutines
// per core, as apply --parallelism 10 does: group commit lets them share
// fsyncs. journal-bytes/target is the journal's size per target.
func BenchmarkAppendParallel(b *testing.B) {
	f := local.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
	if err := f.Persist(state.New("test")); err != nil {
		b.Fatal(err)
	}
	appendPairsParallel(b, f)
	fi, err := os.Stat(f.JournalPath())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/float64(b.N*500), "journal-bytes/target")
	b.ReportMetric(float64(local.JournalSyncs(f))/float64(b.N), "fsyncs/request")
}

// BenchmarkAppendParallelLocked is BenchmarkAppendParallel as apply runs
// it, holding the lock: outcomes wait for the next intent's fsync.
// fsyncs/request is the journal fsyncs per intent and outcome pair.
func BenchmarkAppendParallelLocked(b *testing.B) {
	f := local.NewFile(filepath.Join(b.TempDir(), "pushform.state"))
	if err := f.Persist(state.New("test")); err != nil {
		b.Fatal(err)
	}
	id, err := f.Lock(context.Background(), state.LockInfo{Operation: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Unlock(id)
	appendPairsParallel(b, f)
	b.ReportMetric(float64(local.JournalSyncs(f))/float64(b.N), "fsyncs/request")
}

// appendPairsParallel appends b.N intent and outcome pairs to f from ten
// goroutines per core, timed.
func appendPairsParallel(b *testing.B, f *local.File) {
	intent, outcome := batchEntries(0)
	b.SetParallelism(10)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f.Append(intent); err != nil {
				b.Error(err)
				return
			}
			if err := f.Append(outcome); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
}
