package views

import (
	"strings"
	"testing"

	"pushform/planner"
)

// TestAwaitingReview: a scheduled plan lists what it left for review, and
// its summary says so instead of "No changes".
func TestAwaitingReview(t *testing.T) {
	p := &planner.Plan{AwaitingReview: []planner.Review{
		{Address: "notification.news", Action: planner.ActionCreate, Why: "new address"},
		{Address: "notification.old\x1b[2J", Action: planner.ActionForget, Why: "forget"},
	}}
	var b strings.Builder
	if err := NewPlanHuman(&b, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	want := "\nAwaiting review (apply --scheduled applies only what a reviewed apply accepted):\n" +
		"  + notification.news: new address\n" +
		"  - notification.old\\x1b[2J: forget\n" +
		"\nNothing released: every change awaits review.\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// TestSummaryRecordsTagOnly: a plan whose only change is a tag-only one
// apply records says so in its summary line.
func TestSummaryRecordsTagOnly(t *testing.T) {
	p := &planner.Plan{Changes: []*planner.Change{{Address: "notification.promo", Action: planner.ActionNoOp, Accept: true,
		Targets: planner.TargetCounts{Total: 1, TagOnly: 1}}}}
	want := "Plan: 0 to create, 0 to replace, 1 to record (tag only), 0 to forget; 0 targets in 0 requests."
	if got := SummaryLine(p); got != want {
		t.Errorf("SummaryLine = %q, want %q", got, want)
	}
}
