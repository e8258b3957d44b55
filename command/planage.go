package command

import (
	"cmp"
	"fmt"
	"time"

	"pushform/config"
	"pushform/operation"
)

// A saved plan expires: it records the real time it was made (MadeAt,
// never --now), and apply refuses it once it is older than the service
// block's max_plan_age, before anything is sent. What a reviewer approved
// a week ago is not what the audience, the state or the team expect
// today.

// maxPlanAge is cfg's max_plan_age.
func maxPlanAge(cfg *config.Config) time.Duration {
	return cmp.Or(cfg.Service.MaxPlanAge, config.DefaultMaxPlanAge)
}

// maxClockSkew is how far after apply's clock a plan may say it was made:
// the clocks of two machines differ a little.
const maxClockSkew = 5 * time.Minute

// checkPlanAge refuses a saved plan made at madeAt (zero: it does not
// say, made by an earlier pushform) when it is older than maxAge at now,
// or made later than now by more than two clocks differ: a plan made on a
// machine whose clock is a year ahead would otherwise not expire for a
// year.
func checkPlanAge(path string, madeAt, now time.Time, maxAge time.Duration) error {
	if madeAt.IsZero() {
		return fmt.Errorf("%s does not record when it was made (an earlier pushform made it), so its age cannot be checked against max_plan_age; nothing was sent. Make a new plan", path)
	}
	if ahead := madeAt.Sub(now); ahead > maxClockSkew {
		return fmt.Errorf("%s says it was made at %s, %s after this machine's clock (%s): the clock of the machine that made it, or of this one, is wrong, so its age cannot be checked against max_plan_age; nothing was sent. Set the clocks right (NTP) and make a new plan",
			path, rfc3339(madeAt), ahead.Round(time.Second), rfc3339(now))
	}
	if age := now.Sub(madeAt); age > maxAge {
		return fmt.Errorf("%s was made %s ago (at %s), longer ago than max_plan_age (%s): what it sends was reviewed against a state and an audience that may have changed since; nothing was sent. Make a new plan and apply that",
			path, age.Round(time.Second), rfc3339(madeAt), maxAge)
	}
	return nil
}

// checkPlanAhead refuses plan --out at a --now further ahead of the real
// clock than maxAge: against a service with real time, apply waits for
// that time, by which the plan is older than max_plan_age, so it could
// never be applied. The embedded sandbox's simulated clock moves to the
// plan's time at once: its plans are not refused.
func checkPlanAhead(c *operation.Clock, out string, maxAge time.Duration) error {
	if out == "" || !c.Asked || c.Simulated {
		return nil
	}
	if ahead := c.At.Sub(c.Real); ahead > maxAge {
		return fmt.Errorf("--now %s is %s ahead of the clock, more than max_plan_age (%s): apply waits for that time, and by then the plan would be too old to apply; no plan was saved. Plan with --out nearer the time, or raise max_plan_age in the service block",
			rfc3339(c.At), ahead.Round(time.Second), maxAge)
	}
	return nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
