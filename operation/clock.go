package operation

import (
	"fmt"
	"time"

	"pushform/state"
)

// Clock is the one time of a run, chosen once from the service it talks
// to (chooseClock) and passed to everything that asks what time it is:
// the planner decides what is due at At, and the executor, the recipients
// snapshot and the state record at Now. No guard reads a clock of its own.
//
//   - A service reached through a base URL (the real one, or a `pushform
//     sandbox` process: a service like any other) has real devices and
//     real time. Apply decides and records at the real clock, so apply
//     --now is refused, and a plan saved for a later time is refused
//     until then. plan --now rehearses: it decides at --now, and records
//     nothing.
//   - The embedded sandbox simulates its devices and so its time: its
//     clock is kept with its devices, never goes backwards, and --now
//     moves it forward. A run without --now is at the later of the real
//     clock and the simulated one.
type Clock struct {
	// Simulated is set for the embedded sandbox.
	Simulated bool
	// At is the time the run decides what is due at (the plan's time).
	At time.Time
	// Asked is set when At was asked for: --now, or a saved plan's time.
	Asked bool
	// Rehearsal is set when At is a plan's --now against a service with
	// real time: what the plan shows is not what apply would send now.
	Rehearsal bool
	// Floor is the earliest time an apply may run at: the latest delivery
	// the state records and, for the embedded sandbox, the time its clock
	// has reached. Known for the embedded sandbox and when a time was
	// asked for; zero otherwise.
	Floor time.Time
	// Real is the real time when the run opened.
	Real time.Time

	real    func() time.Time
	service state.Service
}

// Now is the time the run records at: the real time, or for the
// embedded sandbox the simulated one, moving with the real clock from At.
func (c *Clock) Now() time.Time {
	if !c.Simulated {
		return c.real()
	}
	return c.At.Add(c.real().Sub(c.Real))
}

// clockInput is what a clock is chosen from.
type clockInput struct {
	operation string // plan, apply, test-send
	service   state.Service
	// now is --now; zero without it.
	now time.Time
	// savedAt is the time a saved plan made with --now was made for;
	// zero for none.
	savedAt time.Time
	// lastDelivery returns the latest delivery the state records (a scan
	// of its records: asked only when a time is given, or for the
	// embedded sandbox), and simulated the time the embedded sandbox's
	// clock has reached.
	lastDelivery func() time.Time
	simulated    time.Time
	real         func() time.Time
}

// chooseClock chooses the run's clock, or refuses the run before anything
// is sent when the time asked for cannot be.
func chooseClock(in clockInput) (*Clock, error) {
	real := in.real()
	c := &Clock{Simulated: in.service.Simulated(), Real: real, real: in.real, service: in.service}
	asked, saved := in.now, false
	if asked.IsZero() && !in.savedAt.IsZero() {
		asked, saved = in.savedAt, true
	}
	c.Asked = !asked.IsZero()
	if c.Simulated || c.Asked {
		c.Floor = in.lastDelivery()
	}
	if c.Simulated && in.simulated.After(c.Floor) {
		c.Floor = in.simulated
	}
	switch {
	case in.operation == "plan" && !asked.IsZero():
		c.At, c.Rehearsal = asked, !c.Simulated
		return c, nil
	case c.Simulated && asked.IsZero():
		c.At = later(real, c.Floor)
		return c, nil
	case c.Simulated:
		if before(asked, c.Floor) {
			return nil, &ClockError{At: asked, Saved: saved, Floor: c.Floor, Simulated: true, Service: in.service}
		}
		c.At = asked
		return c, nil
	case saved:
		// A plan saved for a time of its own: decided then, sent now.
		switch {
		case before(real, asked):
			return nil, &ClockError{At: asked, Saved: true, Real: real, Service: in.service}
		case before(asked, c.Floor):
			return nil, &ClockError{At: asked, Saved: true, Floor: c.Floor, Service: in.service}
		}
	case !asked.IsZero():
		return nil, &ClockError{At: asked, Real: real, Service: in.service}
	}
	c.At = real
	return c, nil
}

// ClockError is a run refused for its time, before anything is sent.
type ClockError struct {
	// At is the time asked for: --now, or a saved plan's.
	At    time.Time
	Saved bool
	// Real is set when At is refused for being ahead of the real clock
	// (a saved plan) or for being given at all (--now against a base URL).
	Real time.Time
	// Floor is set when At is before the latest delivery or the embedded
	// sandbox's clock.
	Floor     time.Time
	Simulated bool
	Service   state.Service
}

func (e *ClockError) Error() string {
	at := rfc3339(e.At)
	switch {
	case e.Simulated:
		what := "--now " + at
		if e.Saved {
			what = "the plan was made for " + at + ", which"
		}
		return fmt.Sprintf("%s is earlier than the clock of the embedded sandbox (%s: the latest time its devices or the state reached): "+
			"simulated time never goes backwards, or frequency caps, repeats and rollout waits could be bypassed; nothing was sent. "+
			"Apply at a later --now, or start a fresh state and sandbox devices file", what, rfc3339(e.Floor))
	case e.Saved && !e.Real.IsZero():
		return fmt.Sprintf("the plan was made for %s, later than the clock (%s): %s decides what is due at the real time, "+
			"so this plan cannot be applied before %s; nothing was sent. Apply it then, or make a plan without --now",
			at, rfc3339(e.Real), e.Service, at)
	case e.Saved:
		return fmt.Sprintf("the plan was made for %s, which is earlier than the latest delivery the state records (%s): "+
			"apply never runs before what it already sent, or frequency caps and delivery windows could be bypassed; nothing was sent. "+
			"Make a new plan", at, rfc3339(e.Floor))
	}
	return fmt.Sprintf("apply --now %s refused: %s has real devices, so apply decides what is due by the real clock (%s) "+
		"and records real times only; nothing was sent. Rehearse a time with plan --now, or with the embedded sandbox (service { sandbox = ... })",
		at, e.Service, rfc3339(e.Real))
}

// PlanNote says, for plan --now, what apply would do with that time; ""
// when nothing needs saying. out is the --out file, "" for none.
func (c *Clock) PlanNote(out string) string {
	if !c.Asked {
		return ""
	}
	at := rfc3339(c.At)
	switch {
	case c.Simulated && before(c.At, c.Floor):
		return fmt.Sprintf("Note: --now %s is earlier than the clock of the embedded sandbox (%s): apply refuses this time, "+
			"as a plan file or not (simulated time never goes backwards); this plan shows what would have been sent then.", at, rfc3339(c.Floor))
	case c.Simulated:
		return ""
	case before(c.At, c.Floor):
		return fmt.Sprintf("Note: --now %s is earlier than the latest delivery the state records (%s): apply refuses this time, "+
			"as a plan file or not; this plan shows what would have been sent then.", at, rfc3339(c.Floor))
	case before(c.Real, c.At) && out != "":
		return fmt.Sprintf("Note: --now %s is later than the clock (%s): %s decides what is due at the real time, "+
			"so the plan saved to %s cannot be applied before %s.", at, rfc3339(c.Real), c.service, out, at)
	case before(c.Real, c.At):
		return fmt.Sprintf("Note: --now %s rehearses a later run: %s decides what is due at the real time (apply --now is refused); "+
			"this plan shows what a run at %s would send.", at, c.service, at)
	case !before(c.At, c.Real):
		return ""
	case out != "":
		return fmt.Sprintf("Note: --now %s is earlier than the clock (%s): apply --now is refused; the plan saved to %s may be applied, "+
			"its send_before checked at the real time as it is sent.", at, rfc3339(c.Real), out)
	}
	return fmt.Sprintf("Note: --now %s is earlier than the clock (%s): apply --now is refused; this plan shows what would have been sent then.",
		at, rfc3339(c.Real))
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// before reports whether t is before ref to the second: --now is written in
// whole seconds, so the current second (`date -u +%FT%TZ`) is not the past.
func before(t, ref time.Time) bool { return t.Before(ref.Truncate(time.Second)) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
