package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// One clock (issue 37): apply decides what is due by the real clock
// whenever it talks to a service through a base URL, a `pushform sandbox`
// process included, and refuses --now before anything is sent; --now
// stays for plan (a rehearsal) and for the embedded sandbox, whose
// simulated clock moves with it and never goes back. Each scenario of the
// issue runs both ways: the figures before this change are in the
// comments (main at 276d97f).

// rfc3339In is the real time d from now, in whole seconds.
func rfc3339In(d time.Duration) string {
	return time.Now().UTC().Add(d).Truncate(time.Second).Format(time.RFC3339)
}

// clockBackends runs f with the state in a local file and in PostgreSQL.
func clockBackends(t *testing.T, f func(t *testing.T, pg *pgState)) {
	t.Run("file", func(t *testing.T) { f(t, nil) })
	t.Run("pg", func(t *testing.T) { f(t, newPGState(t)) })
}

const weeklyBlock = `
notification "weekly" {
  user_ids     = ["alice", "bob"]
  title        = "This week"
  body         = "Our picks"
  repeat_after = "7d"
}
`

// TestRepeatByTheRealClock: repeat_after = "7d", reviewed and applied;
// then apply --scheduled --now eight days ahead, three times. Before: 4
// copies on each device within seconds (a repeat per run: deliveries
// were recorded at the real time, compared with --now). After: each run
// is refused before anything is sent (exit 1), one copy each; plan --now
// still rehearses the repeat.
func TestRepeatByTheRealClock(t *testing.T) {
	clockBackends(t, func(t *testing.T, pg *pgState) {
		sb := startSandbox(t, seed, "--quiet")
		w := newPGWorkspace(t, sb, weeklyBlock, pg)
		w.apply()
		sent := sb.stats().SendRequests
		in8d := rfc3339In(8 * 24 * time.Hour)
		for i := range 3 {
			r := w.mustRun(1, "apply", "--scheduled", "--now", in8d)
			if !strings.Contains(r.stderr, "apply --now "+in8d+" refused: "+sb.base+" has real devices") || !strings.Contains(r.stderr, "nothing was sent") {
				t.Fatalf("run %d: stderr:\n%s", i+1, r.stderr)
			}
		}
		if n := sb.stats().SendRequests - sent; n != 0 {
			t.Errorf("refused runs sent %d requests", n)
		}
		if a, b := sb.device("alice-phone").Received, sb.device("bob-phone").Received; a != 1 || b != 1 {
			t.Errorf("alice-phone shows %d, bob-phone %d; want one copy each", a, b)
		}
		if _, tg := w.planJSON("--now", in8d).action("notification.weekly"); tg["send"] != 2 {
			t.Errorf("plan --now eight days ahead does not rehearse the repeat: %v", tg)
		}
		if s := w.readState(); s.Messages["notification.weekly"].Target("alice").Time.After(time.Now()) {
			t.Errorf("a delivery is recorded in the future: %s", s.Messages["notification.weekly"].Target("alice").Time)
		}
	})
}

// TestRepeatInTheSandbox: the same three runs in the embedded sandbox
// move its clock eight days: the first repeats, the next two find nothing
// due; a run without --now stays at the simulated time. Two copies on
// each device, a week apart.
func TestRepeatInTheSandbox(t *testing.T) {
	clockBackends(t, func(t *testing.T, pg *pgState) {
		sb := startEmbedded(t, seed)
		w := newPGWorkspace(t, sb, weeklyBlock, pg)
		w.apply()
		in8d := rfc3339In(8 * 24 * time.Hour)
		for range 3 {
			w.mustRun(0, "apply", "--scheduled", "--now", in8d)
		}
		w.mustRun(0, "apply", "--scheduled")
		if a, b := sb.device("alice-phone").Received, sb.device("bob-phone").Received; a != 2 || b != 2 {
			t.Errorf("alice-phone shows %d, bob-phone %d; want two each (one repeat)", a, b)
		}
		if at, want := sb.clock(), mustTime(t, in8d); at.Before(want) {
			t.Errorf("the sandbox clock is at %s, want %s or later", at, want)
		}
		hist := w.readState().TargetHistory("user_ids", "alice")
		if len(hist) != 2 || hist[1].Time.Sub(hist[0].Time) < 7*24*time.Hour && hist[0].Time.Sub(hist[1].Time) < 7*24*time.Hour {
			t.Errorf("alice's deliveries: %+v, want two a week apart", hist)
		}
	})
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// rolloutDay is a rollout to 100 users with a day between its stages.
var rolloutDay = `
notification "spring" {
  user_ids = ` + guardUsers(100) + `
  title    = "Spring sale"
  body     = "20% off"
  tag      = "spring"
  rollout {
    stages = ["10%", "50%", "100%"]
    wait   = "24h"
  }
}
`

// TestRolloutWaitByTheRealClock: wait = "24h". Before: apply --now a day
// and two days ahead sent all three stages in seconds (100 of 100). After:
// both are refused; the first stage only, and plan --now rehearses the
// next one.
func TestRolloutWaitByTheRealClock(t *testing.T) {
	clockBackends(t, func(t *testing.T, pg *pgState) {
		sb := startSandbox(t, guardsSeed, "--quiet")
		w := newPGWorkspace(t, sb, rolloutDay, pg)
		w.apply()
		first := guardReceived(sb, 100)
		if first == 0 || first > 30 {
			t.Fatalf("the first stage sent %d of 100", first)
		}
		for _, d := range []time.Duration{25 * time.Hour, 50 * time.Hour} {
			now := rfc3339In(d)
			if r := w.mustRun(1, "apply", "--auto-approve", "--now", now); !strings.Contains(r.stderr, "apply --now "+now+" refused") {
				t.Fatalf("apply --now %s:\n%s", now, r.stderr)
			}
		}
		if got := guardReceived(sb, 100); got != first {
			t.Errorf("devices were shown %d after the refused runs, want the first stage's %d", got, first)
		}
		if action, rs, tg := rolloutStatus(t, w, "--now", rfc3339In(25*time.Hour)); tg["send"] == 0 {
			t.Errorf("plan --now a day ahead: %s %+v %v, want the second stage due", action, rs, tg)
		}
	})
}

// TestRolloutWaitInTheSandbox: in the embedded sandbox each stage goes
// when its day has passed on the simulated clock, and never twice.
func TestRolloutWaitInTheSandbox(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	w := newWorkspace(t, sb, rolloutDay)
	w.apply()
	first := guardReceived(sb, 100)
	if first == 0 || first > 30 {
		t.Fatalf("the first stage sent %d of 100", first)
	}
	day1, day2 := rfc3339In(25*time.Hour), rfc3339In(50*time.Hour)
	w.apply("--now", rfc3339In(23*time.Hour))
	if got := guardReceived(sb, 100); got != first {
		t.Fatalf("within the wait: %d shown, want %d", got, first)
	}
	w.apply("--now", day1)
	w.apply("--now", day1)
	second := guardReceived(sb, 100)
	if second <= first || second >= 100 {
		t.Fatalf("a day later: %d shown, want the second stage", second)
	}
	w.apply("--now", day2)
	shownOnce(t, sb, 100, 1, "Spring sale")
}

// TestSavedPlanMadeForLater: send_after an hour from now. Before: plan
// --now (two hours from now) --out, applied at once, delivered (2 of 2).
// After: refused, naming the time, nothing sent; a --now further ahead
// than max_plan_age (24h) is refused by plan --out already; in the
// embedded sandbox the plan runs at its time and moves the sandbox's
// clock there.
func TestSavedPlanMadeForLater(t *testing.T) {
	const future = `
notification "new_year" {
  user_ids   = ["alice", "bob"]
  title      = "Happy 2099"
  body       = "A new century"
  send_after = "2099-01-01T00:00:00Z"
}
`
	soon := time.Now().UTC().Truncate(time.Second)
	sendAfter, later := soon.Add(time.Hour).Format(time.RFC3339), soon.Add(2*time.Hour).Format(time.RFC3339)
	clockBackends(t, func(t *testing.T, pg *pgState) {
		sb := startSandbox(t, seed, "--quiet")
		w := newPGWorkspace(t, sb, strings.Replace(future, "2099-01-01T00:00:00Z", sendAfter, 1), pg)
		if r := w.mustRun(1, "plan", "--now", "2099-01-02T00:00:00Z", "--out", "later.plan"); !strings.Contains(r.stderr, "ahead of the clock, more than max_plan_age (24h0m0s)") {
			t.Fatalf("plan --now 2099-01-02 --out:\n%s", r.stderr)
		}
		r := w.mustRun(0, "plan", "--now", later, "--out", "later.plan")
		if !strings.Contains(r.stdout, "notification.new_year will be created") || !strings.Contains(r.stderr, "cannot be applied before "+later) {
			t.Fatalf("plan --now %s --out:\n%s\n%s", later, r.stdout, r.stderr)
		}
		r = w.mustRun(1, "apply", "later.plan")
		if !strings.Contains(r.stderr, "the plan was made for "+later+", later than the clock (") ||
			!strings.Contains(r.stderr, "this plan cannot be applied before "+later+"; nothing was sent") {
			t.Fatalf("apply later.plan:\n%s\n%s", r.stdout, r.stderr)
		}
		if n := sb.stats().SendRequests; n != 0 || sb.device("alice-phone").Received != 0 {
			t.Errorf("the refused plan sent %d requests", n)
		}
	})
	sb := startEmbedded(t, seed)
	w := newWorkspace(t, sb, future)
	w.mustRun(0, "plan", "--now", "2099-01-02T00:00:00Z", "--out", "later.plan")
	w.mustRun(0, "apply", "later.plan")
	if a := sb.device("alice-phone"); a.Received != 1 || sb.clock().Before(mustTime(t, "2099-01-02T00:00:00Z")) {
		t.Errorf("in the sandbox: alice-phone shows %d, the clock is at %s", a.Received, sb.clock())
	}
}

// nightZone is an Etc/GMT zone where it is now between 02:00 and 03:00.
func nightZone() string {
	off := (2 - time.Now().UTC().Hour() + 24) % 24
	if off > 11 {
		off -= 24
	}
	switch {
	case off > 0:
		return fmt.Sprintf("Etc/GMT-%d", off)
	case off < 0:
		return fmt.Sprintf("Etc/GMT+%d", -off)
	}
	return "Etc/GMT"
}

// TestQuietHoursByTheRealClock: quiet_hours 21:00-08:00 in a zone where
// it is night now. Before: apply --now seven hours ahead (09:00 there)
// sent at once, in the middle of the night (1 of 1). After: refused;
// apply holds the notification; in the embedded sandbox it goes at 09:00
// simulated.
func TestQuietHoursByTheRealClock(t *testing.T) {
	quiet := fmt.Sprintf(`
time_zones {
  by_user = { alice = %q }
}
quiet_hours {
  from = "21:00"
  to   = "08:00"
}

notification "news" {
  user_ids = ["alice"]
  title    = "Weekly news"
  body     = "What happened this week"
}
`, nightZone())
	clockBackends(t, func(t *testing.T, pg *pgState) {
		sb := startSandbox(t, seed, "--quiet")
		w := newPGWorkspace(t, sb, quiet, pg)
		in7h := rfc3339In(7 * time.Hour)
		if r := w.mustRun(1, "apply", "--auto-approve", "--now", in7h); !strings.Contains(r.stderr, "apply --now "+in7h+" refused") {
			t.Fatalf("apply --now seven hours ahead:\n%s", r.stderr)
		}
		if r := w.apply(); !strings.Contains(r.stdout, "held by quiet_hours") {
			t.Errorf("apply at night:\n%s", r.stdout)
		}
		if n := sb.device("alice-phone").Received; n != 0 {
			t.Errorf("alice-phone was shown %d at night", n)
		}
	})
	sb := startEmbedded(t, seed)
	w := newWorkspace(t, sb, quiet)
	w.apply()
	w.apply("--now", rfc3339In(7*time.Hour))
	if n := sb.device("alice-phone").Received; n != 1 {
		t.Errorf("in the sandbox, alice-phone was shown %d after the night, want 1", n)
	}
}
