package local_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
	"pushform/state/local"
)

// TestJournalReplaysFullBatches is what a crash leaves: a journal (no
// snapshot since) of full requests, 500 targets each, whose outcomes are
// all alike, and a torn last line. The next run must read it back.
func TestJournalReplaysFullBatches(t *testing.T) {
	f := local.NewFile(filepath.Join(t.TempDir(), "pushform.state"))
	st := state.New("test")
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	content := &message.Content{Title: "T", Body: "B"}
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
	got, err := local.NewFile(f.Path()).Read()
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

// TestJournalLeftByPersistIsNotExtended is a crash between Persist's rename
// and its removal of the journal: the journal left extends an older serial
// and is ignored. The next run's entries must not be appended to it, where
// they would be ignored too (and its sends made again).
func TestJournalLeftByPersistIsNotExtended(t *testing.T) {
	dir := t.TempDir()
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	st := state.New("test")
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	intent := func(addr string) state.Entry {
		return state.Entry{Type: state.EntryIntent, Time: now,
			Items: []state.Item{{Address: addr, Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &message.Content{Title: "T", Body: "B"}, Targets: []string{"u1"}}}}
	}
	if err := f.Append(intent("notification.first")); err != nil {
		t.Fatal(err)
	}
	journal, err := os.ReadFile(f.JournalPath())
	if err != nil {
		t.Fatal(err)
	}
	st, err = f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	// The crash: the journal is still there after the rename.
	if err := os.WriteFile(f.JournalPath(), journal, 0o600); err != nil {
		t.Fatal(err)
	}

	next := local.NewFile(f.Path())
	st, err = next.Read()
	if err != nil || st.Messages["notification.first"] == nil {
		t.Fatalf("read after the crash: %v", err)
	}
	if err := next.Append(intent("notification.second")); err != nil {
		t.Fatal(err)
	}
	got, err := local.NewFile(f.Path()).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages["notification.second"] == nil {
		t.Fatal("the entry appended after the crash was lost: it went into the stale journal")
	}
	if got.Messages["notification.first"] == nil {
		t.Fatal("the persisted entry was lost")
	}
}
