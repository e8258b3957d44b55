package statefile_test

import (
	"bytes"
	"testing"

	"pushform/message"
	"pushform/state"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// delivered10M is the state after an apply delivered one notification to
// ten million users, as apply builds it (compact tables).
func delivered10M(b *testing.B) *state.State {
	b.Helper()
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	st := state.New("test")
	st.Compact = true
	for batch := range 20_000 {
		intent, outcome := statetest.BatchEntries(batch, 500)
		if err := st.ApplyEntry(intent); err != nil {
			b.Fatal(err)
		}
		if err := st.ApplyEntry(outcome); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkEncode10M writes the snapshot of ten million delivered targets:
// the final snapshot of `go run ./bench -scale 10`. Skipped with -short.
func BenchmarkEncode10M(b *testing.B) {
	st := delivered10M(b)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := statefile.Encode(&buf, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/10e6, "B/target")
}

// BenchmarkDecodeCompact10M reads that snapshot back as plan and apply do.
// Skipped with -short.
func BenchmarkDecodeCompact10M(b *testing.B) {
	st := delivered10M(b)
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, st); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := statefile.DecodeCompact(bytes.NewReader(data))
		if err != nil || len(got.Messages) != 1 {
			b.Fatalf("decode: %v", err)
		}
	}
}

// BenchmarkTargetHistory10M reads the snapshot of ten million delivered
// targets and one user's history from it, as pushform history --user
// does (issue 21: under a second). Skipped with -short.
func BenchmarkTargetHistory10M(b *testing.B) {
	st := delivered10M(b)
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, st); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var id string
	for a := range st.Messages {
		ids, _ := st.Messages[a].SortedTargets()
		id = ids[len(ids)/2]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := statefile.DecodeCompact(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if h := got.TargetHistory(message.TargetUsers, id); len(h) != 1 {
			b.Fatalf("history of %s: %+v", id, h)
		}
	}
}

// BenchmarkEntryLine encodes the intent and the outcome journal lines of
// one request of 500 users, as apply writes them.
func BenchmarkEntryLine(b *testing.B) {
	intent, outcome := statetest.BatchEntries(7, 500)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = statefile.AppendEntryLine(buf[:0], intent, statefile.JournalFormat); err != nil {
			b.Fatal(err)
		}
		if buf, err = statefile.AppendEntryLine(buf, outcome, statefile.JournalFormat); err != nil {
			b.Fatal(err)
		}
	}
}
