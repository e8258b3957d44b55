package command

import (
	"encoding/json"
	"errors"
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
	"pushform/pushapi"
	"pushform/render"
)

// applyView shows apply progress and results, as text or JSON lines.
type applyView struct {
	mu   sync.Mutex
	w    io.Writer
	json *json.Encoder
	m    *Meta
	prog *progress // nil in JSON mode
}

func newJSONView(w io.Writer) *applyView {
	v := &applyView{w: w, json: json.NewEncoder(w)}
	// A struct, not a map: the documented first line has "type" first.
	v.json.Encode(struct {
		Type          string `json:"type"`
		FormatVersion string `json:"format_version"`
	}{"version", planner.FormatVersion})
	return v
}

func newHumanView(m *Meta) *applyView {
	return &applyView{w: m.Stdout, m: m, prog: newProgress(m.StdoutTerminal, m.Color(), time.Now)}
}

// start is called once the plan is known, right before sending.
func (v *applyView) start(p *planner.Plan) {
	if v.prog == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.prog.begin(p.Summary.Targets)
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
func (v *applyView) println(line string) {
	io.WriteString(v.w, v.prog.clear()+line+"\n"+v.prog.redraw())
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
	v.mu.Lock()
	io.WriteString(v.w, v.prog.clear())
	v.prog.stopped = true
	v.mu.Unlock()
	c := res.Counts
	fmt.Fprintf(v.w, "\nApply complete: %s delivered, %s skipped, %s failed, %s unknown, in %s (%s).\n",
		render.Count(c.Delivered), render.Count(c.Skipped), render.Count(c.Failed), render.Count(c.Unknown),
		plural(res.Requests, "request"), took.Round(time.Millisecond))
	for reason, n := range res.Skipped {
		fmt.Fprintf(v.w, "  skipped %s: %s (the service says retrying does not help)\n", plural(n, "target"), clean(reason))
	}
	for _, f := range res.Failures {
		fmt.Fprintf(v.w, "  failed: %s -> %s: %s (request id %s)\n", f.Address, clean(f.Target), clean(f.Message), clean(f.RequestID))
	}
	if n := c.Failed - len(res.Failures); n > 0 && len(res.Failures) == executor.MaxListed {
		fmt.Fprintf(v.w, "  ... and more; pushform state show ADDR lists every target\n")
	}
	for _, e := range batchErrors(res.Errors, cfg) {
		fmt.Fprintf(v.m.Stderr, "Error: %s\n", cleanLines(e))
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
			if len(ve.Issues) == 0 { // no issues array: show what it said instead
				detail := ve.Excerpt
				if detail == "" {
					detail = "(an empty answer)"
				}
				fmt.Fprintf(&b, " %s", detail)
				for _, addr := range be.Addresses {
					fmt.Fprintf(&b, "\n  %s (%s)", addr, pos[addr])
				}
			}
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

// Progress display settings.
const (
	barAfter   = time.Second            // no bar for applies quicker than this
	barEvery   = 100 * time.Millisecond // redraw the bar at most this often
	lineEvery  = 5 * time.Second        // a plain progress line without a terminal
	barWidth   = 24
	clearToEOL = "\x1b[K"
	greenOn    = "\x1b[32m"
	colourOff  = "\x1b[0m"
)

// progress renders targets done: a bar redrawn in place on a terminal, or a
// plain line every few seconds in a log. Its methods return what to write,
// so the view writes under its own lock; none of them writes itself.
type progress struct {
	terminal, color bool
	now             func() time.Time
	total, done     int
	started, last   time.Time
	shown           int  // width of the bar on screen; 0 when none is
	stopped         bool // finish has run: draw nothing more
}

func newProgress(terminal, color bool, now func() time.Time) *progress {
	return &progress{terminal: terminal, color: color, now: now}
}

// begin starts the clock for total targets.
func (p *progress) begin(total int) {
	p.total = total
	p.started = p.now()
	p.last = p.started
}

// advance counts n more targets done.
func (p *progress) advance(n int) string {
	p.done += n
	if p.stopped || p.started.IsZero() {
		return ""
	}
	now := p.now()
	if !p.terminal {
		if now.Sub(p.last) < lineEvery {
			return ""
		}
		p.last = now
		return "  ... " + p.status(now) + "\n"
	}
	if now.Sub(p.started) < barAfter || (p.shown > 0 && now.Sub(p.last) < barEvery && p.done < p.total) {
		return ""
	}
	p.last = now
	return p.bar(now)
}

// redraw draws the bar again after a line printed over it.
func (p *progress) redraw() string {
	if !p.terminal || p.stopped || p.started.IsZero() || p.now().Sub(p.started) < barAfter {
		return ""
	}
	return p.bar(p.now())
}

// clear removes the bar from the screen.
func (p *progress) clear() string {
	if p.shown == 0 {
		return ""
	}
	n := p.shown
	p.shown = 0
	if p.color {
		return "\r" + clearToEOL
	}
	return "\r" + strings.Repeat(" ", n) + "\r"
}

// bar returns the bar, drawn over the current line.
func (p *progress) bar(now time.Time) string {
	filled := barWidth
	if p.total > 0 && p.done < p.total {
		filled = barWidth * p.done / p.total
	}
	fill, rest := strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled)
	text := " " + p.status(now)
	width := 2 + barWidth + len([]rune(text))
	if p.color {
		p.shown = width
		return "\r[" + greenOn + fill + colourOff + rest + "]" + text + clearToEOL
	}
	pad := ""
	if width < p.shown {
		pad = strings.Repeat(" ", p.shown-width) // cover a longer previous bar
	}
	p.shown = width + len(pad)
	return "\r[" + fill + rest + "]" + text + pad
}

// status says "4,500 of 12,000 targets (37%), 1,230/s, about 6s left".
func (p *progress) status(now time.Time) string {
	s := fmt.Sprintf("%s of %s targets", render.Count(p.done), render.Count(p.total))
	if p.total > 0 {
		s += fmt.Sprintf(" (%d%%)", 100*p.done/p.total)
	}
	elapsed := now.Sub(p.started)
	if elapsed <= 0 || p.done == 0 {
		return s
	}
	rate := float64(p.done) / elapsed.Seconds()
	s += fmt.Sprintf(", %s/s", render.Count(int(rate+0.5)))
	if left := p.total - p.done; left > 0 {
		eta := max(time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second), time.Second)
		s += fmt.Sprintf(", about %s left", eta)
	}
	return s
}
