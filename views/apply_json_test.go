package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/internal/testutil"
	"pushform/planner"
)

// writes records each Write whole and signals it.
type writes struct {
	mu     sync.Mutex
	chunks []string
	wrote  chan struct{}
}

func newWrites() *writes { return &writes{wrote: make(chan struct{}, 1000)} }

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.chunks = append(w.chunks, string(p))
	w.mu.Unlock()
	w.wrote <- struct{}{}
	return len(p), nil
}

func (w *writes) all() (n int, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.chunks), strings.Join(w.chunks, "")
}

// TestApplyJSONGroupsEvents: events wait to be written together, in
// order, every one a whole line; the version line, the summary and Flush
// write at once.
func TestApplyJSONGroupsEvents(t *testing.T) {
	tests := []struct {
		name       string
		events     int
		end        func(v *ApplyJSON)
		wantWrites int // after end, the version line's included
		summary    bool
	}{
		{"flush", 100, func(v *ApplyJSON) { v.Flush() }, 2, false},
		{"summary", 100, func(v *ApplyJSON) {
			v.Finish(&planner.Plan{}, &executor.Result{}, time.Second, &config.Config{})
		}, 2, true},
		{"no changes", 0, func(v *ApplyJSON) { v.NoChanges() }, 2, true},
		// About 180 bytes an event: flushAt fills twice.
		{"full", 800, func(v *ApplyJSON) { v.Flush() }, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWrites()
			v := NewApplyJSON(w)
			v.after = time.Hour // only Flush, a summary or a full buffer write
			if n, text := w.all(); n != 1 || !strings.HasPrefix(text, `{"type":"version"`) {
				t.Fatalf("the version line is not written at once: %d writes %q", n, text)
			}
			for b := range tt.events {
				v.Event(executor.Event{Type: executor.EventResponse, Batch: b, Addresses: []string{"notification.a"}, Targets: 500, RequestID: "req-0123456789abcdef01234567", Status: 200})
			}
			tt.end(v)
			n, text := w.all()
			if n != tt.wantWrites {
				t.Errorf("%d writes, want %d", n, tt.wantWrites)
			}
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			want := 1 + tt.events
			if tt.summary {
				want++
			}
			if len(lines) != want {
				t.Fatalf("%d lines, want %d", len(lines), want)
			}
			for i, line := range lines[1 : 1+tt.events] {
				var e struct {
					Type  string `json:"type"`
					Batch int    `json:"batch"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type != "response" || e.Batch != i {
					t.Fatalf("line %d is %q (%v), want the response of batch %d", i+1, line, err, i)
				}
			}
			if tt.summary && !strings.Contains(lines[len(lines)-1], `"type":"summary"`) {
				t.Errorf("the last line is not the summary: %s", lines[len(lines)-1])
			}
		})
	}
}

// TestApplyJSONWritesWithoutFlush: an event is written on its own soon
// after it happens, without waiting for another.
func TestApplyJSONWritesWithoutFlush(t *testing.T) {
	w := newWrites()
	v := NewApplyJSON(w)
	<-w.wrote // the version line
	for b := range 3 {
		v.Event(executor.Event{Type: executor.EventRequest, Batch: b, Targets: 500})
		select {
		case <-w.wrote:
		case <-time.After(time.Minute):
			t.Fatalf("the request event of batch %d was not written", b)
		}
		_, text := w.all()
		if want := `"type":"request","batch":` + string(rune('0'+b)); !strings.HasSuffix(strings.TrimSpace(text), "}") || !strings.Contains(text, want) {
			t.Fatalf("written %q, want %s", text, want)
		}
	}
	var buf bytes.Buffer
	v.mu.Lock()
	v.w = &buf // nothing is left to write
	v.mu.Unlock()
	v.Flush()
	if buf.Len() != 0 {
		t.Errorf("Flush wrote %q after every event was written", buf.String())
	}
}

// TestApplySummaryKeys pins the summary line's keys (golden): the same
// keys with no changes, with nothing answered (the service unreachable:
// sent 1, requests 0) and with every count set, zero when none.
func TestApplySummaryKeys(t *testing.T) {
	cfg := &config.Config{Messages: []*config.Message{{Address: "notification.hello", Pos: config.Pos{Filename: "main.hcl", Line: 3}}}}
	var out bytes.Buffer
	v := NewApplyJSON(&out)
	v.NoChanges()
	v.Finish(nil, &executor.Result{Sent: 1, Counts: executor.Counts{Unknown: 2}, Errors: []*executor.BatchError{
		{Batch: 0, Addresses: []string{"notification.hello"}, Err: errors.New("connection refused"), Unknown: true}}}, 1500*time.Millisecond, cfg)
	v.Finish(nil, &executor.Result{Counts: executor.Counts{Delivered: 3, Skipped: 1, Failed: 1, Unknown: 1}, Requests: 2, Sent: 3, Retries: 1,
		Failures: []executor.Failure{{Address: "notification.hello", Target: "erin", Message: "bad token", RequestID: "req-2"}},
		Skipped:  map[string]int{"no_active_device": 1}, Interrupted: true, NotStarted: 4, JournalError: "disk full",
		Unrecorded: &executor.Unrecorded{Counts: executor.Counts{Delivered: 1}, NotSent: 4}}, time.Second, cfg)
	testutil.Golden(t, filepath.Join("testdata", "apply-summary.jsonl"), out.Bytes())
	var keys []string
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(maps.Keys(m))
		if i == 0 {
			keys = got
		} else if !slices.Equal(got, keys) {
			t.Errorf("summary %d has keys %v, the first %v", i+1, got, keys)
		}
	}
}
