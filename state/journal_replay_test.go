package state_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"pushform/state"
)

// TestJournalReplaysFullBatches is what a crash leaves: a journal (no
// snapshot since) of full requests, 500 targets each, whose outcomes are
// all alike, and a torn last line. The next run must read it back.
func TestJournalReplaysFullBatches(t *testing.T) {
	f := state.NewFile(filepath.Join(t.TempDir(), "pushform.state"))
	st := state.New("test")
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	content := &state.Content{Title: "T", Body: "B"}
	for b := range 3 {
		ids := make([]string, 500)
		outs := make([]state.Target, 500)
		for i := range ids {
			ids[i] = fmt.Sprintf("d%05d", b*500+i)
			outs[i] = state.Target{Outcome: state.Delivered, Fingerprint: "fp", RequestID: "req-1", Time: now, DeviceCount: 1}
		}
		intent := state.Entry{Type: state.EntryIntent, Batch: int64(b), Time: now,
			Items: []state.Item{{Address: "badge.b", Kind: "badge", TargetKind: "device_ids", Fingerprint: "fp", Content: content, Targets: ids}}}
		outcome := state.Entry{Type: state.EntryOutcome, Batch: int64(b), Time: now, RequestID: "req-1", Status: 200,
			Items: []state.Item{{Address: "badge.b", Fingerprint: "fp", Targets: ids, Outcomes: outs}}}
		if err := f.Append(intent); err != nil {
			t.Fatal(err)
		}
		if b < 2 { // the last request's answer never came
			if err := f.Append(outcome); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := state.NewFile(f.Path()).Read()
	if err != nil {
		t.Fatalf("reading back the journal of a crashed run: %v", err)
	}
	counts := map[state.Outcome]int{}
	for _, tg := range got.Messages["badge.b"].Targets {
		counts[tg.Outcome]++
	}
	if counts[state.Delivered] != 1000 || counts[state.Unknown] != 500 {
		t.Fatalf("outcomes %v, want 1000 delivered and 500 unknown", counts)
	}
}
