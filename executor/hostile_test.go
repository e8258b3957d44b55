package executor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/pushapi"
	"pushform/state"
	"pushform/state/local"
)

// TestHostileAnswers sends one request through the real client to a server
// that answers it badly, and checks the error names the request id (when
// the server gave one) and the state, as journaled on disk, records the
// targets unknown or failed: never delivered.
func TestHostileAnswers(t *testing.T) {
	const rid = "req-hostile-1"
	body := func(status int, contentType, b string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-request-id", rid)
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			w.Write([]byte(b))
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    state.Outcome // for every target
		errHas  []string
		noID    bool // the server sent no request id
	}{
		{"not JSON", body(200, "application/json", "hello, world"), state.Unknown, []string{"cannot understand", "may have been delivered"}, false},
		{"wrong types", body(200, "", `{"results":[{"userId":"u1","status":5},{"userId":"u2","status":true}]}`), state.Unknown, []string{"result 0"}, false},
		{"results not an array", body(200, "", `{"results":{"u1":"delivered"}}`), state.Unknown, []string{"results is an object"}, false},
		{"too few results", body(200, "", `{"results":[{"userId":"u1","status":"delivered","deviceCount":1}]}`), state.Unknown, []string{"1 results for 2 targets"}, false},
		{"too many results", body(200, "", `{"results":[{"status":"delivered"},{"status":"delivered"},{"status":"delivered"}]}`), state.Unknown, []string{"3 results for 2 targets"}, false},
		{"names a target not sent", body(200, "", `{"results":[{"userId":"mallory","status":"delivered"},{"userId":"u1","status":"delivered"}]}`), state.Unknown, []string{"not sent", "mallory"}, false},
		{"names a target twice", body(200, "", `{"results":[{"userId":"u1","status":"delivered"},{"userId":"u1","status":"delivered"}]}`), state.Unknown, []string{"named twice"}, false},
		{"unknown outcome", body(200, "", `{"results":[{"userId":"u1","status":"teleported"},{"userId":"u2","status":"delivered"}]}`), state.Unknown, nil, false},
		{"huge body", body(200, "application/json", `{"results":[`+strings.Repeat(`{"status":"delivered"},`, 10000)+`]}`), state.Unknown, []string{"larger than"}, false},
		{"HTML 200", body(200, "text/html", "<!doctype html><html><head><title>Welcome to nginx!</title></head></html>"), state.Unknown, []string{"HTML page: Welcome to nginx!"}, false},
		{"HTML 502", body(502, "text/html", "<html><head><title>502 Bad Gateway</title></head><body>x</body></html>"), state.Unknown, []string{"502 Bad Gateway", "HTML page"}, false},
		{"HTML 404", body(404, "text/html", "<html><title>Not Found</title></html>"), state.Failed, []string{"404", "Not Found"}, false},
		{"400 not JSON", body(400, "text/plain", "bad request, go away"), state.Failed, []string{"bad request, go away"}, false},
		{"empty 207", body(207, "", ""), state.Unknown, []string{"a 207 must list results"}, false},
		{"binary", body(200, "application/octet-stream", "\x00\x01\x02\xff\xfe\x1b[31m"), state.Unknown, []string{"cannot understand"}, false},
		// The two stalls below never end on their own: the handler returns
		// only once the client gives up, so Apply returning at all proves
		// the client's timeout fired.
		{"slow loris", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-request-id", rid)
			w.WriteHeader(200)
			tick := time.NewTicker(50 * time.Millisecond) // a byte at a time
			defer tick.Stop()
			for {
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}, state.Unknown, []string{"deadline exceeded", "may have been processed"}, false},
		{"no answer at all", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server notices the client leave
			<-r.Context().Done()
		}, state.Unknown, []string{"deadline exceeded", "may have been processed"}, true},
		{"connection dropped", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, state.Unknown, []string{"may have been processed"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			// The client's timeout must fire on the stalls only: the other
			// answers get all the time a busy machine may need.
			timeout := time.Minute
			if slices.Contains(tt.errHas, "deadline exceeded") {
				timeout = 500 * time.Millisecond
			}
			c, err := pushapi.New(pushapi.Options{BaseURL: srv.URL + "/v1", APIKey: "k-hostile-key", Timeout: timeout, MaxResponseBytes: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			f := local.NewFile(filepath.Join(t.TempDir(), "pushform.state"))
			st := state.New("test")
			if err := f.Persist(st); err != nil {
				t.Fatal(err)
			}
			p := plan(t, st, note("notification.n", "", "u1", "u2"))
			type result struct {
				res *Result
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := Apply(context.Background(), p, state.NewRecorder(f, st), c, Options{MaxAttempts: 1})
				done <- result{res, err}
			}()
			var res *Result
			select {
			case r := <-done:
				if r.err != nil {
					t.Fatalf("Apply: %v", r.err)
				}
				res = r.res
			case <-time.After(3 * time.Minute): // a hang guard
				t.Fatalf("Apply did not return: the client's %s timeout did not fire", timeout)
			}
			if len(res.Errors) != 1 {
				t.Fatalf("want one failed request, got %d (counts %+v)", len(res.Errors), res.Counts)
			}
			msg := res.Errors[0].Error()
			if !tt.noID && !strings.Contains(msg, rid) {
				t.Errorf("error lacks the request id: %s", msg)
			}
			for _, want := range tt.errHas {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q: %s", want, msg)
				}
			}
			if strings.ContainsAny(msg, "\x00\x1b") || len(msg) > 2000 {
				t.Errorf("error is not one clean, bounded line: %q", msg)
			}
			// The state as it is on disk (snapshot + journal) agrees.
			disk, err := f.Read()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*state.State{st, disk} {
				for _, id := range []string{"u1", "u2"} {
					if got := s.Messages["notification.n"].Targets[id].Outcome; got != tt.want {
						t.Errorf("%s: %s, want %s", id, got, tt.want)
					}
				}
			}
			if res.Counts.Delivered != 0 {
				t.Errorf("counted %d delivered", res.Counts.Delivered)
			}
		})
	}
}

// TestAmbiguousTaggedIsRetriedThenUnknown: a tagged request whose answer
// keeps being lost is retried up to MaxAttempts, each retry an event, and
// then left unknown for the next plan to send again.
func TestAmbiguousTaggedIsRetriedThenUnknown(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("x-request-id", "req-500")
		w.WriteHeader(500)
	}))
	defer srv.Close()
	c, _ := pushapi.New(pushapi.Options{BaseURL: srv.URL + "/v1", APIKey: "k-hostile-key"})
	st := state.New("test")
	p := plan(t, st, note("notification.t", "tag", "u1"))
	var events []Event
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), c, Options{MaxAttempts: 3, Sleep: noSleep,
		Events: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	retries := 0
	for _, e := range events {
		if e.Type == EventRetry {
			retries++
			if !strings.Contains(e.Error, "req-500") || e.Attempt != retries {
				t.Errorf("retry event %+v", e)
			}
		}
	}
	if calls != 3 || retries != 2 || res.Retries != 2 || res.Counts.Unknown != 1 {
		t.Fatalf("calls %d retries %d/%d counts %+v", calls, retries, res.Retries, res.Counts)
	}
	if got := st.Messages["notification.t"].Targets["u1"].Outcome; got != state.Unknown {
		t.Fatalf("outcome %s", got)
	}
	if again := plan(t, st, note("notification.t", "tag", "u1")); again.Summary.Targets != 1 {
		t.Fatalf("the next plan must send the unknown tagged target again: %+v", again.Summary)
	}
}

// TestInterruptStopsRetries: after an interrupt, a request waiting to be
// retried is not retried (a retry is a new request) and no backoff is
// waited for; its last error stands.
func TestInterruptStopsRetries(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", "u1"))
	ctx, cancel := context.WithCancel(context.Background())
	s := &fakeSender{reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
		cancel() // the interrupt arrives while the first try is in flight
		return nil, &pushapi.StatusError{Method: "POST", StatusCode: 503, RetryAfter: time.Hour}
	}}
	slept := 0
	res, err := Apply(ctx, p, state.NewRecorder(&memJournal{}, st), s, Options{
		Sleep: func(context.Context, time.Duration) error { slept++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if s.calls != 1 || slept != 0 || res.Retries != 0 || !res.Interrupted {
		t.Fatalf("calls %d, backoff waits %d, retries %d, interrupted %v; want 1 call, no wait", s.calls, slept, res.Retries, res.Interrupted)
	}
	if got := st.Messages["notification.a"].Targets["u1"].Outcome; got != state.Failed {
		t.Fatalf("a 503 is not processed: want failed (sent again next time), got %s", got)
	}
}

// TestInterruptDuringBackoff: an interrupt that arrives while a request
// waits out a 429 ends the wait at once (the real timer, here waiting
// five minutes for a Retry-After of an hour) and no retry is sent; the
// request is recorded not sent, never failed.
func TestInterruptDuringBackoff(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", "u1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &fakeSender{reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
		return nil, &pushapi.StatusError{Method: "POST", StatusCode: 429, RequestID: "req-429", RetryAfter: time.Hour}
	}}
	var retry Event
	done := make(chan error, 1)
	var res *Result
	go func() {
		var err error
		res, err = Apply(ctx, p, state.NewRecorder(&memJournal{}, st), s, Options{Events: func(e Event) {
			if e.Type == EventWait {
				retry = e
				cancel() // emitted just before the wait: the interrupt lands in it
			}
		}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard; the wait is five minutes
		t.Fatal("the interrupt did not end the backoff wait")
	}
	if retry.Delay != DefaultMaxRetryAfter || !strings.Contains(retry.Error, "req-429") {
		t.Errorf("retry event %+v; want a wait of MaxRetryAfter for the 429", retry)
	}
	if s.calls != 1 || !res.Interrupted {
		t.Fatalf("calls %d, interrupted %v; want no retry after the interrupt", s.calls, res.Interrupted)
	}
	if got := st.Messages["notification.a"].Targets["u1"]; got.Outcome != state.Failed || !strings.HasPrefix(got.Message, "not sent: ") || !strings.Contains(got.Message, "429") {
		t.Fatalf("target %+v; want not sent with the 429 (not processed: sent again next time)", got)
	}
	if len(res.Errors) != 0 || res.Counts.Failed != 0 || res.NotStarted != 1 {
		t.Fatalf("errors %v, counts %+v, not started %d; want the 429's target not sent, no failure", res.Errors, res.Counts, res.NotStarted)
	}
}

// TestBackoff checks the delays: exponential with jitter, capped, and never
// shorter than a Retry-After up to MaxRetryAfter.
func TestBackoff(t *testing.T) {
	r := &run{opts: Options{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: 3 * time.Second}}
	for attempt := 1; attempt <= 40; attempt++ {
		d := r.backoff(attempt, 0)
		full := min(100*time.Millisecond<<min(attempt-1, 16), time.Second)
		if d < full/2 || d > full {
			t.Errorf("attempt %d: %s, want within [%s, %s]", attempt, d, full/2, full)
		}
	}
	if d := r.backoff(1, 2*time.Second); d != 2*time.Second {
		t.Errorf("Retry-After 2s: waited %s", d)
	}
	if d := r.backoff(1, time.Hour); d != 3*time.Second {
		t.Errorf("Retry-After 1h must be capped at MaxRetryAfter: %s", d)
	}
}
