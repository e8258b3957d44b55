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
	line    eventLine     // the event being encoded
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
	v.enc.Encode(newApplySummary(false, &executor.Result{}, nil, 0, v.service))
	v.flushLocked()
}

// applySummary is the last line of apply --json. Every key is always
// there, zero when there is nothing to count, with or without changes:
// scripts read it without checking what is present.
type applySummary struct {
	Type string `json:"type"` // "summary"
	// Changes is false when there was nothing to apply.
	Changes bool            `json:"changes"`
	Counts  executor.Counts `json:"counts"`
	// Requests counts the requests the service answered; Sent those sent,
	// answered or not (a request whose answer never came, the service
	// unreachable, counts in Sent only); retries are not counted again.
	Requests int `json:"requests"`
	Sent     int `json:"sent"`
	Retries  int `json:"retries"`
	// Failures lists failed targets (the first executor.MaxListed);
	// Skipped counts skipped targets by reason.
	Failures    []executor.Failure `json:"failures"`
	Skipped     map[string]int     `json:"skipped"`
	Interrupted bool               `json:"interrupted"`
	NotStarted  int                `json:"not_started"`
	// JournalError and Unrecorded say what a failed journal write left
	// unrecorded ("" and zeros when every outcome was recorded).
	JournalError string              `json:"journal_error"`
	Unrecorded   executor.Unrecorded `json:"unrecorded"`
	Errors       []string            `json:"errors"`
	Seconds      float64             `json:"seconds"`
	// Service is the service the run talked to (see plandoc.Service).
	Service *plandoc.Service `json:"service"`
}

func newApplySummary(changes bool, res *executor.Result, errs []string, took time.Duration, svc *plandoc.Service) applySummary {
	s := applySummary{
		Type: "summary", Changes: changes, Counts: res.Counts, Requests: res.Requests, Sent: res.Sent, Retries: res.Retries,
		Failures: res.Failures, Skipped: res.Skipped, Interrupted: res.Interrupted, NotStarted: res.NotStarted,
		JournalError: res.JournalError, Errors: errs, Seconds: took.Seconds(), Service: svc,
	}
	if res.Unrecorded != nil {
		s.Unrecorded = *res.Unrecorded
	}
	if s.Failures == nil {
		s.Failures = []executor.Failure{}
	}
	if s.Skipped == nil {
		s.Skipped = map[string]int{}
	}
	if s.Errors == nil {
		s.Errors = []string{}
	}
	return s
}

// Event writes the event as one line.
func (v *ApplyJSON) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line = eventLine{e, durationString(e.Delay)}
	v.enc.Encode(&v.line) // a field: encoded without an allocation
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
	v.enc.Encode(newApplySummary(true, res, batchErrors(res.Errors, cfg, exact), took, v.service))
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
