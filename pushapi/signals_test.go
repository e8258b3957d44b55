package pushapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalServer answers each request URI with its page: headers and body.
// It records the URIs asked for.
type signalPage struct {
	status  int
	headers map[string]string
	body    string
}

func signalServer(t *testing.T, pages map[string]signalPage) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.RequestURI()
		mu.Lock()
		asked = append(asked, uri)
		mu.Unlock()
		w.Header().Set("x-request-id", "req-"+uri)
		p, ok := pages[uri]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		for k, v := range p.headers {
			w.Header().Set(k, v)
		}
		if p.status == 0 {
			p.status = http.StatusOK
		}
		w.WriteHeader(p.status)
		w.Write([]byte(p.body))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// TestRecipientsSignals: each row of the signal table, and the rules
// between them, against a server paging that way. handed is what fn got:
// on an error, only the ids of pages before the one that ended the walk.
func TestRecipientsSignals(t *testing.T) {
	p1 := recURI
	cases := []struct {
		name   string
		pages  map[string]signalPage
		handed []string
		asked  []string
		err    string
	}{
		{"header cursor with a header total", map[string]signalPage{
			p1:                    {headers: map[string]string{"X-Next-Cursor": "c2", "X-Total-Count": "5"}, body: `["a","b"]`},
			recURI + "?cursor=c2": {headers: map[string]string{"X-Next-Cursor": "c3", "X-Total-Count": "5"}, body: `["c","d"]`},
			recURI + "?cursor=c3": {headers: map[string]string{"X-Total-Count": "5"}, body: `["e"]`},
		}, []string{"a", "b", "c", "d", "e"}, nil, ""},
		{"Next-Page-Token and X-Continuation-Token, X-Total", map[string]signalPage{
			p1:                       {headers: map[string]string{"Next-Page-Token": "t/2", "X-Total": "3"}, body: `["a"]`},
			recURI + "?cursor=t":     {},
			recURI + "?cursor=t%2F2": {headers: map[string]string{"X-Continuation-Token": "k3"}, body: `{"data":["b"]}`},
			recURI + "?cursor=k3":    {body: `["c"]`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"X-Next-Page as a page number beside X-Page", map[string]signalPage{
			p1:                            {headers: map[string]string{"X-Page": "1", "X-Per-Page": "2", "X-Next-Page": "2", "X-Total": "3"}, body: `["a","b"]`},
			recURI + "?page=2&per_page=2": {headers: map[string]string{"X-Page": "2", "X-Per-Page": "2", "X-Total": "3"}, body: `["c"]`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"an explicit end wins over a cursor", map[string]signalPage{
			p1:                    {body: `{"userIds":["a","b"],"nextCursor":"c2","hasMore":true,"total":3}`},
			recURI + "?cursor=c2": {body: `{"userIds":["c"],"nextCursor":"c3","hasMore":false,"total":3}`},
		}, []string{"a", "b", "c"}, []string{p1, recURI + "?cursor=c2"}, ""},
		{"has_more false, isLast true, last true, done true, X-Has-More false", map[string]signalPage{
			p1:                    {body: `{"data":["a"],"next":"c2","has_more":"false"}`},
			recURI + "?cursor=c2": {body: `{"data":["b"],"next":"c3","isLast":true}`},
		}, []string{"a"}, []string{p1}, ""},
		{"a header end wins over a header cursor", map[string]signalPage{
			p1: {headers: map[string]string{"X-Next-Cursor": "c2", "X-Has-More": "false"}, body: `["a"]`},
		}, []string{"a"}, []string{p1}, ""},
		{"an explicit end with a total above what arrived", map[string]signalPage{
			p1:                    {body: `{"userIds":["a","b"],"nextCursor":"c2","total":5}`},
			recURI + "?cursor=c2": {body: `{"userIds":["c"],"nextCursor":"c3","hasMore":false,"total":5}`},
		}, []string{"a", "b"}, nil, "recipients page 2, after 2 user ids listed: the answer says it is the last page (hasMore: false) but the list holds 5 user ids (total) and 3 were served"},
		{"offset paging driven by the total", map[string]signalPage{
			p1:                           {body: `{"data":["a","b"],"offset":0,"limit":2,"total":5}`},
			recURI + "?offset=2&limit=2": {body: `{"data":["c","d"],"offset":2,"limit":2,"total":5}`},
			recURI + "?offset=4&limit=2": {body: `{"data":["e"],"offset":4,"limit":2,"total":5}`},
		}, []string{"a", "b", "c", "d", "e"}, []string{p1, recURI + "?offset=2&limit=2", recURI + "?offset=4&limit=2"}, ""},
		{"offset paging in headers", map[string]signalPage{
			p1:                           {headers: map[string]string{"X-Offset": "0", "X-Limit": "2", "X-Total-Count": "3"}, body: `["a","b"]`},
			recURI + "?offset=2&limit=2": {headers: map[string]string{"X-Offset": "2", "X-Limit": "2", "X-Total-Count": "3"}, body: `["c"]`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"page paging driven by total_count", map[string]signalPage{
			p1:                            {body: `{"items":["a","b"],"page":1,"per_page":2,"total_count":3}`},
			recURI + "?page=2&per_page=2": {body: `{"items":["c"],"page":2,"per_page":2,"total_count":3}`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"page paging from 0", map[string]signalPage{
			p1:                            {body: `{"results":["a","b"],"meta":{"page":0,"pages":2,"count":3}}`},
			recURI + "?page=1&per_page=2": {body: `{"results":["c"],"meta":{"page":1,"pages":2,"count":3}}`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"a service that ignores the offset answers page 1 again", map[string]signalPage{
			p1:                           {body: `{"data":["a","b"],"offset":0,"limit":2,"total":5}`},
			recURI + "?offset=2&limit=2": {body: `{"data":["a","b"],"offset":0,"limit":2,"total":5}`},
		}, []string{"a", "b"}, nil, "recipients page 2, after 2 user ids listed: the page brought no user id not listed before (2 served)"},
		{"a header total and no way on: nothing handed over", map[string]signalPage{
			p1: {headers: map[string]string{"X-Total-Count": "2878"}, body: `["a","b","c"]`},
		}, nil, nil, "recipients page 1: the answer says the list goes on (the list holds 2,878 user ids (header X-Total-Count) and 3 were served) but names no next page pushform can follow"},
		{"a has-more header and no way on", map[string]signalPage{
			p1: {headers: map[string]string{"X-Has-More": "true"}, body: `["a"]`},
		}, nil, nil, "the answer says the list goes on (header X-Has-More: true)"},
		{"a header naming the next page otherwise", map[string]signalPage{
			p1: {headers: map[string]string{"X-Next-Offset-Key": "abc"}, body: `["a"]`},
		}, nil, nil, `it names its next page under "header X-Next-Offset-Key", which pushform cannot follow`},
		{"a later page shows more it cannot follow: its ids are not handed", map[string]signalPage{
			p1:                    {headers: map[string]string{"X-Next-Cursor": "c2"}, body: `["a","b"]`},
			recURI + "?cursor=c2": {body: `{"data":["c"],"meta":{"hasMore":true}}`},
		}, []string{"a", "b"}, nil, "recipients page 2, after 2 user ids listed: the answer says the list goes on (meta.hasMore: true)"},
		{"a header total the list reaches", map[string]signalPage{
			p1: {headers: map[string]string{"X-Total-Count": "3"}, body: `["a","b","c"]`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"Laravel: last_page is a number, next_page_url a link", map[string]signalPage{
			p1:                 {body: `{"current_page":1,"data":["a","b"],"last_page":2,"per_page":2,"total":3,"next_page_url":"/v1/push-notifications/recipients?page=2"}`},
			recURI + "?page=2": {body: `{"current_page":2,"data":["c"],"last_page":2,"per_page":2,"total":3,"next_page_url":null}`},
		}, []string{"a", "b", "c"}, nil, ""},
		{"GraphQL-like pageInfo", map[string]signalPage{
			p1:                    {body: `{"users":[],"data":["a"],"pageInfo":{"hasNextPage":true,"endCursor":"c2"}}`},
			recURI + "?cursor=c2": {body: `{"data":["b"],"pageInfo":{"hasNextPage":false,"endCursor":"c2"}}`},
		}, []string{"a", "b"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, asked := signalServer(t, tc.pages)
			c := newClient(t, srv.URL)
			var handed []string
			_, err := c.RecipientsFunc(context.Background(), func(ids []string) error {
				handed = append(handed, ids...)
				return nil
			})
			if tc.asked != nil && !slices.Equal(asked(), tc.asked) {
				t.Errorf("asked %q, want %q", asked(), tc.asked)
			}
			if !slices.Equal(handed, tc.handed) {
				t.Errorf("handed %q, want %q", handed, tc.handed)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var de *DecodeError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &de) || de.RequestID == "" {
				t.Fatalf("err = %v, want %q with a request id", err, tc.err)
			}
		})
	}
}

// TestRecipients429IsAWait: a 429 on a page uses no try, even with one
// allowed; its waits come out of the run's budget, and once that is spent
// the page fails naming it.
func TestRecipients429IsAWait(t *testing.T) {
	var mu sync.Mutex
	n := 0
	limited := 3
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		w.Header().Set("x-request-id", "req-1")
		if k <= limited {
			w.Header().Set("Retry-After", "4")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`["a"]`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		budget time.Duration
		err    string
	}{
		{time.Minute, ""},
		{10 * time.Second, "the run's budget for them (10s, --rate-limit-wait)"},
	} {
		n = 0
		now := time.Unix(1e9, 0)
		c := newClient(t, srv.URL, func(o *Options) { o.RecipientsMaxAttempts = 1 })
		c.rate = NewRateLimit(tc.budget, func() time.Time { return now })
		var waits []time.Duration
		c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); now = now.Add(d); return nil }
		res, err := c.Recipients(context.Background())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "429") {
				t.Fatalf("budget %s: err = %v, want %q", tc.budget, err, tc.err)
			}
			if spent, _ := c.rate.Spent(); spent > tc.budget {
				t.Errorf("spent %s of a budget of %s", spent, tc.budget)
			}
			continue
		}
		if err != nil || !slices.Equal(res.UserIDs, []string{"a"}) {
			t.Fatalf("budget %s: %v %v", tc.budget, res, err)
		}
		if !slices.Equal(waits, []time.Duration{4 * time.Second, 4 * time.Second, 4 * time.Second}) {
			t.Errorf("waits %v, want the Retry-After three times", waits)
		}
	}
}

// TestRateLimitShared: workers answered 429 together spend the budget
// once, and a pause holds everyone.
func TestRateLimitShared(t *testing.T) {
	now := time.Unix(1e9, 0)
	l := NewRateLimit(10*time.Second, func() time.Time { return now })
	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	for range 10 {
		if err := l.Wait(context.Background(), 5*time.Second, sleep); err != nil {
			t.Fatal(err)
		}
	}
	if spent, waited := l.Spent(); spent != 5*time.Second || waited != 10 {
		t.Fatalf("spent %s over %d waits, want 5s over 10", spent, waited)
	}
	if err := l.Pause(context.Background(), sleep); err != nil || slept[len(slept)-1] != 5*time.Second {
		t.Fatalf("pause: %v %v", err, slept)
	}
	now = now.Add(5 * time.Second)
	if err := l.Pause(context.Background(), func(context.Context, time.Duration) error { t.Fatal("paused after the pause"); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(context.Background(), 5*time.Second, sleep); err != nil {
		t.Fatal(err)
	}
	var spent *RateLimitSpentError
	if err := l.Wait(context.Background(), 6*time.Second, sleep); !errors.As(err, &spent) || spent.Waited != 11 {
		t.Fatalf("beyond the budget: %v", err)
	}
}

// TestHeldPageNotStreamed: a bare array whose headers name the next page
// or say nothing of paging is handed over as it arrives; one whose
// headers give a sign of more without a way on, or an end beside a next
// page, or an object (whose signals may follow its list) is held to its
// end, for nextPage to read first.
func TestHeldPageNotStreamed(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1")
	for _, tc := range []struct {
		h    http.Header
		body string
		hold bool
	}{
		{http.Header{}, `["a","b"]`, false},
		{http.Header{"Link": {`</v1/x?page=2>; rel="next"`}}, `["a","b"]`, false},
		{http.Header{"X-Next-Cursor": {"c2"}, "X-Total-Count": {"9"}}, `["a","b"]`, false},
		{http.Header{"X-Total-Count": {"5"}}, `["a","b"]`, true},
		{http.Header{"X-Next-Cursor": {"c2"}, "X-Has-More": {"false"}}, `["a","b"]`, true},
		{http.Header{"X-Next-Offset": {"5"}}, `["a","b"]`, true},
		{http.Header{}, `{"userIds":["a","b"]}`, true},
	} {
		f := &recipientsFetch{c: c, fn: func([]string) error { return nil }}
		var pg pageAnswer
		if _, err := c.readPage(&pg, tc.h, strings.NewReader(tc.body), f); err != nil {
			t.Fatal(err)
		}
		if f.hold != tc.hold {
			t.Errorf("%v %s: held %v, want %v", tc.h, tc.body, f.hold, tc.hold)
		}
	}
}

// TestEverySignalRead: every row of the table is read where it says, with
// the meaning it says, whatever the case of its name.
func TestEverySignalRead(t *testing.T) {
	for _, s := range signals {
		if s.where&inBody != 0 {
			for _, name := range []string{s.name, strings.ToUpper(s.name)} {
				if m := bodySignal([]byte(name)); m != s.meaning {
					t.Errorf("body key %q reads as %d, want %d", name, m, s.meaning)
				}
			}
		}
		if s.where&inHeader == 0 {
			continue
		}
		value := map[meaning]string{sigNext: "c2", sigMore: "false", sigLast: "true"}[s.meaning]
		if value == "" {
			value = "7"
		}
		p := headerInfo(http.Header{http.CanonicalHeaderKey(s.name): {value}})
		got := map[meaning]bool{
			sigNext:    p.next.v == "c2",
			sigTotal:   p.total == 7,
			sigMore:    p.end < 0,
			sigLast:    p.end < 0,
			sigPage:    p.page == 7,
			sigPages:   p.pages == 7,
			sigPerPage: p.perPage == 7,
			sigOffset:  p.offset == 7,
			sigLimit:   p.limit == 7,
		}[s.meaning]
		if !got || p.nextish != "" {
			t.Errorf("header %s: %s read as %+v", s.name, value, p)
		}
	}
}
