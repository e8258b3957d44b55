package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
		Fingerprint: "fp", Targets: ids, Outcomes: []state.Target{{Outcome: state.Delivered}, {Outcome: state.Delivered}}}}}
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
	msg := journalFailureMessage(res, path, true, true)
	if !strings.Contains(msg, "was saved after the failure with every outcome this run received") || strings.Contains(msg, "Not recorded") {
		t.Errorf("message after a save:\n%s", msg)
	}
}

// TestJournalFailureMessage: what is durable and what the next plan does,
// when the state could not be saved either.
func TestJournalFailureMessage(t *testing.T) {
	res := &executor.Result{NotStarted: 1500, Unrecorded: &executor.Unrecorded{Counts: executor.Counts{Delivered: 999, Unknown: 1}, NotSent: 500}}
	want := "  Recorded: every intent and outcome whose journal write succeeded; they are in the journal of DIR/pushform.state, which the next run reads back.\n" +
		"  Not recorded: the outcomes of 1,000 targets (999 delivered, 1 unknown): their answers arrived, but writing them to the journal failed. " +
		"The next plan treats them as unknown: tagged ones and badges are sent again (devices replace them), untagged ones are held (--retry-unknown sends them).\n" +
		"  Not recorded: 500 targets of requests recorded as about to be sent were never sent, and the journal could not record that either; " +
		"the next plan treats them as unknown too, as after a crash.\n" +
		"  Not sent: 1,000 targets; the next plan sends them.\n" +
		"  Free space where the state is kept (or fix the error above), then review with pushform plan and apply again."
	if got := journalFailureMessage(res, "DIR/pushform.state", false, true); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A database's error says what failed: no advice about disk space.
	got := journalFailureMessage(res, `PostgreSQL state "default" (schema pushform)`, false, false)
	if strings.Contains(got, "Free space") || !strings.HasSuffix(got, "  Fix what the error above names (the connection, the server, a lock), then review with pushform plan and apply again.") {
		t.Errorf("PostgreSQL advice:\n%s", got)
	}
}
