package pushapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSendErrorClasses(t *testing.T) {
	htmlPage := `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>` +
		strings.Repeat("<p>nginx</p>", 500) + `</body></html>`
	cases := []struct {
		name   string
		answer canned
		check  func(t *testing.T, err error)
		class  Class
		after  time.Duration
	}{
		{"400 with issues", canned{status: 400, body: `{"issues":[{"path":[0,"title"],"message":"title and body go together"},{"path":[2,"userIds",3],"message":"empty id"},"plain string issue",{"code":"x","echo":"{KEY}"}]}`},
			func(t *testing.T, err error) {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("want *ValidationError, got %T", err)
				}
				if len(ve.Issues) != 4 {
					t.Fatalf("issues: %+v", ve.Issues)
				}
				want := []Issue{{Index: 0, Field: "title", Message: "title and body go together"},
					{Index: 2, Field: "userIds[3]", Message: "empty id"}, {Index: -1, Message: "plain string issue"}, {Index: -1}}
				for i, w := range want {
					g := ve.Issues[i]
					if g.Index != w.Index || g.Field != w.Field || g.Message != w.Message {
						t.Errorf("issue %d = %+v, want %+v", i, g, w)
					}
				}
				if string(ve.Issues[0].Raw) != `{"path":[0,"title"],"message":"title and body go together"}` {
					t.Errorf("raw not verbatim: %s", ve.Issues[0].Raw)
				}
				if strings.Contains(string(ve.Issues[3].Raw), canary) || !strings.Contains(string(ve.Issues[3].Raw), "[redacted]") {
					t.Errorf("key not redacted in raw issue: %s", ve.Issues[3].Raw)
				}
				if !strings.Contains(err.Error(), "notification 2, userIds[3]: empty id") {
					t.Errorf("message: %s", err)
				}
			}, Permanent, 0},
		{"400 without issues", canned{status: 400, body: "bad request\x1b[31m!"},
			func(t *testing.T, err error) {
				var ve *ValidationError
				if !errors.As(err, &ve) || ve.Issues != nil || ve.Excerpt != "bad request [31m!" {
					t.Fatalf("got %#v", err)
				}
			}, Permanent, 0},
		{"400 index out of range", canned{status: 400, body: `[{"path":[9,"title"],"message":"m"}]`},
			func(t *testing.T, err error) {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Issues) != 1 || ve.Issues[0].Index != -1 || ve.Issues[0].Field != "title" {
					t.Fatalf("got %#v", err)
				}
			}, Permanent, 0},
		{"401", canned{status: 401, body: `{"error":"bad key {KEY}"}`},
			func(t *testing.T, err error) {
				var ae *AuthError
				if !errors.As(err, &ae) {
					t.Fatalf("want *AuthError, got %T", err)
				}
				want := "the service rejected the API key (401, request id rid-9): check the key in environment variable PUSHFORM_API_KEY"
				if err.Error() != want {
					t.Errorf("got  %s\nwant %s", err, want)
				}
			}, Permanent, 0},
		{"429 retry after seconds", canned{status: 429, headers: map[string]string{"Retry-After": "7"}, body: "slow down"},
			func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter != 7*time.Second || se.Excerpt != "slow down" {
					t.Fatalf("got %#v", err)
				}
			}, Safe, 7 * time.Second},
		{"503 retry after date", canned{status: 503, headers: map[string]string{"Retry-After": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}},
			func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.RetryAfter < 58*time.Minute || se.RetryAfter > 61*time.Minute {
					t.Fatalf("got %#v", err)
				}
			}, Safe, -1},
		{"502 HTML page", canned{status: 502, headers: map[string]string{"Content-Type": "text/html"}, body: htmlPage},
			func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.Excerpt != "HTML page: 502 Bad Gateway" {
					t.Fatalf("got %#v", err)
				}
			}, Ambiguous, 0},
		{"500 with key echo and control chars", canned{status: 500, body: "boom {KEY}\x00\x07\u202e" + strings.Repeat("y", 5000)},
			func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || len(se.Excerpt) > excerptMax+len("…") || !strings.HasPrefix(se.Excerpt, "boom [redacted] yyy") {
					t.Fatalf("got %q", se.Excerpt)
				}
			}, Ambiguous, 0},
		{"504", canned{status: 504}, nil, Ambiguous, 0},
		{"404", canned{status: 404, body: "no such path"}, nil, Permanent, 0},
		{"redirect not followed", canned{status: 302, headers: map[string]string{"Location": "http://127.0.0.1:1/elsewhere"}}, nil, Permanent, 0},
		{"unexpected 2xx", canned{status: 202}, nil, Ambiguous, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.answer.headers = withDefault(tc.answer.headers, "x-request-id", "rid-9")
			srv := serve(t, tc.answer)
			c := newClient(t, srv.URL)
			res, err := c.Send(context.Background(), mixed)
			if err == nil {
				t.Fatalf("want error, got %+v", res)
			}
			if tc.check != nil {
				tc.check(t, err)
			}
			msg := err.Error()
			if strings.Contains(msg, canary) {
				t.Fatalf("error contains the API key: %s", msg)
			}
			if !strings.Contains(msg, "request id rid-9") {
				t.Errorf("error does not name the request id: %s", msg)
			}
			if len(msg) > 4096 {
				t.Errorf("error message is %d bytes", len(msg))
			}
			class, after := Classify(err)
			if class != tc.class || (tc.after >= 0 && after != tc.after) {
				t.Errorf("Classify = %v, %v; want %v, %v", class, after, tc.class, tc.after)
			}
			if got := RequestID(errorsJoin(err)); got != "rid-9" {
				t.Errorf("RequestID = %q, want rid-9", got)
			}
			if n := len(srv.recorded()); n != 1 {
				t.Errorf("%d requests; redirects must not be followed", n)
			}
		})
	}
}

func withDefault(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for k2, v2 := range m {
		out[k2] = v2
	}
	return out
}

func TestClassify(t *testing.T) {
	cases := []struct {
		err   error
		class Class
	}{
		{&TransportError{Op: "POST /push-notifications/send", Err: errors.New("refused"), Sent: false}, Safe},
		{&TransportError{Op: "POST /push-notifications/send", Err: errors.New("EOF"), Sent: true}, Ambiguous},
		{&TransportError{Op: "GET /push-notifications/recipients", Err: errors.New("EOF"), Sent: true}, Safe},
		{&StatusError{Method: "POST", StatusCode: 500}, Ambiguous},
		{&StatusError{Method: "GET", StatusCode: 500}, Safe},
		{&StatusError{Method: "POST", StatusCode: 502}, Ambiguous},
		{&StatusError{Method: "POST", StatusCode: 429}, Safe},
		{&StatusError{Method: "POST", StatusCode: 503}, Safe},
		{&StatusError{Method: "POST", StatusCode: 408}, Safe},
		{&StatusError{Method: "POST", StatusCode: 403}, Permanent},
		{&DecodeError{Method: "POST", StatusCode: 200, Err: errors.New("x")}, Ambiguous},
		{&DecodeError{Method: "GET", StatusCode: 200, Err: errors.New("x")}, Permanent},
		{&ValidationError{}, Permanent},
		{&AuthError{}, Permanent},
		{errors.New("other"), Permanent},
		{nil, Permanent},
	}
	for _, tc := range cases {
		wrapped := tc.err
		if wrapped != nil {
			wrapped = errorsJoin(tc.err)
		}
		if c, _ := Classify(wrapped); c != tc.class {
			t.Errorf("Classify(%#v) = %v, want %v", tc.err, c, tc.class)
		}
	}
}

func errorsJoin(err error) error { return &wrapErr{err} }

type wrapErr struct{ err error }

func (w *wrapErr) Error() string { return "apply: " + w.err.Error() }
func (w *wrapErr) Unwrap() error { return w.err }

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 120 ":                         2 * time.Minute,
		"-5":                            0,
		"soon":                          0,
		"99999999999":                   24 * time.Hour,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	cases := []struct{ body, ct, want string }{
		{"plain text", "", "plain text"},
		{"<html><body><h1>Oops</h1><p>down</p></body></html>", "", "HTML page: Oops down"},
		{"<HTML><HEAD><TITLE> Service\nUnavailable </TITLE>", "", "HTML page: Service Unavailable"},
		{"{\"a\":1}", "text/html", "HTML page: {\"a\":1}"},
		{"a\x00b\r\nc\x1b[0m\u200fd\xff", "", "a b c [0m d\uFFFD"},
		{strings.Repeat("é", 600), "", strings.Repeat("é", 256) + "…"},
	}
	for _, tc := range cases {
		if got := excerpt([]byte(tc.body), tc.ct); got != tc.want {
			t.Errorf("excerpt(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestIssueShapes(t *testing.T) {
	// Where the spec is silent: how an issue says which notification of
	// the request it is about. The request had 3 notifications.
	cases := []struct {
		name, body string
		index      int
		field, msg string
	}{
		{"path array", `{"issues":[{"path":[1,"title"],"message":"too long"}]}`, 1, "title", "too long"},
		{"path array with element", `[{"path":[2,"userIds",3],"message":"empty"}]`, 2, "userIds[3]", "empty"},
		{"path array, index as a string", `[{"path":["1","title"],"message":"m"}]`, 1, "title", "m"},
		{"path as a pointer string", `[{"path":"/1/title","message":"m"}]`, 1, "title", "m"},
		{"path dotted", `[{"path":"[2].userIds[0]","message":"m"}]`, 2, "userIds[0]", "m"},
		{"path dotted without brackets", `[{"path":"0.body","message":"m"}]`, 0, "body", "m"},
		{"path empty: the request", `[{"path":[],"message":"too many userIds"}]`, -1, "", "too many userIds"},
		{"index and field", `{"issues":[{"index":1,"field":"title","code":"too_long","message":"m"}]}`, 1, "title", "m"},
		{"index as a string", `[{"index":"2","field":"body","message":"m"}]`, 2, "body", "m"},
		{"index without field", `[{"Index":0,"Message":"bad"}]`, 0, "", "bad"},
		{"field as a path", `[{"index":1,"field":["userIds",4],"message":"m"}]`, 1, "userIds[4]", "m"},
		{"index out of range", `[{"index":3,"field":"title","message":"m"}]`, -1, "title", "m"},
		{"pointer", `[{"pointer":"/1/title","message":"m"}]`, 1, "title", "m"},
		{"pointer with escapes", `[{"pointer":"/0/a~1b~0c","message":"m"}]`, 0, "a/b~c", "m"},
		{"pointer to the request", `[{"pointer":"","message":"m"}]`, -1, "", "m"},
		{"source pointer", `{"issues":[{"source":{"pointer":"/2/openToUrl"},"detail":"x","message":"m"}]}`, 2, "openToUrl", "m"},
		{"message [N] field:", `[{"message":"[1] title: is 300 characters long"}]`, 1, "title", "[1] title: is 300 characters long"},
		{"message [N].field", `["[2].tag must be shorter"]`, 2, "tag", "[2].tag must be shorter"},
		{"message [N] alone", `[{"message":"[0] is invalid"}]`, 0, "", "[0] is invalid"},
		{"message [N] out of range", `[{"message":"[7] title: bad"}]`, -1, "", "[7] title: bad"},
		{"nothing says which", `[{"code":"too_long","message":"title too long"}]`, -1, "", "title too long"},
		{"plain string", `["bad request"]`, -1, "", "bad request"},
		{"pointer and detail", `[{"pointer":"/2/title","detail":"too long"}]`, 2, "title", "too long"},
		{"reason under msg", `[{"path":[1,"body"],"msg":"too long"}]`, 1, "body", "too long"},
		{"reason under reason", `[{"index":0,"reason":"empty"}]`, 0, "", "empty"},
		{"reason under description", `[{"field":"tag","description":"bad tag"}]`, -1, "tag", "bad tag"},
		{"detail before title (RFC 9457)", `[{"title":"Invalid field","pointer":"/1/tag","detail":"tag too long"}]`, 1, "tag", "tag too long"},
		{"message wins over detail", `[{"detail":"d","message":"m","path":[0]}]`, 0, "", "m"},
		{"[N] in a detail", `[{"detail":"[1] title: too long"}]`, 1, "title", "[1] title: too long"},
		{"path wins over index", `[{"path":[0,"title"],"index":2,"message":"m"}]`, 0, "title", "m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			issues, ok := decodeIssues([]byte(tc.body), 3, nil)
			if !ok || len(issues) != 1 {
				t.Fatalf("decodeIssues: %v %+v", ok, issues)
			}
			is := issues[0]
			if is.Index != tc.index || is.Field != tc.field || is.Message != tc.msg {
				t.Errorf("got index %d field %q message %q; want %d %q %q", is.Index, is.Field, is.Message, tc.index, tc.field, tc.msg)
			}
			if !json.Valid(is.Raw) {
				t.Errorf("raw %s", is.Raw)
			}
		})
	}
	for _, body := range []string{`{"errors":[]}`, `"x"`, `[1,`, `{"issues":{}}`, ``} {
		if issues, ok := decodeIssues([]byte(body), 3, nil); ok {
			t.Errorf("%s: %+v", body, issues)
		}
	}
}

func TestValidationErrorSaysWhenNoIndex(t *testing.T) {
	srv := serve(t, canned{status: 400, body: `{"issues":[{"code":"too_long","message":"title too long"}]}`})
	c := newClient(t, srv.URL)
	_, err := c.Send(context.Background(), mixed)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Notifications != 3 || ve.Issues[0].Index != -1 {
		t.Fatalf("got %#v", err)
	}
	want := "the service rejected the request as invalid (400, request id req-1): title too long (the service did not say which of the 3 notifications of the request was invalid)"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	// One issue with an index is enough to say which.
	srv = serve(t, canned{status: 400, body: `[{"message":"request too big"},{"index":2,"message":"bad"}]`})
	_, err = newClient(t, srv.URL).Send(context.Background(), mixed)
	if err == nil || strings.Contains(err.Error(), "did not say") || !strings.Contains(err.Error(), "notification 2: bad") {
		t.Errorf("got %v", err)
	}
}

func TestRequestIDOfErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ValidationError{RequestID: "a"}, "a"},
		{&AuthError{RequestID: "b"}, "b"},
		{&StatusError{RequestID: "c"}, "c"},
		{&DecodeError{RequestID: "d", Err: errors.New("x")}, "d"},
		{&TransportError{RequestID: "e", Err: errors.New("x")}, "e"},
		{&TransportError{Err: errors.New("refused")}, ""},
		{errors.New("other"), ""},
		{nil, ""},
	} {
		if got := RequestID(tc.err); got != tc.want {
			t.Errorf("RequestID(%#v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestTransportErrorText(t *testing.T) {
	tests := []struct {
		err  *TransportError
		want string
	}{
		{&TransportError{Op: "POST /push-notifications/send", Err: errors.New("EOF"), Sent: true},
			"POST /push-notifications/send: EOF (the request may have been processed)"},
		{&TransportError{Op: "POST /push-notifications/send", Err: errors.New("refused")},
			"POST /push-notifications/send: refused (the request was not sent)"},
		{&TransportError{Op: "GET /push-notifications/recipients", RequestID: "r-1", Err: errors.New("unexpected EOF"), Sent: true},
			"GET /push-notifications/recipients (request id r-1): unexpected EOF"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
