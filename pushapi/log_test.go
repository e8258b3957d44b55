package pushapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestRequestLog(t *testing.T) {
	srv := serve(t,
		canned{status: 207, body: `[{"userId":"alice","status":"failed","message":"token for alice expired"},{"userId":"bob","reason":"no_active_device"}]`},
		canned{status: 200, body: `{"userIds":["carol","dave"],"next":"cursor-of-erin"}`, headers: map[string]string{"x-request-id": "page-1"}},
		canned{status: 200, body: `["frank"]`, headers: map[string]string{"x-request-id": "page-2"}},
		canned{status: 400, body: `{"issues":[{"path":[0,"userIds",0],"message":"alice is not a user"}]}`},
		canned{status: 200, body: `<html><title>alice {KEY}</title>`, headers: map[string]string{"x-request-id": "id-{KEY}"}},
	)
	var mu sync.Mutex
	var logs []RequestLog
	c := newClient(t, srv.URL, func(o *Options) {
		o.Log = func(l RequestLog) { mu.Lock(); logs = append(logs, l); mu.Unlock() }
	})
	ctx := context.Background()
	c.Send(ctx, mixed[:1])
	c.Recipients(ctx)
	c.Send(ctx, mixed[:1])
	c.Send(ctx, mixed[:1])
	if len(logs) != 5 {
		t.Fatalf("%d log entries: %+v", len(logs), logs)
	}
	want := []RequestLog{
		{Method: "POST", Path: SendPath, Status: 207, RequestID: "req-1", IDsSent: 2, IDsReceived: 2},
		{Method: "GET", Path: RecipientsPath, Page: 1, Status: 200, RequestID: "page-1", IDsReceived: 2},
		{Method: "GET", Path: RecipientsPath, Page: 2, Status: 200, RequestID: "page-2", IDsReceived: 1},
		{Method: "POST", Path: SendPath, Status: 400, RequestID: "req-1", IDsSent: 2, Error: "rejected"},
		{Method: "POST", Path: SendPath, Status: 200, RequestID: "id-[redacted]", IDsSent: 2, Error: "unreadable answer"},
	}
	for i, w := range want {
		got := logs[i]
		if got.Duration <= 0 {
			t.Errorf("entry %d: duration %v", i, got.Duration)
		}
		got.Duration = 0
		if got != w {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	// Nothing from the key, the ids or the bodies reaches the log.
	secrets := []string{canary, "alice", "bob", "carol", "dave", "erin", "frank", "token", "html"}
	for _, l := range logs {
		text := fmt.Sprintf("%#v", l)
		if i := slices.IndexFunc(secrets, func(s string) bool { return strings.Contains(text, s) }); i >= 0 {
			t.Errorf("log entry holds %q: %s", secrets[i], text)
		}
	}
}

func TestRequestLogTransportFailure(t *testing.T) {
	srv, got := hang(t, nil)
	var logs []RequestLog
	c := newClient(t, srv.URL, func(o *Options) { o.Log = func(l RequestLog) { logs = append(logs, l) } })
	expire := fakeDeadline(c)
	go func() { <-got; close(expire) }()
	c.Send(context.Background(), mixed)
	if len(logs) != 1 || logs[0].Error != "timeout" || logs[0].Status != 0 || logs[0].IDsSent != 4 {
		t.Errorf("got %+v", logs)
	}
}
