package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/sandbox"
	"pushform/state"
)

// TestApplyClockIsReal drives the CLI through a base URL with an injected
// real clock: apply --now is refused before anything is sent, whichever
// way it points; plan --now rehearses and says what apply would do; a plan
// saved for a later time waits for it, one saved before the latest
// delivery is refused, and deliveries are recorded at the real time.
func TestApplyClockIsReal(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	dir, _ := testService(t, viewSeed, sandbox.Options{}, `
notification "flash" {
  user_ids    = ["alice", "bob"]
  title       = "Flash sale"
  body        = "One hour only"
  send_before = "2026-11-22T11:00:00Z"
}
notification "later" {
  user_ids    = ["alice"]
  title       = "Later"
  body        = "Tomorrow"
  send_after  = "2026-11-23T09:00:00Z"
}
`)
	run := func(args ...string) (int, string, string) {
		return runCLI(t, dir, Env{Now: func() time.Time { return clock }}, args...)
	}
	statePath := filepath.Join(dir, "pushform.state")

	for _, now := range []string{"2026-11-22T10:00:00Z", "2026-11-22T12:00:00Z", "2026-11-23T09:30:00Z"} {
		code, stdout, stderr := run("apply", "--auto-approve", "--now", now)
		if code != ExitError || !strings.Contains(stderr, "apply --now "+now+" refused: http://127.0.0.1:") ||
			!strings.Contains(stderr, "nothing was sent") || stdout != "" {
			t.Fatalf("apply --now %s: exit %d\n%s\n%s", now, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(statePath); err == nil {
		t.Fatal("a refused apply --now created the state")
	}
	// plan --now in the past is free, and says what apply does.
	code, stdout, stderr := run("plan", "--now", "2026-11-22T10:00:00Z")
	if code != ExitOK || !strings.Contains(stdout, "notification.flash") ||
		!strings.Contains(stderr, "Note: --now 2026-11-22T10:00:00Z is earlier than the clock (2026-11-22T12:00:00Z): apply --now is refused") {
		t.Fatalf("plan --now in the past: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A plan saved for a day ahead sends the later notification, but
	// only once that time has come.
	code, stdout, stderr = run("plan", "--now", "2026-11-23T09:30:00Z", "--out", "ahead.plan")
	if code != ExitOK || !strings.Contains(stdout, "+ notification.later will be created") ||
		!strings.Contains(stderr, "so the plan saved to ahead.plan cannot be applied before 2026-11-23T09:30:00Z") {
		t.Fatalf("plan --now ahead --out: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = run("apply", "ahead.plan")
	if code != ExitError || !strings.Contains(stderr, "the plan was made for 2026-11-23T09:30:00Z, later than the clock (2026-11-22T12:00:00Z)") ||
		!strings.Contains(stderr, "cannot be applied before 2026-11-23T09:30:00Z; nothing was sent") {
		t.Fatalf("apply of a plan made for later: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(statePath); err == nil {
		t.Fatal("a refused apply created the state")
	}
	clock = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	if code, stdout, stderr = run("apply", "ahead.plan"); code != ExitOK {
		t.Fatalf("apply of the plan at its time: exit %d\n%s\n%s", code, stdout, stderr)
	}
	st := readStateAt(t, statePath)
	tg := st.Messages["notification.later"].Target("alice")
	if tg == nil || tg.Outcome != state.Delivered || !tg.Time.Equal(clock) {
		t.Fatalf("later recorded %+v, want delivered at %s", tg, clock)
	}
	if st.Messages["notification.flash"] != nil {
		t.Errorf("the expired flash sale was recorded: %+v", st.Messages["notification.flash"])
	}
	// A plan saved for a time before that delivery cannot be applied.
	code, _, stderr = run("plan", "--now", "2026-11-23T09:00:00Z", "--out", "past.plan")
	if code != ExitOK || !strings.Contains(stderr, "is earlier than the latest delivery the state records (2026-11-23T09:30:00Z): apply refuses this time") {
		t.Fatalf("plan --now before the last delivery: exit %d\n%s", code, stderr)
	}
	code, _, stderr = run("apply", "past.plan")
	if code != ExitError || !strings.Contains(stderr, "the plan was made for 2026-11-23T09:00:00Z, which is earlier than the latest delivery the state records (2026-11-23T09:30:00Z)") {
		t.Fatalf("apply of a plan made before the last delivery: exit %d\n%s", code, stderr)
	}
}

// TestSandboxClock: the embedded sandbox's simulated clock. apply --now
// moves it forward and records deliveries at it; it is kept in
// pushform.sandbox.json and never goes backwards; a run without --now is
// at the later of the real clock and it.
func TestSandboxClock(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	dir := testutil.WriteFiles(t, map[string]string{
		"sandbox.hcl": viewSeed,
		"main.hcl": `service {
  sandbox     = "sandbox.hcl"
  environment = "test"
}

notification "weekly" {
  user_ids     = ["alice", "bob"]
  title        = "This week"
  body         = "Our picks"
  repeat_after = "7d"
}
`})
	run := func(args ...string) (int, string, string) {
		return runCLI(t, dir, Env{Now: func() time.Time { return clock }}, args...)
	}
	devices := filepath.Join(dir, sandbox.DefaultDevicesFile)
	received := func() int64 {
		t.Helper()
		v, err := sandbox.ReadDevice(devices, "alice-phone")
		if err != nil {
			t.Fatal(err)
		}
		return v.Received
	}
	if code, stdout, stderr := run("apply", "--auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	week1 := "2026-11-29T12:00:01Z"
	for i := 0; i < 3; i++ { // the first sends the repeat, the others find nothing due
		if code, stdout, stderr := run("apply", "--auto-approve", "--now", week1); code != ExitOK {
			t.Fatalf("apply --now %s: exit %d\n%s\n%s", week1, code, stdout, stderr)
		}
	}
	if got := received(); got != 2 {
		t.Fatalf("alice's phone shows %d, want 2 (the first and one repeat)", got)
	}
	at, err := sandbox.ReadClock(devices)
	if want, _ := time.Parse(time.RFC3339, week1); err != nil || at.Before(want) {
		t.Fatalf("the sandbox clock is at %v (%v), want %s", at, err, week1)
	}
	st := readStateAt(t, filepath.Join(dir, "pushform.state"))
	if st.Service == nil || st.Service.Kind != state.KindSandbox {
		t.Errorf("the state records service %+v, want the sandbox", st.Service)
	}
	if tg := st.Messages["notification.weekly"].Target("alice"); tg == nil || tg.Time.Before(at.Add(-time.Minute)) {
		t.Errorf("the repeat was recorded at %+v, want the simulated time %s", tg, at)
	}
	// Backwards is refused; a run without --now stays at the simulated
	// time (a week ahead of the real clock), where nothing is due.
	code, _, stderr := run("apply", "--auto-approve", "--now", "2026-11-25T00:00:00Z")
	if code != ExitError || !strings.Contains(stderr, "is earlier than the clock of the embedded sandbox (") {
		t.Fatalf("apply --now back: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run("apply", "--auto-approve"); code != ExitOK || !strings.Contains(stdout, "Nothing to send") {
		t.Fatalf("apply without --now: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := received(); got != 2 {
		t.Fatalf("alice's phone shows %d after the refused and the idle runs, want 2", got)
	}
	// plan --now before the clock rehearses, and says apply refuses it.
	code, _, stderr = run("plan", "--now", "2026-11-25T00:00:00Z")
	if code != ExitOK || !strings.Contains(stderr, "Note: --now 2026-11-25T00:00:00Z is earlier than the clock of the embedded sandbox") {
		t.Fatalf("plan --now back: exit %d\n%s", code, stderr)
	}
	if at2, _ := sandbox.ReadClock(devices); !at2.Equal(at) && at2.Before(at) {
		t.Errorf("the clock went back to %s", at2)
	}
}
