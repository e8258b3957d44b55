package operation

import (
	"fmt"
	"strconv"
)

// scheduledRefusals are the choices a scheduled apply refuses, by the flag
// that makes each: each decides to send what no review accepted, which is
// a reviewed plan's to decide.
var scheduledRefusals = []string{"replace", "resume", "allow-resend", "retry-unknown", "override-policy"}

// CheckScheduled refuses a scheduled apply given a saved plan (args, the
// command's arguments, name one) or a choice that sends more than a
// reviewed apply accepted; changed reports whether the choice of a flag
// was made. A scheduled apply (Options.Planner.Scheduled: apply
// --scheduled, a cron job) plans by itself and sends, without asking,
// only what a reviewed apply accepted: held-back sends, retries, and new
// recipients of content the state records (see planner.Options.Scheduled).
// Every other change is left for a reviewed apply and listed in
// Plan.AwaitingReview (views.AwaitingReviewWarning says so).
func CheckScheduled(args []string, changed func(flag string) bool) error {
	if len(args) > 0 {
		return fmt.Errorf("--scheduled plans by itself and cannot apply the saved plan %s: apply a saved plan without --scheduled", strconv.Quote(args[0]))
	}
	for _, name := range scheduledRefusals {
		if changed(name) {
			return fmt.Errorf("Can't use --%s with --scheduled: a scheduled run sends only what a reviewed apply accepted; make a plan with --%s, review it and apply that. Nothing was sent", name, name)
		}
	}
	return nil
}
