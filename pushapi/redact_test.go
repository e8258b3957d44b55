package pushapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pushform/secret"
)

// escapings of the canary key a hostile or careless server might echo.
var escapings = map[string]string{
	"raw":           canary,
	"json first":    `\u0043` + canary[1:],
	"json all":      jsonAll(canary, "%04x"),
	"json all HEX":  jsonAll(canary, "%04X"),
	"url":           strings.ReplaceAll(canary, "-", "%2d"),
	"url all":       urlAll(canary),
	"json and url":  `\u0043ANARY%2Dk3y-0123456789ab\u0063def`,
	"url of json":   `%5Cu0043` + canary[1:],
	"html entities": "&#67;&#x41;" + canary[2:],
}

func jsonAll(s, verb string) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteString(`\u` + fmt.Sprintf(verb, c))
	}
	return b.String()
}

func urlAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// leaks reports whether text holds the canary in any form.
func leaks(text string) bool { return secret.NewRedactor(canary).Contains(text) }

func TestKeyEchoedInAnyEscaping(t *testing.T) {
	for name, key := range escapings {
		t.Run(name, func(t *testing.T) {
			check := func(what, text string) {
				t.Helper()
				if leaks(text) {
					t.Errorf("%s holds the key: %q", what, text)
				}
			}
			// A 207 echoing it in a failed message and a skipped reason.
			srv := serve(t, canned{status: 207, body: `[{"userId":"alice","status":"failed","message":"bad key ` + key + `"},` +
				`{"userId":"bob","status":"skipped","reason":"` + key + `"}]`})
			res, err := newClient(t, srv.URL).Send(context.Background(), mixed[:1])
			if err != nil {
				t.Fatal(err)
			}
			if m := res.Results[0][0].Message; m != "bad key [redacted]" {
				t.Errorf("message %q", m)
			}
			if r := res.Results[0][1].Reason; r != "[redacted]" {
				t.Errorf("reason %q", r)
			}

			// A 400 echoing it in an issue's message and field.
			srv = serve(t, canned{status: 400, body: `{"issues":[{"path":[0,"` + key + `"],"message":"bad key ` + key + `"}]}`})
			_, err = newClient(t, srv.URL).Send(context.Background(), mixed)
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Issues) != 1 {
				t.Fatalf("got %v", err)
			}
			is := ve.Issues[0]
			check("the 400 error", err.Error())
			check("the issue's raw entry", string(is.Raw))
			check("the issue's field", is.Field)
			if is.Message != "bad key [redacted]" || is.Index != 0 {
				t.Errorf("issue %+v", is)
			}

			// Error bodies, a garbage 200, and the request id header.
			for _, a := range []canned{
				{status: 500, body: `{"message":"bad key ` + key + `"}`},
				{status: 200, body: `<html><title>` + key + `</title>`},
				{status: 200, body: `{"results":[{"userId":"` + key + `","status":"delivered"}]}`},
				{status: 429, headers: map[string]string{"x-request-id": "id-" + key}},
			} {
				srv = serve(t, a)
				_, err = newClient(t, srv.URL).Send(context.Background(), mixed[:1])
				if err == nil {
					t.Fatalf("%d: no error", a.status)
				}
				check(fmt.Sprintf("the %d error", a.status), err.Error())
				check("its request id", RequestID(err))
			}

			// A recipient id holding it is redacted, as every string is.
			srv = serve(t, canned{status: 200, body: `["alice","id-` + key + `"]`})
			rec, err := newClient(t, srv.URL).Recipients(context.Background())
			if err != nil || len(rec.UserIDs) != 2 || rec.UserIDs[1] != "id-[redacted]" {
				t.Fatalf("recipients: %v %v", rec, err)
			}
			srv = serve(t, canned{status: 200, body: `{"userIds":["a"],"next":"` + key + `"}`})
			_, err = newClient(t, srv.URL).Recipients(context.Background())
			if err == nil || !strings.Contains(err.Error(), "paging loops") {
				t.Fatalf("paging: %v", err)
			}
			check("the paging error", err.Error())
		})
	}
}

func TestKeySplitAcrossFields(t *testing.T) {
	srv := serve(t, canned{status: 207, body: `[{"userId":"alice","status":"failed","message":"bad key ` + canary[:9] + `","reason":"` + canary[9:] + `"},` +
		`{"userId":"bob","reason":"` + canary[:4] + `"},{"deviceId":"kiosk-1","message":"` + canary[4:] + ` again","status":"failed"}]`})
	res, err := newClient(t, srv.URL).Send(context.Background(), mixed[:2])
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Results[0][0].Message; m != "bad key [redacted]" {
		t.Errorf("message %q", m)
	}
	// Split across two entries: the reason of one and the message of the next.
	if r, m := res.Results[0][1].Reason, res.Results[1][0].Message; r != "[redacted]" || m != "[redacted] again" {
		t.Errorf("reason %q, message %q", r, m)
	}
}

func TestPlainWordsForUnusableAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body, want string
	}{
		{"HTML page", "text/html", "<!DOCTYPE html><html><head><title>Welcome to nginx!</title>", `the answer is not JSON (it looks like an HTML page: "Welcome to nginx!")`},
		{"binary", "", "\x00\x01\x02garbage", `the answer is not JSON (it starts with "garbage")`},
		{"text", "", "OK", `the answer is not JSON (it starts with "OK")`},
		{"a number", "", "42", "the answer is a number, want a results object or array"},
		{"cut short", "", `{"results":[{"userId":"alice","status":"delivered"}`, "the answer ended early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, canned{status: 200, body: tc.body, headers: map[string]string{"Content-Type": tc.ct}})
			_, err := newClient(t, srv.URL).Send(context.Background(), mixed[:1])
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestRecipientsCursorBound(t *testing.T) {
	long := strings.Repeat("c", MaxCursorBytes+1)
	srv := serve(t,
		canned{status: 200, body: `{"userIds":["a"],"next":"p2"}`},
		canned{status: 200, body: `{"userIds":["b"],"next":"` + long + `"}`})
	_, err := newClient(t, srv.URL).Recipients(context.Background())
	if err == nil || !strings.Contains(err.Error(), "recipients page 2, after 1 user id listed:") || !strings.Contains(err.Error(), "the next cursor is longer than 8192 bytes") {
		t.Fatalf("got %v", err)
	}
	if len(err.Error()) > 2000 {
		t.Errorf("the error quotes the cursor: %d bytes", len(err.Error()))
	}
}

func TestRecipientsTimeLimit(t *testing.T) {
	// Pages without end; the time limit fires while page 3 is asked for.
	page := 0
	third := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page++
		w.Header().Set("x-request-id", fmt.Sprintf("p%d", page))
		if page == 3 {
			close(third)
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, `{"userIds":["u%d"],"next":"c%d"}`, page, page)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	expire := make(chan struct{})
	c.recDeadline = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return expiring{ctx, expire}, func() {}
	}
	go func() { <-third; close(expire) }()
	ids, err := c.RecipientsFunc(context.Background(), func([]string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "the recipient list was not complete after") ||
		!strings.Contains(err.Error(), "(3 pages, 2 user ids so far): raise the recipients time limit (--recipients-timeout)") {
		t.Fatalf("got %v", err)
	}
	if len(ids) != 2 || ids[1] != "p2" {
		t.Errorf("request ids %v", ids)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("not a deadline: %v", err)
	}
}
