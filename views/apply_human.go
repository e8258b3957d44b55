package views

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/termtext"
)

// ApplyHuman shows an apply run for people: the plan, a progress bar on a
// terminal (a line every few seconds in a log), retries and the result.
type ApplyHuman struct {
	mu   sync.Mutex
	w    io.Writer // results
	errw io.Writer // errors of whole requests
	plan *PlanHuman
	prog *progress
	// planShown is set once Plan has shown the plan (with its pacing).
	planShown bool
}

// NewApplyHuman returns a human apply view writing results to stdout and
// request errors to stderr. color enables ANSI colour, terminal a progress
// bar redrawn in place; now is the clock the progress rate is measured by.
func NewApplyHuman(stdout, stderr io.Writer, color, terminal bool, now func() time.Time) *ApplyHuman {
	return &ApplyHuman{w: stdout, errw: stderr, plan: NewPlanHuman(stdout, color), prog: newProgress(terminal, color, now)}
}

// WithWidth word-wraps the plan's warnings at a terminal's width (see
// PlanHuman.WithWidth).
func (v *ApplyHuman) WithWidth(width int) *ApplyHuman {
	v.plan.WithWidth(width)
	return v
}

// Plan shows the plan in the human format.
func (v *ApplyHuman) Plan(p *planner.Plan) error {
	v.planShown = true
	return v.plan.Plan(p)
}

// Start starts the progress clock for the plan's targets, and says how
// its send rates pace it unless the plan shown said so.
func (v *ApplyHuman) Start(p *planner.Plan) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var rates []string
	for i, line := range pacingLines(p) {
		if i == 0 && !v.planShown {
			io.WriteString(v.w, "\n")
		}
		if !v.planShown {
			fmt.Fprintf(v.w, "Pacing: %s\n", termtext.Clean(line))
		}
		if r := p.Pacing[i].Rate(); !slices.Contains(rates, r) {
			rates = append(rates, r)
		}
	}
	v.prog.paced = strings.Join(rates, ", ")
	v.prog.begin(p.Summary.Targets)
}

// NoChanges says there is nothing to send.
func (v *ApplyHuman) NoChanges() {
	fmt.Fprintln(v.w, "\nNothing to send.")
}

// Flush does nothing: every line is written as it comes.
func (v *ApplyHuman) Flush() {}

// Event advances the progress display and prints retries and forgets.
func (v *ApplyHuman) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e.Type {
	case executor.EventResponse, executor.EventError:
		io.WriteString(v.w, v.prog.advance(e.Targets))
	case executor.EventRetry:
		v.println(fmt.Sprintf("  request %d: try %d failed, retrying in %s: %s", e.Batch+1, e.Attempt, e.Delay.Round(time.Millisecond), termtext.Clean(e.Error)))
	case executor.EventForget:
		addrs := make([]string, len(e.Addresses))
		for i, a := range e.Addresses {
			addrs[i] = termtext.Clean(a)
		}
		v.println(fmt.Sprintf("  forgot %s (state only)", strings.Join(addrs, ", ")))
	case executor.EventMove:
		for i, to := range e.Addresses {
			from := ""
			if i < len(e.MovedFrom) {
				from = e.MovedFrom[i]
			}
			v.println(fmt.Sprintf("  moved %s to %s (state only)", termtext.Clean(from), termtext.Clean(to)))
		}
	case executor.EventPacing:
		// The bar says the run is paced; a line per wait would be noise.
		io.WriteString(v.w, v.prog.advance(0))
	case executor.EventSplit:
		if e.TooLarge {
			v.println(fmt.Sprintf("  request %d is too large for the service (%s): sending it again in %s", e.Batch+1, termtext.Clean(e.Error), plural(len(e.Parts), "request", "requests")))
			break
		}
		v.println(fmt.Sprintf("  request %d was refused (%s): sending its other notifications again in %s", e.Batch+1, termtext.Clean(e.Error), plural(len(e.Parts), "request", "requests")))
	case executor.EventWait:
		v.println(fmt.Sprintf("  request %d: the service asks to slow down (429, request id %s): every request waits %s", e.Batch+1, termtext.Clean(e.RequestID), e.Delay.Round(time.Millisecond)))
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
	head := "Apply complete"
	if res.JournalError != "" {
		head = "Apply stopped (a write to the state journal failed)"
	}
	requests := plural(max(res.Sent, res.Requests), "request", "requests")
	if n := res.Sent - res.Requests; n > 0 {
		requests += fmt.Sprintf(", %s without a usable answer", Count(n))
	}
	fmt.Fprintf(v.w, "\n%s: %s delivered, %s skipped, %s failed, %s unknown, in %s (%s).\n", head,
		Count(c.Delivered), Count(c.Skipped), Count(c.Failed), Count(c.Unknown),
		requests, took.Round(time.Millisecond))
	v.service(p)
	v.unrecorded(res)
	for _, reason := range slices.Sorted(maps.Keys(res.Skipped)) {
		n := res.Skipped[reason]
		fmt.Fprintf(v.w, "  skipped %s: %s (the service says retrying does not help)\n", plural(n, "target", "targets"), termtext.Clean(reason))
	}
	for _, f := range res.Failures {
		fmt.Fprintf(v.w, "  failed: %s -> %s: %s (request id %s)\n", termtext.Clean(f.Address), termtext.Clean(f.Target), termtext.Clean(f.Message), termtext.Clean(f.RequestID))
	}
	if n := c.Failed - len(res.Failures); n > 0 && len(res.Failures) == executor.MaxListed {
		fmt.Fprintf(v.w, "  ... and more; pushform state show ADDR lists every target\n")
	}
	for _, e := range batchErrors(res.Errors, cfg, termtext.Clean) {
		fmt.Fprintf(v.errw, "Error: %s\n", e)
	}
	if c.Unknown > 0 {
		fmt.Fprintf(v.w, "  %s unknown: a request's answer was lost; the next plan shows them\n", plural(c.Unknown, "target", "targets"))
	}
}

// unrecorded says, after a failed journal write, what the counts above
// hold that the state does not.
func (v *ApplyHuman) unrecorded(res *executor.Result) {
	if res.JournalError == "" {
		return
	}
	u := res.Unrecorded
	if u == nil {
		u = &executor.Unrecorded{}
	}
	if n := u.Total(); n > 0 {
		c := u.Counts
		fmt.Fprintf(v.w, "  not recorded: %s answered (%s delivered, %s skipped, %s failed, %s unknown); the state holds them as unknown\n",
			plural(n, "target", "targets"), Count(c.Delivered), Count(c.Skipped), Count(c.Failed), Count(c.Unknown))
	}
	if u.NotSent > 0 {
		fmt.Fprintf(v.w, "  not recorded: %s never sent; the state holds them as unknown\n", plural(u.NotSent, "target", "targets"))
	}
	if n := res.NotStarted - u.NotSent; n > 0 {
		fmt.Fprintf(v.w, "  not sent: %s\n", plural(n, "target", "targets"))
	}
}
