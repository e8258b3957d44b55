package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
)

// ApplyHuman shows an apply run for people: the plan, a progress bar on a
// terminal (a line every few seconds in a log), retries and the result.
type ApplyHuman struct {
	mu   sync.Mutex
	w    io.Writer // results
	errw io.Writer // errors of whole requests
	plan *PlanHuman
	prog *progress
}

// NewApplyHuman returns a human apply view writing results to stdout and
// request errors to stderr. color enables ANSI colour, terminal a progress
// bar redrawn in place; now is the clock the progress rate is measured by.
func NewApplyHuman(stdout, stderr io.Writer, color, terminal bool, now func() time.Time) *ApplyHuman {
	return &ApplyHuman{w: stdout, errw: stderr, plan: NewPlanHuman(stdout, color), prog: newProgress(terminal, color, now)}
}

// Plan shows the plan in the human format.
func (v *ApplyHuman) Plan(p *planner.Plan) error {
	return v.plan.Plan(p)
}

// Start starts the progress clock for the plan's targets.
func (v *ApplyHuman) Start(p *planner.Plan) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.prog.begin(p.Summary.Targets)
}

// NoChanges says there is nothing to send.
func (v *ApplyHuman) NoChanges() {
	fmt.Fprintln(v.w, "\nNothing to send.")
}

// Event advances the progress display and prints retries and forgets.
func (v *ApplyHuman) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e.Type {
	case executor.EventResponse, executor.EventError:
		io.WriteString(v.w, v.prog.advance(e.Targets))
	case executor.EventRetry:
		v.println(fmt.Sprintf("  request %d: try %d failed, retrying in %s: %s", e.Batch+1, e.Attempt, e.Delay.Round(time.Millisecond), clean(e.Error)))
	case executor.EventForget:
		v.println(fmt.Sprintf("  forgot %s (state only)", clean(strings.Join(e.Addresses, ", "))))
	}
}

// println writes a line of its own, clearing the progress bar first and
// drawing it again after.
func (v *ApplyHuman) println(line string) {
	io.WriteString(v.w, v.prog.clear()+line+"\n"+v.prog.redraw())
}

// Finish clears the progress bar and prints the outcome of the run.
func (v *ApplyHuman) Finish(p *planner.Plan, res *executor.Result, took time.Duration, cfg *config.Config) {
	v.mu.Lock()
	io.WriteString(v.w, v.prog.clear())
	v.prog.stopped = true
	v.mu.Unlock()
	c := res.Counts
	fmt.Fprintf(v.w, "\nApply complete: %s delivered, %s skipped, %s failed, %s unknown, in %s (%s).\n",
		Count(c.Delivered), Count(c.Skipped), Count(c.Failed), Count(c.Unknown),
		plural(res.Requests, "request", "requests"), took.Round(time.Millisecond))
	for reason, n := range res.Skipped {
		fmt.Fprintf(v.w, "  skipped %s: %s (the service says retrying does not help)\n", plural(n, "target", "targets"), clean(reason))
	}
	for _, f := range res.Failures {
		fmt.Fprintf(v.w, "  failed: %s -> %s: %s (request id %s)\n", f.Address, clean(f.Target), clean(f.Message), clean(f.RequestID))
	}
	if n := c.Failed - len(res.Failures); n > 0 && len(res.Failures) == executor.MaxListed {
		fmt.Fprintf(v.w, "  ... and more; pushform state show ADDR lists every target\n")
	}
	for _, e := range batchErrors(res.Errors, cfg, func(s string) string { return s }) {
		fmt.Fprintf(v.errw, "Error: %s\n", cleanLines(e))
	}
	if c.Unknown > 0 {
		fmt.Fprintf(v.w, "  %s unknown: a request's answer was lost; the next plan shows them\n", plural(c.Unknown, "target", "targets"))
	}
}

// clean escapes control characters (newlines too) in one-line text that
// came from the service or the configuration, so it cannot break lines or
// drive a terminal.
func clean(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cleanLines is clean for text whose newlines are ours.
func cleanLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}
