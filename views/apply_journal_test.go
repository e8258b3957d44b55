package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/state"
)

// journalFailedResult is a run stopped by a full disk: 1,000 targets
// delivered, 500 of them after the journal failed; 500 recorded as about
// to be sent and never sent; 1,500 never journaled.
func journalFailedResult() *executor.Result {
	return &executor.Result{Counts: executor.Counts{Delivered: 1000}, Requests: 2, NotStarted: 2000, Skipped: map[string]int{},
		JournalError: "writing the state journal: write /d/pushform.state.journal: no space left on device",
		Unrecorded: &executor.Unrecorded{Counts: executor.Counts{Delivered: 500}, NotSent: 500,
			Entries: []state.Entry{{Type: state.EntryOutcome, RequestID: "req-secret-entries"}}}}
}

// TestApplyHumanJournalFailure: the summary of a run whose journal failed
// says what was sent and what the state does not hold (issue 16 item 4).
func TestApplyHumanJournalFailure(t *testing.T) {
	var out, errb bytes.Buffer
	v := NewApplyHuman(&out, &errb, false, false, time.Now)
	p := &planner.Plan{}
	v.Start(p)
	v.Finish(p, journalFailedResult(), 1500*time.Millisecond, &config.Config{})
	want := "\nApply stopped (a write to the state journal failed): 1,000 delivered, 0 skipped, 0 failed, 0 unknown, in 2 requests (1.5s).\n" +
		"  not recorded: 500 targets answered (500 delivered, 0 skipped, 0 failed, 0 unknown); the state holds them as unknown\n" +
		"  not recorded: 500 targets never sent; the state holds them as unknown\n" +
		"  not sent: 1,500 targets\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestApplyJSONJournalFailure: the JSON summary carries the journal error
// and the unrecorded counts, not the entries.
func TestApplyJSONJournalFailure(t *testing.T) {
	var out bytes.Buffer
	v := NewApplyJSON(&out)
	v.Finish(&planner.Plan{}, journalFailedResult(), time.Second, &config.Config{})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var sum map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatal(err)
	}
	u, _ := sum["unrecorded"].(map[string]any)
	if sum["journal_error"] != journalFailedResult().JournalError || u["delivered"] != 500.0 || u["not_sent"] != 500.0 || sum["not_started"] != 2000.0 {
		t.Errorf("summary %s", lines[len(lines)-1])
	}
	if strings.Contains(out.String(), "req-secret-entries") {
		t.Error("the unrecorded entries are in the JSON")
	}
}
