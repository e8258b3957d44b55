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
