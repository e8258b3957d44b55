package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestScheduleSendAfter runs apply the way a cron job does, at times given
// with --now (ahead of the real clock, as apply requires): before send_after the plan lists the notification as waiting
// and apply sends nothing for it; the first run after sends it; later runs
// send nothing, so it is delivered exactly once.
func TestScheduleSendAfter(t *testing.T) {
	sb := startSandbox(t, seed)
	_, at := aheadOfClock()
	launchAt := at(time.Hour)
	w := newWorkspace(t, sb, `
notification "launch" {
  user_ids   = ["alice", "bob"]
  title      = "We're live"
  body       = "The new shop is open"
  tag        = "launch"
  send_after = "`+launchAt+`"
}

notification "teaser" {
  user_ids = ["alice"]
  title    = "Something is coming"
  body     = "Watch this space"
  tag      = "teaser"
}
`)
	before, after, later := "--now="+at(time.Hour-time.Second), "--now="+launchAt, "--now="+at(2*time.Hour)

	p := w.planJSON(before)
	if action, targets := p.action("notification.launch"); action != "wait" || targets["waiting"] != 2 || targets["send"] != 0 {
		t.Fatalf("before send_after: launch %s %v, want wait with 2 waiting", action, targets)
	}
	if action, _ := p.action("notification.teaser"); action != "create" {
		t.Fatalf("teaser: %s, want create", action)
	}
	r := w.mustRun(0, "plan", before)
	if !strings.Contains(r.stdout, "… notification.launch waits until "+launchAt+": 2 users") ||
		!strings.Contains(r.stdout, "1 waiting") {
		t.Fatalf("plan before send_after:\n%s", r.stdout)
	}

	// Cron run 1, before the time: only the teaser goes out.
	r = w.apply(before)
	if !strings.Contains(r.stdout, "1 delivered") {
		t.Fatalf("first run:\n%s", r.stdout)
	}
	if d := sb.device("bob-phone"); d.Received != 0 {
		t.Fatalf("bob got %d notifications before send_after", d.Received)
	}
	if d := sb.device("alice-phone"); d.Received != 1 || d.Inbox[0].Title != "Something is coming" {
		t.Fatalf("alice-phone: %+v", d)
	}
	// A second run before the time sends nothing and says why.
	sent := sb.stats().SendRequests
	r = w.apply(before)
	if !strings.Contains(r.stdout, "1 address is waiting for send_after") || sb.stats().SendRequests != sent {
		t.Fatalf("run before send_after sent something:\n%s", r.stdout)
	}

	// Cron run at the time: the launch goes out.
	if action, targets := w.planJSON(after).action("notification.launch"); action != "create" || targets["send"] != 2 {
		t.Fatalf("at send_after: launch %s %v, want create", action, targets)
	}
	r = w.apply(after)
	if !strings.Contains(r.stdout, "2 delivered") {
		t.Fatalf("run at send_after:\n%s", r.stdout)
	}
	// Cron run an hour later: nothing new.
	sent = sb.stats().SendRequests
	r = w.apply(later)
	if !strings.Contains(r.stdout, "Nothing to send.") || sb.stats().SendRequests != sent {
		t.Fatalf("later run sent again:\n%s", r.stdout)
	}
	for dev, want := range map[string]int{"alice-phone": 2, "bob-phone": 1} {
		if d := sb.device(dev); d.Received != want {
			t.Errorf("%s received %d, want %d", dev, d.Received, want)
		}
	}
	if d := sb.device("bob-phone"); d.Inbox[0].Title != "We're live" {
		t.Errorf("bob-phone: %+v", d)
	}
}
