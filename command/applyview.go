package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/render"
	"strings"
	"sync"
	"time"
)

// applyView shows apply progress and results, as text or JSON lines.
type applyView struct {
	mu       sync.Mutex
	w        io.Writer
	json     *json.Encoder
	m        *Meta
	done     int
	lastLine time.Time
	verbose  bool // a line per request
}

func newJSONView(w io.Writer) *applyView {
	v := &applyView{w: w, json: json.NewEncoder(w)}
	v.json.Encode(map[string]string{"type": "version", "format_version": planner.FormatVersion})
	return v
}

func newHumanView(m *Meta) *applyView {
	return &applyView{w: m.Stdout, m: m, lastLine: time.Now()}
}

func (v *applyView) noChanges() {
	if v.json != nil {
		v.json.Encode(map[string]any{"type": "summary", "changes": false})
		return
	}
	fmt.Fprintln(v.w, "\nNothing to send.")
}

func (v *applyView) event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.json != nil {
		v.json.Encode(struct {
			executor.Event
			Delay string `json:"delay,omitempty"`
		}{e, durationString(e.Delay)})
		return
	}
	switch e.Type {
	case executor.EventResponse:
		v.done += e.Targets
		if time.Since(v.lastLine) >= 5*time.Second {
			fmt.Fprintf(v.w, "  ... %s sent\n", plural(v.done, "target"))
			v.lastLine = time.Now()
		}
	case executor.EventRetry:
		fmt.Fprintf(v.w, "  request %d: try %d failed, retrying in %s: %s\n", e.Batch+1, e.Attempt, e.Delay.Round(time.Millisecond), e.Error)
	case executor.EventForget:
		fmt.Fprintf(v.w, "  forgot %s (state only)\n", strings.Join(e.Addresses, ", "))
	}
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// finish prints the outcome of the run.
func (v *applyView) finish(p *planner.Plan, res *executor.Result, took time.Duration, cfg *config.Config) {
	if v.json != nil {
		v.json.Encode(struct {
			Type string `json:"type"`
			*executor.Result
			Errors  []string `json:"errors"`
			Seconds float64  `json:"seconds"`
		}{"summary", res, batchErrors(res.Errors, cfg), took.Seconds()})
		return
	}
	c := res.Counts
	fmt.Fprintf(v.w, "\nApply complete: %s delivered, %s skipped, %s failed, %s unknown, in %s (%s).\n",
		render.Count(c.Delivered), render.Count(c.Skipped), render.Count(c.Failed), render.Count(c.Unknown),
		plural(res.Requests, "request"), took.Round(time.Millisecond))
	for reason, n := range res.Skipped {
		fmt.Fprintf(v.w, "  skipped %s: %s (the service says retrying does not help)\n", plural(n, "target"), reason)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(v.w, "  failed: %s -> %s: %s (request id %s)\n", f.Address, f.Target, f.Message, f.RequestID)
	}
	if n := c.Failed - len(res.Failures); n > 0 && len(res.Failures) == executor.MaxListed {
		fmt.Fprintf(v.w, "  ... and more; pushform state show ADDR lists every target\n")
	}
	for _, e := range batchErrors(res.Errors, cfg) {
		fmt.Fprintf(v.m.Stderr, "Error: %s\n", e)
	}
	if c.Unknown > 0 {
		fmt.Fprintf(v.w, "  %s unknown: a request's answer was lost; the next plan shows them\n", plural(c.Unknown, "target"))
	}
}

// batchErrors renders failed requests, pointing a 400 back at the blocks it
// came from.
func batchErrors(errs []*executor.BatchError, cfg *config.Config) []string {
	pos := map[string]config.Pos{}
	for _, m := range cfg.Messages {
		pos[m.Address] = m.Pos
	}
	out := []string{}
	for _, be := range errs {
		var ve *pushapi.ValidationError
		if errors.As(be.Err, &ve) {
			var b strings.Builder
			fmt.Fprintf(&b, "request %d was rejected by the service (400, request id %s):", be.Batch+1, ve.RequestID)
			for i, addr := range be.Addresses {
				for _, is := range ve.Issues {
					if is.Index == i || is.Index < 0 {
						fmt.Fprintf(&b, "\n  %s (%s): %s", addr, pos[addr], issueText(is))
					}
				}
			}
			out = append(out, b.String())
			continue
		}
		out = append(out, be.Error())
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
