package command

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"pushform/planner"
	"pushform/views"
)

// scheduledRefusals are the flags apply --scheduled refuses: each decides
// to send what no review accepted, which is a reviewed plan's to decide.
var scheduledRefusals = []string{"replace", "resume", "allow-resend", "retry-unknown", "override-policy"}

// checkScheduledFlags refuses --scheduled with a saved plan or a flag that
// sends more than a reviewed apply accepted.
func checkScheduledFlags(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("--scheduled plans by itself and cannot apply the saved plan %s: apply a saved plan without --scheduled", quoteArg(fs.Arg(0)))
	}
	for _, name := range scheduledRefusals {
		if fs.Changed(name) {
			return fmt.Errorf("Can't use --%s with --scheduled: a scheduled run sends only what a reviewed apply accepted; make a plan with --%s, review it and apply that. Nothing was sent", name, name)
		}
	}
	return nil
}

// awaitingReview reports the changes a scheduled plan left for review:
// listed in JSON (the human plan view listed them), a line on stderr, and
// ExitReview when the run was otherwise a success.
func (o *applyOptions) awaitingReview(p *planner.Plan, code int) int {
	n := len(p.AwaitingReview)
	if n == 0 {
		return code
	}
	m := o.Meta
	if o.json {
		line, err := json.Marshal(map[string]any{"type": "awaiting_review", "changes": p.AwaitingReview})
		if err != nil {
			return m.fail(err)
		}
		fmt.Fprintf(m.Stdout, "%s\n", line)
	}
	what, them := views.Count(n)+" changes await review and were", "them"
	if n == 1 {
		what, them = "1 change awaits review and was", "it"
	}
	m.Warnf("%s not applied: --scheduled sends only what a reviewed apply accepted. Plan %s in a pull request and apply the reviewed plan (exit code %d).", what, them, ExitReview)
	if code != ExitOK {
		return code
	}
	return ExitReview
}
