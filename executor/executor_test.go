package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// memJournal keeps entries in memory, like the file journal without a disk.
type memJournal struct {
	mu      sync.Mutex
	entries []state.Entry
	fail    error
}

func (j *memJournal) Append(es ...state.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	j.entries = append(j.entries, es...)
	return nil
}

// fakeSender answers each request with reply(attempt, batch).
type fakeSender struct {
	mu       sync.Mutex
	calls    int
	requests [][]pushapi.Notification
	reply    func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error)
}

func (f *fakeSender) Send(_ context.Context, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.requests = append(f.requests, batch)
	f.mu.Unlock()
	return f.reply(call, batch)
}

// deliverAll answers every target delivered, except users listed in fail
// (failed) and skip (skipped).
func deliverAll(fail, skip map[string]bool) func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
	return func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		resp := &pushapi.SendResponse{RequestID: fmt.Sprintf("req-%d", call), StatusCode: 200}
		for _, n := range batch {
			var rs []pushapi.Result
			one := 1
			for _, u := range n.UserIDs {
				switch {
				case fail[u]:
					rs = append(rs, pushapi.Result{UserID: u, Outcome: pushapi.OutcomeFailed, Message: "device error"})
					resp.StatusCode = 207
				case skip[u]:
					rs = append(rs, pushapi.Result{UserID: u, Outcome: pushapi.OutcomeSkipped, Reason: "no_active_device"})
				default:
					rs = append(rs, pushapi.Result{UserID: u, Outcome: pushapi.OutcomeDelivered, DeviceCount: &one})
				}
			}
			for _, d := range n.DeviceIDs {
				rs = append(rs, pushapi.Result{DeviceID: d, Outcome: pushapi.OutcomeDelivered, DeviceCount: &one})
			}
			if len(n.Topics) > 0 {
				rs = append(rs, pushapi.Result{Topics: n.Topics, Outcome: pushapi.OutcomeDelivered, DeviceCount: &one})
			}
			resp.Results = append(resp.Results, rs)
		}
		return resp, nil
	}
}

func users(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func plan(t *testing.T, st *state.State, ms ...*config.Message) *planner.Plan {
	t.Helper()
	p, err := planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}, Messages: ms}, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func note(addr, tag string, ids ...string) *config.Message {
	return &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: ids},
		Content: config.Content{Title: "T", Body: "B", Tag: tag}}
}

func noSleep(context.Context, time.Duration) error { return nil }

func TestApplyOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		msgs     []*config.Message
		reply    func(int, []pushapi.Notification) (*pushapi.SendResponse, error)
		want     Counts
		requests int
		calls    int
		retries  int
		errs     int
		fatal    string
		outcome  map[string]state.Outcome // address/target -> outcome in state
	}{
		{name: "all delivered", msgs: []*config.Message{note("notification.a", "", users(1200, "u")...)},
			reply: deliverAll(nil, nil), want: Counts{Delivered: 1200}, requests: 3, calls: 3,
			outcome: map[string]state.Outcome{"notification.a/u0": state.Delivered, "notification.a/u1199": state.Delivered}},
		{name: "failed and skipped", msgs: []*config.Message{note("notification.a", "", "u1", "u2", "u3")},
			reply: deliverAll(map[string]bool{"u2": true}, map[string]bool{"u3": true}), want: Counts{Delivered: 1, Failed: 1, Skipped: 1}, requests: 1, calls: 1,
			outcome: map[string]state.Outcome{"notification.a/u2": state.Failed, "notification.a/u3": state.Skipped}},
		{name: "validation error fails the batch", msgs: []*config.Message{note("notification.a", "", "u1"), note("notification.b", "", "u2")},
			reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
				return nil, &pushapi.ValidationError{RequestID: "req-400", Issues: []pushapi.Issue{{Index: 1, Field: "title", Message: "too long"}}}
			}, want: Counts{Failed: 2}, calls: 1, errs: 1,
			outcome: map[string]state.Outcome{"notification.a/u1": state.Failed, "notification.b/u2": state.Failed}},
		{name: "ambiguous untagged becomes unknown", msgs: []*config.Message{note("notification.a", "", "u1")},
			reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
				return nil, &pushapi.StatusError{Method: "POST", StatusCode: 502, RequestID: "req-502"}
			}, want: Counts{Unknown: 1}, calls: 1, errs: 1, outcome: map[string]state.Outcome{"notification.a/u1": state.Unknown}},
		{name: "ambiguous tagged is retried", msgs: []*config.Message{note("notification.a", "t", "u1")},
			reply: func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
				if call == 1 {
					return nil, &pushapi.TransportError{Op: "POST /push-notifications/send", Err: errors.New("connection reset"), Sent: true}
				}
				return deliverAll(nil, nil)(call, b)
			}, want: Counts{Delivered: 1}, requests: 1, calls: 2, retries: 1, outcome: map[string]state.Outcome{"notification.a/u1": state.Delivered}},
		{name: "429 is retried", msgs: []*config.Message{note("notification.a", "", "u1")},
			reply: func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
				if call < 3 {
					return nil, &pushapi.StatusError{Method: "POST", StatusCode: 429, RetryAfter: time.Second}
				}
				return deliverAll(nil, nil)(call, b)
			}, want: Counts{Delivered: 1}, requests: 1, calls: 3, retries: 2, outcome: map[string]state.Outcome{"notification.a/u1": state.Delivered}},
		{name: "safe failure exhausts attempts", msgs: []*config.Message{note("notification.a", "", "u1")},
			reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
				return nil, &pushapi.TransportError{Op: "POST /push-notifications/send", Err: errors.New("connection refused")}
			}, want: Counts{Failed: 1}, calls: 5, retries: 4, errs: 1, outcome: map[string]state.Outcome{"notification.a/u1": state.Failed}},
		{name: "401 stops the run", msgs: []*config.Message{note("notification.a", "", users(2000, "u")...)},
			reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
				return nil, &pushapi.AuthError{RequestID: "req-401", KeyEnv: "PUSHFORM_API_KEY"}
			}, fatal: "PUSHFORM_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := state.New("test")
			p := plan(t, st, tt.msgs...)
			s := &fakeSender{reply: tt.reply}
			j := &memJournal{}
			res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Sleep: noSleep, Now: func() time.Time { return now }})
			if tt.fatal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fatal) {
					t.Fatalf("err = %v, want mention of %s", err, tt.fatal)
				}
				if s.calls != 1 {
					t.Errorf("%d calls after a 401, want 1", s.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts != tt.want || res.Requests != tt.requests || s.calls != tt.calls || res.Retries != tt.retries || len(res.Errors) != tt.errs {
				t.Errorf("counts %+v requests %d calls %d retries %d errors %d; want %+v %d %d %d %d",
					res.Counts, res.Requests, s.calls, res.Retries, len(res.Errors), tt.want, tt.requests, tt.calls, tt.retries, tt.errs)
			}
			for key, want := range tt.outcome {
				addr, id, _ := strings.Cut(key, "/")
				if got := st.Messages[addr].Targets[id].Outcome; got != want {
					t.Errorf("%s: %s, want %s", key, got, want)
				}
			}
			// Replaying the journal over a fresh state gives the same state.
			replayed := state.New("test")
			for _, e := range j.entries {
				if err := replayed.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
			}
			for addr, m := range st.Messages {
				for id, tgt := range m.Targets {
					if got := replayed.Messages[addr].Targets[id]; got.Outcome != tgt.Outcome || got.RequestID != tgt.RequestID {
						t.Errorf("replay %s/%s: %+v, memory %+v", addr, id, got, tgt)
					}
				}
			}
		})
	}
}

func TestApplyThenPlanIsNoOp(t *testing.T) {
	st := state.New("test")
	msgs := []*config.Message{note("notification.a", "t", users(700, "u")...), note("notification.b", "", "x")}
	p := plan(t, st, msgs...)
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), &fakeSender{reply: deliverAll(nil, nil)}, Options{Parallelism: 4})
	if err != nil || res.Counts.Delivered != 701 {
		t.Fatalf("apply: %v %+v", err, res.Counts)
	}
	again := plan(t, st, msgs...)
	if again.HasChanges() {
		t.Fatalf("second plan has changes: %+v", again.Summary)
	}
}

func TestInterruptStopsNewRequests(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", users(5000, "u")...))
	ctx, cancel := context.WithCancel(context.Background())
	s := &fakeSender{}
	s.reply = func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
		if call == 2 {
			cancel()
		}
		return deliverAll(nil, nil)(call, b)
	}
	res, err := Apply(ctx, p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.NotStarted == 0 || s.calls >= 10 {
		t.Fatalf("interrupted %v, not started %d, calls %d", res.Interrupted, res.NotStarted, s.calls)
	}
	if res.Counts.Delivered != s.calls*500 {
		t.Errorf("in-flight requests must finish: delivered %d after %d calls", res.Counts.Delivered, s.calls)
	}
}

func TestJournalFailureStopsBeforeSending(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", "u1"))
	s := &fakeSender{reply: deliverAll(nil, nil)}
	_, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{fail: errors.New("disk full")}, st), s, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if s.calls != 0 {
		t.Fatalf("sent %d requests without a journal", s.calls)
	}
}
