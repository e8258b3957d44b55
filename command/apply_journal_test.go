package command

import (
	"strings"
	"testing"

	"pushform/executor"
)

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
	// Saved after the failure (operation's persistAfterApply then clears
	// Unrecorded): everything is recorded.
	saved := &executor.Result{Counts: executor.Counts{Delivered: 2}, JournalError: "writing the state journal: disk full"}
	if msg := journalFailureMessage(saved, "DIR/pushform.state", true, true); !strings.Contains(msg, "was saved after the failure with every outcome this run received") || strings.Contains(msg, "Not recorded") {
		t.Errorf("message after a save:\n%s", msg)
	}
	// A database's error says what failed: no advice about disk space.
	got := journalFailureMessage(res, `PostgreSQL state "default" (schema pushform)`, false, false)
	if strings.Contains(got, "Free space") || !strings.HasSuffix(got, "  Fix what the error above names (the connection, the server, a lock), then review with pushform plan and apply again.") {
		t.Errorf("PostgreSQL advice:\n%s", got)
	}
}
