package pushapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNewBaseURL(t *testing.T) {
	cases := []struct {
		url  string
		ok   bool
		want string // in the error
	}{
		{"http://127.0.0.1:8787/v1", true, ""},
		{"http://127.5.6.7/v1/", true, ""},
		{"http://[::1]:8787/v1", true, ""},
		{"http://localhost:8787/v1", true, ""},
		{"http://LOCALHOST/v1", true, ""},
		{"https://push.example.com/v1", true, ""},
		{"https://push.example.com/api/v1", true, ""},
		{"http://push.example.com/v1", false, "not loopback: use https://"},
		{"http://10.0.0.1/v1", false, "not loopback"},
		{"http://0.0.0.0:8787/v1", false, "not loopback"},
		{"http://127.0.0.1.example.com/v1", false, "not loopback"},
		{"http://localhost.evil.com/v1", false, "not loopback"},
		{"ftp://127.0.0.1/v1", false, "must use https://"},
		{"https://push.example.com/v2", false, "must end with the version segment /v1"},
		{"https://push.example.com", false, "/v1"},
		{"https://user:secret@push.example.com/v1", false, "must not contain credentials"},
		{"https://push.example.com/v1?x=1", false, "query"},
		{"", false, "no service base URL"},
		{"127.0.0.1:8787/v1", false, ""},
	}
	for _, tc := range cases {
		c, err := New(Options{BaseURL: tc.url, APIKey: canary})
		if (err == nil) != tc.ok {
			t.Errorf("New(%q): err = %v, want ok %v", tc.url, err, tc.ok)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%q): %v, want %q", tc.url, err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), canary) {
				t.Errorf("New(%q) error leaks a secret: %v", tc.url, err)
			}
		} else if strings.HasSuffix(c.BaseURL(), "/") {
			t.Errorf("BaseURL %q keeps a trailing slash", c.BaseURL())
		}
	}
}

func TestNewKey(t *testing.T) {
	if _, err := New(Options{BaseURL: "http://127.0.0.1/v1", APIKeyEnv: "PUSHFORM_API_KEY"}); err == nil ||
		!strings.Contains(err.Error(), "PUSHFORM_API_KEY is empty or unset") {
		t.Errorf("empty key: %v", err)
	}
	key := canary + "\r\nX-Evil: 1"
	_, err := New(Options{BaseURL: "http://127.0.0.1/v1", APIKey: key})
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("key with CRLF: %v", err)
	}
}

func TestHeadersOnEveryRequest(t *testing.T) {
	srv := serve(t,
		canned{status: 200, body: ``},
		canned{status: 200, body: `{"userIds":["a"],"next":"p 2"}`},
		canned{status: 200, body: `{"userIds":["b"]}`},
		canned{status: 401},
	)
	c := newClient(t, srv.URL, func(o *Options) { o.UserAgent = "pushform-test" })
	ctx := context.Background()
	if _, err := c.Send(ctx, mixed); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Recipients(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Recipients(ctx); err == nil {
		t.Fatal("want 401")
	}
	reqs := srv.recorded()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		h := r.header
		if h.Get("x-api-key") != canary || h.Get("Content-Type") != "application/json" ||
			h.Get("Accept") != "application/json" || h.Get("User-Agent") != "pushform-test" {
			t.Errorf("request %d (%s %s) headers: %v", i, r.method, r.path, h)
		}
		if len(h.Values("x-api-key")) != 1 {
			t.Errorf("request %d: x-api-key sent %d times", i, len(h.Values("x-api-key")))
		}
	}
	if r := reqs[0]; r.method != "POST" || r.path != "/v1/push-notifications/send" || string(r.body) != string(appendBatch(nil, mixed)) {
		t.Errorf("send request: %s %s %s", r.method, r.path, r.body)
	}
	if r := reqs[1]; r.method != "GET" || r.path != "/v1/push-notifications/recipients" || r.query != "" || len(r.body) != 0 {
		t.Errorf("recipients request: %s %s ?%s", r.method, r.path, r.query)
	}
	if r := reqs[2]; r.query != "cursor=p+2" {
		t.Errorf("second page query %q", r.query)
	}
}

func TestRecipientsShapes(t *testing.T) {
	cases := []struct {
		name    string
		answers []canned
		want    []string
		pages   int
		wantErr string
	}{
		{"bare array", []canned{{status: 200, body: `["alice","bob"]`}}, []string{"alice", "bob"}, 1, ""},
		{"empty array", []canned{{status: 200, body: `[]`}}, nil, 1, ""},
		{"userIds object", []canned{{status: 200, body: `{"userIds":["a"],"total":1}`}}, []string{"a"}, 1, ""},
		{"recipients object", []canned{{status: 200, body: `{"recipients":["a","b"],"next":null}`}}, []string{"a", "b"}, 1, ""},
		{"data of objects", []canned{{status: 200, body: `{"data":[{"userId":"a","x":1},{"id":"b"}]}`}}, []string{"a", "b"}, 1, ""},
		{"paged with next", []canned{
			{status: 200, body: `{"userIds":["a","b"],"next":"c2"}`},
			{status: 200, body: `{"userIds":["b","c"],"nextCursor":"c3"}`},
			{status: 200, body: `{"userIds":["d"],"cursor":""}`},
		}, []string{"a", "b", "c", "d"}, 3, ""},
		{"cursor before list", []canned{
			{status: 200, body: `{"cursor":"x","data":["a"]}`},
			{status: 200, body: `{"data":["b"]}`},
		}, []string{"a", "b"}, 2, ""},
		{"paging loop", []canned{{status: 200, body: `{"userIds":["a"],"next":"same"}`}}, nil, 0, "paging loops"},
		{"not JSON", []canned{{status: 200, body: `<html>`}}, nil, 0, "the answer is not JSON (it looks like an HTML page)"},
		{"number element", []canned{{status: 200, body: `["a",3]`}}, nil, 0, "recipient 1: is a number, want a string"},
		{"empty id", []canned{{status: 200, body: `["a",""]`}}, nil, 0, "empty user id"},
		{"object without list", []canned{{status: 200, body: `{"users":["a"]}`}}, nil, 0, "an object without a user id list"},
		{"cursor wrong type", []canned{{status: 200, body: `{"userIds":[],"next":{}}`}}, nil, 0, "the next cursor is an object without href or url, want a string"},
		{"truncated", []canned{{status: 200, body: `["a","b`}}, nil, 0, "recipient 1: at byte 7: the answer ended inside a string"},
		{"503", []canned{{status: 503, body: "down"}}, nil, 0, "503 Service Unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.answers...)
			c := newClient(t, srv.URL)
			got, err := c.Recipients(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "request id req-1") {
					t.Errorf("no request id: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.UserIDs, tc.want) || len(got.RequestIDs) != tc.pages {
				t.Errorf("got %v (%d pages), want %v (%d)", got.UserIDs, len(got.RequestIDs), tc.want, tc.pages)
			}
		})
	}
}

// hang serves a handler that holds every request until the test ends.
// got receives a value once the handler has read a request's body: from
// then on the request was certainly sent.
func hang(t *testing.T, before func(w http.ResponseWriter)) (srv *httptest.Server, got chan struct{}) {
	done := make(chan struct{})
	got = make(chan struct{}, 16)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if before != nil {
			before(w)
		}
		got <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, got
}

// expiring is a deadline the test fires: its Err is DeadlineExceeded once
// expire is closed, as a context.WithTimeout's would be when its timer
// fires.
type expiring struct {
	context.Context
	expire chan struct{}
}

func (e expiring) Done() <-chan struct{} { return e.expire }

func (e expiring) Err() error {
	select {
	case <-e.expire:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// fakeDeadline makes c's per-call timeout fire when the returned channel
// is closed, instead of after Options.Timeout.
func fakeDeadline(c *Client) chan struct{} {
	expire := make(chan struct{})
	c.deadline = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return expiring{ctx, expire}, func() {}
	}
	return expire
}

func TestTimeout(t *testing.T) {
	srv, got := hang(t, nil)
	c := newClient(t, srv.URL)
	expire := fakeDeadline(c)
	go func() { <-got; close(expire) }() // the timeout fires after the server has the request
	_, err := c.Send(context.Background(), mixed)
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !te.Sent {
		t.Fatalf("want a sent TransportError with DeadlineExceeded, got %T %v", err, err)
	}
	if _, ambiguous, _ := Retryable(err); !ambiguous {
		t.Error("a timeout after the request was written must be ambiguous")
	}
}

func TestTimeoutOption(t *testing.T) {
	// Options.Timeout is what bounds a call. Whether the request was
	// written before it fired depends on the machine, so only the
	// deadline is checked.
	srv, _ := hang(t, nil)
	c := newClient(t, srv.URL, func(o *Options) { o.Timeout = 50 * time.Millisecond })
	_, err := c.Send(context.Background(), mixed)
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a TransportError with DeadlineExceeded, got %T %v", err, err)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSlowBodyTimesOut(t *testing.T) {
	// The headers arrive, the body never completes: the timeout fires
	// once the client has the headers.
	srv, _ := hang(t, func(w http.ResponseWriter) {
		w.Header().Set("x-request-id", "slow-1")
		w.WriteHeader(200)
		w.Write([]byte(`{"results":[`))
		w.(http.Flusher).Flush()
	})
	var expire chan struct{}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := newClient(t, srv.URL, func(o *Options) {
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := tr.RoundTrip(r)
			close(expire)
			return resp, err
		})}
	})
	expire = fakeDeadline(c)
	_, err := c.Send(context.Background(), mixed)
	var te *TransportError
	if !errors.As(err, &te) || !te.Sent || te.RequestID != "slow-1" || !strings.Contains(err.Error(), "request id slow-1") {
		t.Fatalf("got %T %v", err, err)
	}
}

func TestContextCancel(t *testing.T) {
	srv, got := hang(t, nil)
	c := newClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-got; cancel() }()
	_, err := c.Send(ctx, mixed)
	var te *TransportError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &te) || !te.Sent {
		t.Fatalf("cancelled after the server had it: want a sent TransportError with context.Canceled, got %v", err)
	}

	// Cancelled before anything is sent: nothing reached the server.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.Send(ctx, mixed)
	if !errors.As(err, &te) || te.Sent || !errors.Is(err, context.Canceled) {
		t.Fatalf("pre-cancelled: got %v", err)
	}
}

func TestConnectionRefusedIsSafe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, "http://"+addr)
	_, err = c.Send(context.Background(), mixed)
	var te *TransportError
	if !errors.As(err, &te) || te.Sent {
		t.Fatalf("want unsent TransportError, got %v", err)
	}
	if safe, _, _ := Retryable(err); !safe {
		t.Error("connection refused must be safe to retry")
	}
	if strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), "was not sent") {
		t.Errorf("message: %v", err)
	}
}

func TestDroppedConnectionIsAmbiguous(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<10)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	_, err := c.Send(context.Background(), mixed)
	var te *TransportError
	if !errors.As(err, &te) || !te.Sent {
		t.Fatalf("want sent TransportError, got %v", err)
	}
	if _, ambiguous, _ := Retryable(err); !ambiguous {
		t.Error("a dropped connection after writing must be ambiguous")
	}
}

func TestConcurrentSends(t *testing.T) {
	srv := serve(t, canned{status: 200, body: `{"results":[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"skipped","reason":"no_active_device"},{"deviceId":"kiosk-1","status":"delivered","deviceCount":1},{"topics":["deals","news"],"status":"delivered","deviceCount":2}]}`})
	c := newClient(t, srv.URL)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 20 {
				res, err := c.Send(context.Background(), mixed)
				if err == nil && (res.Results[0][1].Outcome != OutcomeSkipped || *res.Results[2][0].DeviceCount != 2) {
					err = errors.New("wrong results")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := string(appendBatch(nil, mixed))
	for _, r := range srv.recorded() {
		if string(r.body) != want {
			t.Fatalf("a request body was corrupted (pooled buffer reused too early): %s", r.body)
		}
	}
}

func TestKeyEchoedInRequestID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", "id-"+r.Header.Get("x-api-key"))
		w.WriteHeader(500)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	_, err := c.Send(context.Background(), mixed)
	if err == nil || strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), "request id id-[redacted]") {
		t.Fatalf("got %v", err)
	}
}
