package operation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pushform/backend"
	"pushform/executor"
	"pushform/message"
	"pushform/state"
	"pushform/state/local"
)

// TestPersistAfterJournalFailure: when the journal failed but the state
// can still be saved, the outcomes the journal missed are saved with it,
// and nothing is left unrecorded (issue 16 item 4).
func TestPersistAfterJournalFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pushform.state")
	be, err := backend.OpenState(ctx, backend.StateOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := backend.Open(ctx, nil, be, backend.SessionOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rec, err := sess.Recorder("test")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ids := []string{"u1", "u2"}
	if err := rec.Record(state.Entry{Type: state.EntryIntent, Time: now, Items: []state.Item{{Address: "notification.n", Kind: "notification",
		TargetKind: "user_ids", Fingerprint: "fp", Content: &message.Content{Title: "T", Body: "B"}, Targets: ids}}}); err != nil {
		t.Fatal(err)
	}
	missed := state.Entry{Type: state.EntryOutcome, Time: now, RequestID: "req-1", Status: 200, Items: []state.Item{{Address: "notification.n",
		Fingerprint: "fp", Targets: ids, Outcomes: []*state.Target{{Outcome: state.Delivered}, {Outcome: state.Delivered}}}}}
	res := &executor.Result{Counts: executor.Counts{Delivered: 2}, JournalError: "writing the state journal: disk full",
		Unrecorded: &executor.Unrecorded{Counts: executor.Counts{Delivered: 2}, Entries: []state.Entry{missed}}}

	if err := persistAfterApply(sess, rec, res); err != nil {
		t.Fatal(err)
	}
	if res.Unrecorded != nil {
		t.Errorf("unrecorded after a successful save: %+v", res.Unrecorded)
	}
	st, err := local.NewFile(path).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if tg := st.Messages["notification.n"].Targets[id]; tg.Outcome != state.Delivered || tg.RequestID != "req-1" {
			t.Errorf("%s = %+v, want delivered by req-1", id, tg)
		}
	}
	if _, err := os.Stat(path + ".journal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal left after the save: %v", err)
	}
}
