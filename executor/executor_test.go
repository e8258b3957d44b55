package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		{name: "validation error fails only the blamed notification", msgs: []*config.Message{note("notification.a", "", "u1"), bad("notification.b", "u2")},
			reply: validating("index"), want: Counts{Delivered: 1, Failed: 1}, requests: 1, calls: 2, errs: 1,
			outcome: map[string]state.Outcome{"notification.a/u1": state.Delivered, "notification.b/u2": state.Failed}},
		{name: "validation error of a lone notification", msgs: []*config.Message{bad("notification.b", "u1", "u2")},
			reply: validating("excerpt"), want: Counts{Failed: 2}, calls: 1, errs: 1,
			outcome: map[string]state.Outcome{"notification.b/u1": state.Failed, "notification.b/u2": state.Failed}},
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
		{name: "a try that may have gone through keeps it unknown", msgs: []*config.Message{note("notification.a", "t", "u1")},
			reply: func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
				if call == 1 {
					return nil, &pushapi.StatusError{Method: "POST", StatusCode: 502, RequestID: "req-502"}
				}
				return nil, &pushapi.TransportError{Op: "POST /push-notifications/send", Err: errors.New("connection refused")}
			}, want: Counts{Unknown: 1}, calls: 5, retries: 4, errs: 1, outcome: map[string]state.Outcome{"notification.a/u1": state.Unknown}},
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

// bad is a notification the validating service refuses.
func bad(addr string, ids ...string) *config.Message {
	m := note(addr, "", ids...)
	m.Content.Title = "BAD"
	return m
}

// validating answers like a service that refuses a request (400) when a
// notification's title is "BAD", saying so in the given shape: "index"
// (issues point at the notification), "no index" (issues do not say which
// notification) or "excerpt" (a body without issues); it delivers the
// others.
func validating(shape string) func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
	return func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		ve := &pushapi.ValidationError{RequestID: fmt.Sprintf("req-%d", call)}
		for i, n := range batch {
			if n.Title != "BAD" {
				continue
			}
			switch shape {
			case "index":
				ve.Issues = append(ve.Issues, pushapi.Issue{Index: i, Field: "title", Message: "BAD is not a title"})
			case "no index":
				ve.Issues = append(ve.Issues, pushapi.Issue{Index: -1, Field: "title", Message: "BAD is not a title"})
			default:
				ve.Excerpt = "BAD is not a title"
			}
		}
		if len(ve.Issues) > 0 || ve.Excerpt != "" {
			return nil, ve
		}
		return deliverAll(nil, nil)(call, batch)
	}
}

// refusedRun applies msgs (one request: they are small) through a
// validating service and checks what every run must: each target ends
// delivered by the request that delivered it or failed, the journal replays
// to the same state, each request sent has its own intent and at most one
// outcome, and progress events cover every target once.
func refusedRun(t *testing.T, reply func(int, []pushapi.Notification) (*pushapi.SendResponse, error), msgs ...*config.Message) (*state.State, *Result, *fakeSender, []Event) {
	t.Helper()
	st := state.New("test")
	p := plan(t, st, msgs...)
	if len(p.Batches) != 1 {
		t.Fatalf("%d batches, want the notifications packed in one", len(p.Batches))
	}
	s := &fakeSender{reply: reply}
	j := &memJournal{}
	var events []Event
	res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Sleep: noSleep, Now: func() time.Time { return now },
		Events: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	// Which request delivered which target, as the service saw it.
	deliveredBy := map[string]string{}
	for call, batch := range s.requests {
		resp, err := reply(call+1, batch)
		if err != nil {
			continue
		}
		for _, n := range batch {
			for _, u := range n.UserIDs {
				deliveredBy[u] = resp.RequestID
			}
		}
	}
	total, done := 0, 0
	for _, m := range msgs {
		for _, id := range m.Targets.IDs {
			total++
			tg := st.Messages[m.Address].Targets[id]
			switch {
			case deliveredBy[id] != "":
				if tg.Outcome != state.Delivered || tg.RequestID != deliveredBy[id] {
					t.Errorf("%s/%s delivered by %s, state %+v", m.Address, id, deliveredBy[id], tg)
				}
			case tg.Outcome != state.Failed || tg.RequestID == "" || tg.Message == "":
				t.Errorf("%s/%s not delivered: want failed with a message and a request id, got %+v", m.Address, id, tg)
			}
		}
	}
	for _, e := range events {
		if e.Type == EventResponse || e.Type == EventError {
			done += e.Targets
		}
	}
	if done != total {
		t.Errorf("progress events cover %d targets of %d", done, total)
	}
	replayed := state.New("test")
	open := map[int64]bool{}
	for _, e := range j.entries {
		switch e.Type {
		case state.EntryIntent:
			if open[e.Batch] {
				t.Errorf("request %d journaled twice", e.Batch)
			}
			open[e.Batch] = true
		case state.EntryOutcome:
			if !open[e.Batch] {
				t.Errorf("outcome of request %d without its intent", e.Batch)
			}
			delete(open, e.Batch)
		}
		if err := replayed.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	if len(open) > 0 {
		t.Errorf("requests without an outcome: %v", open)
	}
	for addr, m := range st.Messages {
		for id, tg := range m.Targets {
			if got := replayed.Messages[addr].Targets[id]; *got != *tg {
				t.Errorf("replay %s/%s: %+v, memory %+v", addr, id, got, tg)
			}
		}
	}
	return st, res, s, events
}

// TestRefusedPackedRequest: a 400 on a packed request blames only the
// invalid notification (split out directly when the issues point at it,
// found by bisecting when they do not) and delivers the others in the
// same run.
func TestRefusedPackedRequest(t *testing.T) {
	five := func(badAt ...int) []*config.Message {
		var ms []*config.Message
		for i := range 5 {
			addr, id := fmt.Sprintf("notification.n%d", i), fmt.Sprintf("u%d", i)
			if slices.Contains(badAt, i) {
				ms = append(ms, bad(addr, id))
			} else {
				ms = append(ms, note(addr, "", id))
			}
		}
		return ms
	}
	tests := []struct {
		name  string
		shape string
		msgs  []*config.Message
		calls int
		bad   []string // the addresses blamed
	}{
		{"issues point at it", "index", five(2), 2, []string{"notification.n2"}},
		{"issues point at two", "index", five(0, 4), 2, []string{"notification.n0", "notification.n4"}},
		{"issues without an index: bisect", "no index", five(3), 7, []string{"notification.n3"}},
		{"no issues at all: bisect", "excerpt", five(1), 5, []string{"notification.n1"}},
		{"two invalid, no index", "no index", five(0, 4), 9, []string{"notification.n0", "notification.n4"}},
		{"all invalid, no index", "no index", five(0, 1, 2, 3, 4), 9, []string{"notification.n0", "notification.n1", "notification.n2", "notification.n3", "notification.n4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, res, s, events := refusedRun(t, validating(tt.shape), tt.msgs...)
			if s.calls != tt.calls {
				t.Errorf("%d requests, want %d", s.calls, tt.calls)
			}
			if res.Counts.Failed != len(tt.bad) || res.Counts.Delivered != 5-len(tt.bad) {
				t.Errorf("counts %+v", res.Counts)
			}
			var blamed []string
			for _, be := range res.Errors {
				var ve *pushapi.ValidationError
				if !errors.As(be, &ve) || !strings.HasPrefix(ve.RequestID, "req-") {
					t.Errorf("error %v is not the service's 400 with its request id", be)
				}
				if !strings.Contains(be.Error(), "BAD is not a title") {
					t.Errorf("error %q lacks the service's message", be)
				}
				blamed = append(blamed, be.Addresses...)
			}
			slices.Sort(blamed)
			if fmt.Sprint(blamed) != fmt.Sprint(tt.bad) {
				t.Errorf("blamed %v, want %v", blamed, tt.bad)
			}
			for _, m := range tt.msgs {
				tg := st.Messages[m.Address].Targets[m.Targets.IDs[0]]
				isBad := slices.Contains(tt.bad, m.Address)
				if isBad != strings.Contains(tg.Message, "BAD is not a title") {
					t.Errorf("%s: message %q (blamed %v)", m.Address, tg.Message, isBad)
				}
			}
			splits := 0
			for _, e := range events {
				if e.Type == EventSplit {
					splits++
					if len(e.Parts) == 0 || e.RequestID == "" {
						t.Errorf("split event %+v", e)
					}
				}
			}
			if splits == 0 {
				t.Error("no split event")
			}
		})
	}
}

// TestRefusedWithoutAttribution: a service that refuses any request of more
// than three notifications, never says which and not that it is too large
// (then it would be split to fit: TestTooLarge): bisection stops at its
// budget, the rest is recorded not sent without blaming a block, and
// nothing is lost.
func TestRefusedWithoutAttribution(t *testing.T) {
	var ms []*config.Message
	for i := range 40 {
		ms = append(ms, note(fmt.Sprintf("notification.n%02d", i), "", fmt.Sprintf("u%02d", i)))
	}
	reply := func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		if len(batch) > 3 {
			return nil, &pushapi.ValidationError{RequestID: fmt.Sprintf("req-%d", call), Issues: []pushapi.Issue{{Index: -1, Message: "the request is invalid"}}}
		}
		return deliverAll(nil, nil)(call, batch)
	}
	st, res, s, _ := refusedRun(t, reply, ms...)
	if max := 1 + bisectBudget(40); s.calls > max {
		t.Errorf("%d requests, budget %d", s.calls, max)
	}
	var ue *UnattributedError
	if len(res.Errors) == 0 || !errors.As(res.Errors[0], &ue) || !strings.Contains(res.Errors[0].Error(), "did not say which notification") {
		t.Fatalf("errors %v", res.Errors)
	}
	var ve *pushapi.ValidationError
	if errors.As(res.Errors[0], &ve) {
		t.Error("an unattributed 400 must not read as a 400 blaming these blocks")
	}
	notSent := 0
	for _, m := range st.Messages {
		for _, tg := range m.Targets {
			if tg.Outcome == state.Failed {
				notSent++
				if !strings.Contains(tg.Message, "did not say which notification was invalid") {
					t.Errorf("failed target message %q", tg.Message)
				}
			}
		}
	}
	if notSent == 0 || res.Counts.Delivered == 0 || res.Counts.Delivered+notSent != 40 {
		t.Errorf("delivered %d, not sent %d", res.Counts.Delivered, notSent)
	}
}

// TestRefusedCrash stops the journal at every point of a run that splits a
// refused request, as a crash would, and checks the journal left: no target
// recorded failed or not sent that the service delivered, none recorded
// delivered that it did not, and none missing.
func TestRefusedCrash(t *testing.T) {
	msgs := []*config.Message{note("notification.a", "", "u1"), bad("notification.b", "u2"), note("notification.c", "t", "u3"), note("notification.d", "", "u4")}
	for _, shape := range []string{"index", "no index"} {
		for crashAt := 1; ; crashAt++ {
			st := state.New("test")
			p := plan(t, st, msgs...)
			j := &crashJournal{left: crashAt}
			s := &fakeSender{reply: validating(shape)}
			_, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Sleep: noSleep})
			if err == nil {
				if crashAt == 1 {
					t.Fatal("the journal never failed")
				}
				break // past the last append
			}
			delivered := map[string]bool{}
			for call, batch := range s.requests {
				if _, err := validating(shape)(call+1, batch); err == nil {
					for _, n := range batch {
						for _, u := range n.UserIDs {
							delivered[u] = true
						}
					}
				}
			}
			disk := state.New("test")
			for _, e := range j.entries {
				if err := disk.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range msgs {
				id := m.Targets.IDs[0]
				var o state.Outcome = "none"
				if dm := disk.Messages[m.Address]; dm != nil && dm.Targets[id] != nil {
					o = dm.Targets[id].Outcome
				}
				switch {
				case delivered[id] && o != state.Delivered && o != state.Unknown:
					t.Errorf("%s, crash at append %d: %s delivered, journal says %s", shape, crashAt, id, o)
				case !delivered[id] && o == state.Delivered:
					t.Errorf("%s, crash at append %d: %s not delivered, journal says delivered", shape, crashAt, id)
				case o == "none" && len(s.requests) > 0:
					t.Errorf("%s, crash at append %d: %s sent but not in the journal", shape, crashAt, id)
				}
			}
		}
	}
}

// crashJournal accepts left appends, then fails every one, as a process
// killed after the left-th fsync would have left its journal.
type crashJournal struct {
	memJournal
	left int
}

func (j *crashJournal) Append(es ...state.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.left == 0 {
		return errors.New("killed")
	}
	j.left--
	j.entries = append(j.entries, es...)
	return nil
}

// TestDecodeErrorOn2xxNotRetried: an unreadable 200 was processed by the
// service: it is not sent again in the run, and its targets are unknown
// with the request id and one more unanswered request; after
// MaxUnknownResends of those, the plan holds a tagged target back.
func TestDecodeErrorOn2xxNotRetried(t *testing.T) {
	st := state.New("test")
	msgs := []*config.Message{note("notification.t", "tag", "u1", "u2")}
	s := &fakeSender{reply: func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
		return nil, &pushapi.DecodeError{Method: "POST", StatusCode: 200, RequestID: fmt.Sprintf("req-%d", call), Err: errors.New("4 results for 2 targets")}
	}}
	for run := 1; run <= planner.DefaultMaxUnknownResends; run++ {
		p := plan(t, st, msgs...)
		if p.Summary.Targets != 2 {
			t.Fatalf("run %d: plan sends %d targets, want 2", run, p.Summary.Targets)
		}
		res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Sleep: noSleep})
		if err != nil {
			t.Fatal(err)
		}
		if s.calls != run || res.Retries != 0 || res.Counts.Unknown != 2 {
			t.Fatalf("run %d: %d calls, %d retries, counts %+v: an unreadable 200 must not be sent again in the run", run, s.calls, res.Retries, res.Counts)
		}
		tg := st.Messages["notification.t"].Targets["u1"]
		if tg.Outcome != state.Unknown || tg.RequestID != fmt.Sprintf("req-%d", run) || tg.Unanswered != run || !strings.Contains(tg.Message, "4 results") {
			t.Fatalf("run %d: target %+v", run, tg)
		}
	}
	p := plan(t, st, msgs...)
	if p.HasChanges() || p.Changes[0].Targets.Held != 2 || !strings.Contains(strings.Join(p.Warnings, "\n"), "req-3") {
		t.Fatalf("after %d unanswered requests the plan must hold the targets, naming the request: %+v %q", planner.DefaultMaxUnknownResends, p.Changes[0].Targets, p.Warnings)
	}
}

// TestAuthErrorOnce: a 401 stops the run; it is returned once (not also
// listed among the batch errors, which apply prints too), and the request's
// targets are recorded failed with the 401's request id.
func TestAuthErrorOnce(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", users(1200, "u")...))
	s := &fakeSender{reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
		return nil, &pushapi.AuthError{RequestID: "req-401", KeyEnv: "PUSHFORM_API_KEY"}
	}}
	var errorEvents []Event
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 1,
		Events: func(e Event) {
			if e.Type == EventError {
				errorEvents = append(errorEvents, e)
			}
		}})
	var ae *pushapi.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want the 401", err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("the 401 is also in Result.Errors: %v", res.Errors)
	}
	if s.calls != 1 || len(errorEvents) != 1 || errorEvents[0].RequestID != "req-401" || errorEvents[0].Status != 401 {
		t.Errorf("%d calls, error events %+v", s.calls, errorEvents)
	}
	tg := st.Messages["notification.a"].Targets["u0"]
	if tg.Outcome != state.Failed || tg.RequestID != "req-401" || !strings.Contains(tg.Message, "401") {
		t.Errorf("target of the refused request: %+v", tg)
	}
	// A later request is not journaled at all, or journaled and then
	// recorded not sent.
	if tg := st.Messages["notification.a"].Targets["u1100"]; tg != nil && (tg.Outcome != state.Failed || !strings.Contains(tg.Message, "not sent")) {
		t.Errorf("target of a request never sent: %+v", tg)
	}
}

// TestSameResult: results share a record only when every field toTarget
// keeps is equal, pointers or not.
func TestSameResult(t *testing.T) {
	one, two := 1, 2
	t1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	t1b, t2 := t1, t1.Add(time.Second)
	base := pushapi.Result{Outcome: pushapi.OutcomeSkipped, Reason: "no_active_device", DeviceCount: &one, UnreachableSince: &t1}
	with := func(f func(*pushapi.Result)) *pushapi.Result { r := base; f(&r); return &r }
	for _, tc := range []struct {
		name string
		a, b *pushapi.Result
		same bool
	}{
		{"both nil", nil, nil, true},
		{"one nil", &base, nil, false},
		{"equal, other pointers", &base, with(func(r *pushapi.Result) { c, u := 1, t1b; r.DeviceCount, r.UnreachableSince = &c, &u }), true},
		{"outcome", &base, with(func(r *pushapi.Result) { r.Outcome = pushapi.OutcomeDelivered }), false},
		{"reason", &base, with(func(r *pushapi.Result) { r.Reason = "other" }), false},
		{"message", &base, with(func(r *pushapi.Result) { r.Message = "m" }), false},
		{"device count", &base, with(func(r *pushapi.Result) { r.DeviceCount = &two }), false},
		{"device count unknown", &base, with(func(r *pushapi.Result) { r.DeviceCount = nil }), false},
		{"unreachable since", &base, with(func(r *pushapi.Result) { r.UnreachableSince = &t2 }), false},
		{"unreachable since unknown", &base, with(func(r *pushapi.Result) { r.UnreachableSince = nil }), false},
	} {
		if got := sameResult(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: sameResult = %v", tc.name, got)
		}
		if got := sameResult(tc.b, tc.a); got != tc.same {
			t.Errorf("%s, swapped: sameResult = %v", tc.name, got)
		}
	}
}
