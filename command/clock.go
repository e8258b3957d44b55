package command

import (
	"fmt"
	"time"

	"pushform/planner"
	"pushform/state"
)

// The clock. --now rehearses the future: plan --now shows what would be
// sent at any time, and apply may send at a later one (a step of a
// schedule or a rollout ahead of time). Apply never turns the clock back:
// deliveries are recorded at the real time of their answers, and the
// executor checks delivery windows at the real time, so a --now in the
// past could only make a cap or a window look open when it is not. The
// real clock is the Env's, which no flag or variable sets.

// clockError is an apply refused for its time, before anything is sent.
type clockError struct {
	now, clock, last time.Time
	saved            bool // the time is a saved plan's
}

func (e *clockError) Error() string {
	what := "--now " + rfc3339(e.now)
	if e.saved {
		what = "the plan was made for " + rfc3339(e.now) + ", which"
	}
	switch {
	case !e.last.IsZero():
		return fmt.Sprintf("%s is earlier than the latest delivery the state records (%s): apply never runs before what it already sent, "+
			"or frequency caps and delivery windows could be bypassed; nothing was sent. Plan at a later time, or without --now", what, rfc3339(e.last))
	default:
		return fmt.Sprintf("%s is earlier than the clock (%s): apply sends and records its deliveries at the real time, so it takes no time in the past; "+
			"nothing was sent. Apply without --now, or apply a plan saved for that time (plan --now %s --out FILE), whose send_before is checked at the real time",
			what, rfc3339(e.clock), rfc3339(e.now))
	}
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// before reports whether t is before ref to the second: --now is written in
// whole seconds, so the current second (`date -u +%FT%TZ`) is not the past.
func before(t, ref time.Time) bool { return t.Before(ref.Truncate(time.Second)) }

// checkApplyClock refuses, before anything is sent, an apply whose time
// is earlier than the latest delivery st records, and a --now earlier than
// the real clock unless it is that of the saved plan being applied (whose
// windows the executor still checks at the real time). A saved plan made
// with --now is checked against st at that time; --now with a saved plan
// must be that time.
func checkApplyClock(nowFlag string, now time.Time, clock func() time.Time, saved *planner.Plan, st *state.State) error {
	switch {
	case saved != nil && nowFlag != "" && !now.Equal(saved.CreatedAt):
		return fmt.Errorf("--now %s is not the time the plan was made for (%s): apply the plan without --now, or make a new plan", rfc3339(now), rfc3339(saved.CreatedAt))
	case saved != nil && nowFlag == "":
		// Made at its runner's real clock: a delivery recorded since
		// changed the state, and CheckPlan refused the plan as stale.
		// Comparing clocks here would only refuse runners that disagree.
		return nil
	case saved != nil:
		if last := st.LastDelivery(); before(saved.CreatedAt, last) {
			return &clockError{now: saved.CreatedAt, last: last, saved: true}
		}
		return nil
	case nowFlag == "":
		return nil // the real clock
	}
	if last := st.LastDelivery(); before(now, last) {
		return &clockError{now: now, last: last}
	}
	if real := clock(); before(now, real) {
		return &clockError{now: now, clock: real}
	}
	return nil
}

// planClockNote says, for plan --now, whether apply would refuse that
// time; "" when it would not.
func planClockNote(nowFlag string, now time.Time, clock func() time.Time, st *state.State, out string) string {
	if nowFlag == "" {
		return ""
	}
	if last := st.LastDelivery(); before(now, last) {
		return fmt.Sprintf("Note: --now %s is earlier than the latest delivery the state records (%s): apply refuses this time, "+
			"as a plan file or not; this plan shows what would have been sent then.", rfc3339(now), rfc3339(last))
	}
	real := clock()
	if !before(now, real) {
		return ""
	}
	if out != "" {
		return fmt.Sprintf("Note: --now %s is earlier than the clock (%s): apply --now refuses it; the plan saved to %s may be applied, "+
			"its send_before checked at the real time as it is sent.", rfc3339(now), rfc3339(real), out)
	}
	return fmt.Sprintf("Note: --now %s is earlier than the clock (%s): apply --now refuses it; this plan shows what would have been sent then.",
		rfc3339(now), rfc3339(real))
}
