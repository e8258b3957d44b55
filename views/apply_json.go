package views

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/plandoc"
	"pushform/planner"
)

// ApplyJSON shows an apply run as JSON lines: a version line first, one
// object per event, a summary last.
//
// Events are written in groups, at most flushAfter after they happen: a
// fast service answers thousands of requests a second, and a write per
// event (to a pipe, waking its reader each time) took 8% of the CPU of a
// million-target apply at 0 ms. The version line, a summary and Flush
// write at once.
type ApplyJSON struct {
	service *plandoc.Service // named in every summary
	mu      sync.Mutex
	w       io.Writer
	pending bytes.Buffer  // lines not written yet
	enc     *json.Encoder // into pending
	timer   *time.Timer   // flushes pending; armed while it holds lines
	armed   bool
	after   time.Duration // flushAfter; tests set more
}

// flushAfter is how long an event may wait to be written; flushAt is how
// much may wait.
const (
	flushAfter = 10 * time.Millisecond
	flushAt    = 64 << 10
)

// NewApplyJSON returns a JSON apply view writing to w, and writes the
// version line at once, so it comes first whatever happens next.
func NewApplyJSON(w io.Writer) *ApplyJSON {
	v := &ApplyJSON{w: w, after: flushAfter}
	v.enc = json.NewEncoder(&v.pending)
	// A struct, not a map: the documented first line has "type" first.
	v.enc.Encode(struct {
		Type          string `json:"type"`
		FormatVersion string `json:"format_version"`
	}{"version", planner.FormatVersion})
	v.flushLocked()
	return v
}

// Plan writes nothing: apply --json streams events only.
func (v *ApplyJSON) Plan(*planner.Plan) error { return nil }

// Start writes nothing: the first request event follows.
func (v *ApplyJSON) Start(*planner.Plan) {}

// NoChanges writes a summary saying there were no changes.
func (v *ApplyJSON) NoChanges() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enc.Encode(map[string]any{"type": "summary", "changes": false, "service": v.service})
	v.flushLocked()
}

// Event writes the event as one line.
func (v *ApplyJSON) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := eventLine{e, durationString(e.Delay)}
	if b, ok := appendEvent(v.pending.AvailableBuffer(), &l); ok {
		v.pending.Write(b)
	} else {
		v.enc.Encode(l)
	}
	switch {
	case v.pending.Len() >= flushAt:
		v.flushLocked()
	case v.armed:
	case v.timer == nil:
		v.timer, v.armed = time.AfterFunc(v.after, v.Flush), true
	default:
		v.timer.Reset(v.after)
		v.armed = true
	}
}

// Flush writes the events not written yet.
func (v *ApplyJSON) Flush() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.flushLocked()
}

func (v *ApplyJSON) flushLocked() {
	if v.armed {
		v.timer.Stop()
		v.armed = false
	}
	if v.pending.Len() > 0 {
		v.w.Write(v.pending.Bytes()) // as before, a failed write of progress stops nothing
		v.pending.Reset()
	}
}

// Finish writes the summary line.
func (v *ApplyJSON) Finish(p *planner.Plan, res *executor.Result, took time.Duration, cfg *config.Config) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enc.Encode(struct {
		Type string `json:"type"`
		*executor.Result
		Errors  []string         `json:"errors"`
		Seconds float64          `json:"seconds"`
		Service *plandoc.Service `json:"service"`
	}{"summary", res, batchErrors(res.Errors, cfg, exact), took.Seconds(), v.service})
	v.flushLocked()
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// exact leaves text as it is: encoding/json escapes what needs escaping.
func exact(s string) string { return s }
