package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/planner"
	"pushform/sandbox"
	"pushform/state"
)

// TestCheckApplyClock: which times apply takes. clock is the real clock;
// the state records a delivery at last.
func TestCheckApplyClock(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	last := clock.Add(-time.Hour)
	st := state.New("test")
	st.Messages["notification.a"] = &state.Message{Address: "notification.a", Targets: map[string]*state.Target{
		"u1": {Outcome: state.Delivered, Time: last.Add(-time.Hour)},
		"u2": {Outcome: state.Unknown, Time: last},                          // may have been delivered: counts
		"u3": {Outcome: state.Failed, Time: clock.Add(time.Hour)},           // not a delivery
		"u4": {Outcome: state.AlreadyDelivered, Time: clock.Add(time.Hour)}, // points at another
	}}
	plan := func(at time.Time) *planner.Plan { return &planner.Plan{CreatedAt: at} }
	for _, tt := range []struct {
		name    string
		nowFlag string
		saved   *planner.Plan
		want    string // in the error; "" for none
	}{
		{"no --now: the real clock", "", nil, ""},
		{"--now the clock", "2026-11-22T12:00:00Z", nil, ""},
		{"--now ahead: rehearsing the future", "2026-11-29T09:00:00Z", nil, ""},
		{"--now a second back", "2026-11-22T11:59:59Z", nil, "is earlier than the clock (2026-11-22T12:00:00Z)"},
		{"--now before the latest delivery", "2026-11-22T10:30:00Z", nil, "is earlier than the latest delivery the state records (2026-11-22T11:00:00Z)"},
		{"a saved plan made now", "", plan(clock), ""},
		{"a saved plan made for the past, after the last delivery", "", plan(last.Add(time.Minute)), ""},
		{"the same with its --now", "2026-11-22T11:01:00Z", plan(last.Add(time.Minute)), ""},
		{"a saved plan made without --now, its runner's clock behind", "", plan(last.Add(-time.Minute)), ""},
		{"a saved plan made with --now before the last delivery", "2026-11-22T10:59:00Z", plan(last.Add(-time.Minute)), "the plan was made for 2026-11-22T10:59:00Z, which is earlier than the latest delivery"},
		{"--now other than the saved plan's", "2026-11-22T12:00:00Z", plan(last.Add(time.Minute)), "is not the time the plan was made for (2026-11-22T11:01:00Z)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := clock
			if tt.nowFlag != "" {
				now, _ = time.Parse(time.RFC3339, tt.nowFlag)
			}
			err := checkApplyClock(tt.nowFlag, now, func() time.Time { return clock }, tt.saved, st)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("taken, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
	if err := checkApplyClock("", clock, time.Now, plan(clock), nil); err != nil {
		t.Errorf("no state yet: %v", err)
	}
	// --now is written in whole seconds: the current second is not the
	// past, nor is that of the latest delivery.
	subsecond := func() time.Time { return clock.Add(700 * time.Millisecond) }
	if err := checkApplyClock("2026-11-22T12:00:00Z", clock, subsecond, nil, st); err != nil {
		t.Errorf("--now the current second: %v", err)
	}
	recent := state.New("test")
	recent.Messages["notification.a"] = &state.Message{Address: "notification.a", Targets: map[string]*state.Target{
		"u1": {Outcome: state.Delivered, Time: subsecond()}}}
	if err := checkApplyClock("2026-11-22T12:00:00Z", clock, subsecond, nil, recent); err != nil {
		t.Errorf("--now the second of the latest delivery: %v", err)
	}
}

// TestApplyClockIsReal drives the CLI with an injected real clock: apply
// refuses a --now in the past before anything is sent, records the
// deliveries of an apply with a --now ahead at the real time, and plan
// --now says when apply would refuse that time.
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

	// Two hours back, the flash sale's window was open: apply refuses.
	code, stdout, stderr := run("apply", "--auto-approve", "--now", "2026-11-22T10:00:00Z")
	if code != ExitError || !strings.Contains(stderr, "--now 2026-11-22T10:00:00Z is earlier than the clock (2026-11-22T12:00:00Z)") ||
		!strings.Contains(stderr, "nothing was sent") || stdout != "" {
		t.Fatalf("apply --now in the past: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// plan --now in the past is free, and says so.
	code, stdout, stderr = run("plan", "--now", "2026-11-22T10:00:00Z")
	if code != ExitOK || !strings.Contains(stdout, "notification.flash") ||
		!strings.Contains(stderr, "Note: --now 2026-11-22T10:00:00Z is earlier than the clock (2026-11-22T12:00:00Z): apply --now refuses it") {
		t.Fatalf("plan --now in the past: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A day ahead: the later notification is due; it is sent now, and
	// recorded at the real time.
	code, stdout, stderr = run("apply", "--auto-approve", "--now", "2026-11-23T09:30:00Z")
	if code != ExitOK || strings.Contains(stderr, "Note:") {
		t.Fatalf("apply --now ahead: exit %d\n%s\n%s", code, stdout, stderr)
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
	code, _, stderr = run("plan", "--now", "2026-11-22T11:30:00Z", "--out", "past.plan")
	if code != ExitOK || !strings.Contains(stderr, "is earlier than the latest delivery the state records (2026-11-22T12:00:00Z): apply refuses this time") {
		t.Fatalf("plan --now before the last delivery: exit %d\n%s", code, stderr)
	}
	code, _, stderr = run("apply", "past.plan")
	if code != ExitError || !strings.Contains(stderr, "the plan was made for 2026-11-22T11:30:00Z, which is earlier than the latest delivery the state records (2026-11-22T12:00:00Z)") {
		t.Fatalf("apply of a plan made before the last delivery: exit %d\n%s", code, stderr)
	}
}

// TestApplyAheadKeepsCaps: frequency_cap { max = 1 per = "24h" }; after
// a delivery at the real time, plan --now a day ahead rehearses the
// second notification going then, but apply --now a day ahead sends now,
// so the cap holds it back; a plan saved to apply counts the same way.
func TestApplyAheadKeepsCaps(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const capped = `
frequency_cap {
  max = 1
  per = "24h"
}
notification "a_launch" {
  user_ids = ["alice", "bob"]
  title    = "Launch"
  body     = "It is here"
}
`
	dir, _ := testService(t, viewSeed, sandbox.Options{}, capped)
	run := func(args ...string) (int, string, string) {
		return runCLI(t, dir, Env{Now: func() time.Time { return clock }}, args...)
	}
	if code, stdout, stderr := run("apply", "--auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	main := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, []byte(`
notification "b_reminder" {
  user_ids = ["alice", "bob"]
  title    = "Reminder"
  body     = "Have you tried it?"
}
`)...)
	if err := os.WriteFile(main, src, 0o600); err != nil {
		t.Fatal(err)
	}
	const dayAhead = "2026-11-23T12:00:01Z"
	held := "⊘ notification.b_reminder is held back by frequency_cap: 2 users"
	if _, stdout, _ := run("plan", "--now", dayAhead); !strings.Contains(stdout, "+ notification.b_reminder will be created") {
		t.Errorf("plan --now a day ahead rehearses the reminder going then:\n%s", stdout)
	}
	if _, stdout, _ := run("plan", "--now", dayAhead, "--out", "ahead.plan"); !strings.Contains(stdout, held) {
		t.Errorf("a plan saved to apply counts the cap at the real time:\n%s", stdout)
	}
	code, stdout, stderr := run("apply", "--auto-approve", "--now", dayAhead)
	if code != ExitOK || !strings.Contains(stdout, held) {
		t.Errorf("apply --now a day ahead: exit %d\n%s\n%s", code, stdout, stderr)
	}
	st := readStateAt(t, filepath.Join(dir, "pushform.state"))
	if m := st.Messages["notification.b_reminder"]; m != nil && m.TargetCount() > 0 {
		t.Errorf("the reminder was sent within the day: %d targets recorded", m.TargetCount())
	}
}
