package views

import (
	"encoding/json"
	"fmt"
	"io"

	"pushform/planner"
)

// AwaitingReviewJSON writes the changes a scheduled apply left for review
// as one apply --json line (the human plan view listed them already).
func AwaitingReviewJSON(w io.Writer, p *planner.Plan) error {
	line, err := json.Marshal(map[string]any{"type": "awaiting_review", "changes": p.AwaitingReview})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", line)
	return err
}

// AwaitingReviewWarning says that the changes of p a scheduled apply left
// for review were not applied, and how to send them; exitCode is the exit
// code that says so.
func AwaitingReviewWarning(p *planner.Plan, exitCode int) string {
	n := len(p.AwaitingReview)
	what, them := Count(n)+" changes await review and were", "them"
	if n == 1 {
		what, them = "1 change awaits review and was", "it"
	}
	return fmt.Sprintf("%s not applied: --scheduled sends only what a reviewed apply accepted. Plan %s in a pull request and apply the reviewed plan (exit code %d).%s", what, them, exitCode, beforeShapes(p))
}

// beforeShapes explains a state that records no reviewed shape yet: the
// first reviewed apply records them; until then every change waits.
func beforeShapes(p *planner.Plan) string {
	for _, r := range p.AwaitingReview {
		if r.Why == planner.ReviewBefore {
			return " This state was written before pushform recorded the shapes a reviewed apply accepts: until an apply without --scheduled records them, scheduled runs release nothing."
		}
	}
	return ""
}
