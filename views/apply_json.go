package views

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
)

// ApplyJSON shows an apply run as JSON lines: a version line first, one
// object per event, a summary last.
type ApplyJSON struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewApplyJSON returns a JSON apply view writing to w, and writes the
// version line at once, so it comes first whatever happens next.
func NewApplyJSON(w io.Writer) *ApplyJSON {
	v := &ApplyJSON{enc: json.NewEncoder(w)}
	// A struct, not a map: the documented first line has "type" first.
	v.enc.Encode(struct {
		Type          string `json:"type"`
		FormatVersion string `json:"format_version"`
	}{"version", planner.FormatVersion})
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
	v.enc.Encode(map[string]any{"type": "summary", "changes": false})
}

// Event writes the event as one line.
func (v *ApplyJSON) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enc.Encode(struct {
		executor.Event
		Delay string `json:"delay,omitempty"`
	}{e, durationString(e.Delay)})
}

// Finish writes the summary line.
func (v *ApplyJSON) Finish(p *planner.Plan, res *executor.Result, took time.Duration, cfg *config.Config) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enc.Encode(struct {
		Type string `json:"type"`
		*executor.Result
		Errors  []string `json:"errors"`
		Seconds float64  `json:"seconds"`
	}{"summary", res, batchErrors(res.Errors, cfg, exact), took.Seconds()})
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// exact leaves text as it is: encoding/json escapes what needs escaping.
func exact(s string) string { return s }
