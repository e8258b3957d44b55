package views

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/pushapi"
)

// Apply shows an apply run: the plan it sends, progress events and the
// result. Event may be called from several goroutines at once.
type Apply interface {
	// Plan shows the plan made by this run, before asking to send it.
	Plan(p *planner.Plan) error
	// Policies shows the results of the plan's policies, before asking
	// (and before refusing a plan a deny policy stops).
	Policies(results []plandoc.Policy)
	// Start is called once the plan is known, right before sending.
	Start(p *planner.Plan)
	// Event reports progress from the executor.
	Event(e executor.Event)
	// NoChanges says there is nothing to send; nothing else follows.
	NoChanges()
	// Finish shows the outcome of the run; cfg points 400s back at blocks.
	Finish(p *planner.Plan, res *executor.Result, took time.Duration, cfg *config.Config)
	// Flush writes what the view holds back, if anything: apply calls it
	// before it returns, whichever way it ends.
	Flush()
}

var (
	_ Apply = (*ApplyHuman)(nil)
	_ Apply = (*ApplyJSON)(nil)
)

// batchErrors renders failed requests, pointing a 400 back at the blocks it
// came from. esc is applied to every piece of text from the service or the
// configuration: termtext.Clean for people, the identity for JSON.
func batchErrors(errs []*executor.BatchError, cfg *config.Config, esc func(string) string) []string {
	pos := map[string]config.Pos{}
	for _, m := range cfg.Messages {
		pos[m.Address] = m.Pos
	}
	out := []string{}
	for _, be := range errs {
		var ve *pushapi.ValidationError
		if errors.As(be.Err, &ve) {
			var b strings.Builder
			fmt.Fprintf(&b, "request %d was rejected by the service (400, request id %s):", be.Batch+1, esc(ve.RequestID))
			if len(ve.Issues) == 0 { // no issues array: show what it said instead
				detail := ve.Excerpt
				if detail == "" {
					detail = "(an empty answer)"
				}
				fmt.Fprintf(&b, " %s", esc(detail))
				for _, addr := range be.Addresses {
					fmt.Fprintf(&b, "\n  %s (%s)", esc(addr), esc(pos[addr].String()))
				}
			}
			for i, addr := range be.Addresses {
				for _, is := range ve.Issues {
					if is.Index == i || is.Index < 0 {
						fmt.Fprintf(&b, "\n  %s (%s): %s", esc(addr), esc(pos[addr].String()), esc(issueText(is)))
					}
				}
			}
			out = append(out, b.String())
			continue
		}
		out = append(out, esc(be.Error()))
	}
	return out
}

func issueText(is pushapi.Issue) string {
	if is.Field != "" {
		return is.Field + ": " + is.Message
	}
	if is.Message != "" {
		return is.Message
	}
	return string(is.Raw)
}
