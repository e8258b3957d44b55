package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScheduleSendAfter runs apply the way a cron job does, at times given
// with --now in the embedded sandbox: before send_after the plan lists the notification as waiting
// and apply sends nothing for it; the first run after sends it; later runs
// send nothing, so it is delivered exactly once.
func TestScheduleSendAfter(t *testing.T) {
	sb := startEmbedded(t, seed)
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
	sent := sb.requests()
	r = w.apply(before)
	if !strings.Contains(r.stdout, "1 address is waiting for send_after") || sb.requests() != sent {
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
	sent = sb.requests()
	r = w.apply(later)
	if !strings.Contains(r.stdout, "Nothing to send.") || sb.requests() != sent {
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

// TestApplyScheduled: the cron job's apply --scheduled after a merge whose
// reviewed apply has not run sends nothing of it (a new notification, an
// edited one, one waiting for its send_after that no review accepted), lists them
// and exits 4; after the reviewed apply, the send_after that comes due is
// sent by --scheduled (exit 4 still while a later merge awaits review),
// and once that is reviewed the next run has nothing to do.
func TestApplyScheduled(t *testing.T) {
	sb := startEmbedded(t, seed)
	const welcome = `
notification "welcome" {
  user_ids = ["alice", "bob"]
  title    = "Welcome"
  body     = "%s"
  tag      = "welcome"
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(welcome, "Glad you are here"))
	const before, after = "--now=2026-12-01T08:00:00Z", "--now=2026-12-01T10:00:00Z"
	w.apply(before)
	if d := sb.device("bob-phone"); d.Received != 1 {
		t.Fatalf("bob-phone received %d after the first apply", d.Received)
	}

	// The merge: welcome edited, a new notification, one waiting for 09:00.
	merged := fmt.Sprintf(welcome, "Glad you are here!") + `
notification "news" {
  user_ids = ["alice"]
  title    = "News"
  body     = "Something new"
}

notification "launch" {
  user_ids   = ["alice", "bob"]
  title      = "We're live"
  body       = "The shop is open"
  send_after = "2026-12-01T09:00:00Z"
}
`
	w.write(merged, sb)
	sent := sb.requests()
	// Twice at 08:00: the simulated clock never goes back, and the
	// reviewed apply below runs at 08:00 too (a run at 10:00 would move
	// it past the launch's send_after).
	for _, now := range []string{before, before} {
		r := w.mustRun(4, "apply", "--scheduled", now)
		for _, want := range []string{"Awaiting review", "notification.welcome: content changed", "notification.news: new address", "notification.launch: new address"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("apply --scheduled %s does not list %q:\n%s", now, want, r.stdout)
			}
		}
		if !strings.Contains(r.stderr, "3 changes await review and were not applied") || !strings.Contains(r.stderr, "exit code 4") {
			t.Errorf("apply --scheduled %s: stderr:\n%s", now, r.stderr)
		}
		if n := sb.requests() - sent; n != 0 {
			t.Fatalf("apply --scheduled %s sent %d requests of an unreviewed change", now, n)
		}
	}
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(w.mustRun(4, "apply", "--scheduled", "--json", before).stdout), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("apply --scheduled --json: %v: %s", err, line)
		}
		events = append(events, e)
	}
	if last := events[len(events)-1]; last["type"] != "awaiting_review" || len(last["changes"].([]any)) != 3 {
		t.Errorf("apply --scheduled --json ends with %v", last)
	}

	// The reviewed apply at 08:00: welcome and news go out, launch waits.
	w.mustRun(0, "plan", before, "--out", "reviewed.plan")
	w.mustRun(0, "apply", "reviewed.plan")
	if d := sb.device("bob-phone"); len(d.Inbox) != 1 || d.Inbox[0].Body != "Glad you are here!" {
		t.Fatalf("bob-phone after the reviewed apply: %+v", d)
	}
	if d := sb.device("alice-phone"); d.Received != 3 || len(d.Inbox) != 2 {
		t.Fatalf("alice-phone after the reviewed apply: %+v, want the welcome replaced and the news", d)
	}
	sent = sb.requests()
	if r := w.mustRun(0, "apply", "--scheduled", before); !strings.Contains(r.stdout, "waiting for send_after") || sb.requests() != sent {
		t.Fatalf("apply --scheduled before 09:00:\n%s", r.stdout)
	}

	// Another merge, not reviewed yet. The cron run after 09:00 releases
	// the launch, once, and still exits 4 for the new notification.
	w.write(merged+`
notification "survey" {
  user_ids = ["bob"]
  title    = "Survey"
  body     = "Two questions"
}
`, sb)
	r := w.mustRun(4, "apply", "--scheduled", after)
	if !strings.Contains(r.stdout, "2 delivered") || !strings.Contains(r.stdout, "notification.survey: new address") ||
		!strings.Contains(r.stderr, "1 change awaits review and was not applied") {
		t.Fatalf("apply --scheduled after 09:00:\n%s\n%s", r.stdout, r.stderr)
	}
	if d := sb.device("bob-phone"); d.Received != 3 || len(d.Inbox) != 2 || d.Inbox[0].Title+d.Inbox[1].Title != "WelcomeWe're live" && d.Inbox[0].Title+d.Inbox[1].Title != "We're liveWelcome" {
		t.Errorf("bob-phone after the launch: %+v", d)
	}
	sent = sb.requests()
	w.mustRun(4, "apply", "--scheduled", after)
	if n := sb.requests() - sent; n != 0 {
		t.Errorf("a second scheduled run sent %d requests", n)
	}
	// Reviewed, the survey goes out; the cron job has nothing left to do.
	w.apply(after)
	w.mustRun(0, "apply", "--scheduled", after)
	w.mustRun(0, "plan", "--detailed-exitcode", after)
	if d := sb.device("bob-phone"); d.Received != 4 {
		t.Errorf("bob-phone received %d, want 4 (welcome twice, the launch, the survey)", d.Received)
	}
}

// TestApplyScheduledRollout: a reviewed apply sends a rollout's first
// stage; apply --scheduled sends nothing more while the stage's wait
// holds, and the next stage once it has passed (--now two hours ahead, in
// the embedded sandbox).
func TestApplyScheduledRollout(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	w := newWorkspace(t, sb, `
notification "spring" {
  user_ids = `+guardUsers(40)+`
  title    = "Spring sale"
  body     = "20% off"
  tag      = "spring"
  rollout {
    stages = ["25%", "100%"]
    wait   = "1h"
  }
}
`)
	w.apply()
	first := guardReceived(sb, 40)
	if first == 0 || first == 40 {
		t.Fatalf("the reviewed apply sent %d of 40: want the first stage", first)
	}
	w.mustRun(0, "apply", "--scheduled")
	if got := guardReceived(sb, 40); got != first {
		t.Fatalf("apply --scheduled within the wait sent %d more", got-first)
	}
	later := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	if r := w.mustRun(0, "apply", "--scheduled", "--now", later); strings.Contains(r.stdout, "Awaiting review") {
		t.Fatalf("the rollout's next stage awaits review:\n%s", r.stdout)
	}
	if got := guardReceived(sb, 40); got != 40 {
		t.Errorf("after the wait, devices were shown %d of 40", got)
	}
}
