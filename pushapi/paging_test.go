package pushapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// page is one answer of a paged server, by request URI.
type page struct {
	status int
	link   string // Link header; {HOST} stands for http://host:port
	body   string // {HOST} too
	after  string // Retry-After
}

// pagedServer answers each request URI with its page; a URI it does not
// know is a 404. It records the URIs asked for.
func pagedServer(t *testing.T, pages map[string][]page) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	served := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.RequestURI()
		mu.Lock()
		asked = append(asked, uri)
		answers, ok := pages[uri]
		n := served[uri]
		served[uri]++
		mu.Unlock()
		w.Header().Set("x-request-id", "req-"+uri)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		p := answers[min(n, len(answers)-1)]
		host := "http://" + r.Host
		if p.link != "" {
			for _, l := range strings.Split(p.link, "\n") {
				w.Header().Add("Link", strings.ReplaceAll(l, "{HOST}", host))
			}
		}
		if p.after != "" {
			w.Header().Set("Retry-After", p.after)
		}
		if p.status == 0 {
			p.status = http.StatusOK
		}
		w.WriteHeader(p.status)
		w.Write([]byte(strings.ReplaceAll(p.body, "{HOST}", host)))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

const recURI = "/v1/push-notifications/recipients"

func TestRecipientsPaging(t *testing.T) {
	p1 := recURI
	cases := []struct {
		name  string
		pages map[string][]page
		want  []string // ids; nil with wantErr
		asked []string // URIs in order, when it matters
		err   string
	}{
		{"Link header, absolute, several links and parameters", map[string][]page{
			p1:                 {{link: `<{HOST}/v1/push-notifications/recipients?page=2>; rel="next"; title="page 2"`, body: `["a","b"]`}},
			recURI + "?page=2": {{link: `<{HOST}/v1/push-notifications/recipients>; rel=first, <{HOST}/v1/push-notifications/recipients?page=3>; type="application/json"; rel="next"`, body: `["c"]`}},
			recURI + "?page=3": {{link: `<{HOST}/v1/push-notifications/recipients?page=2>; rel="prev"`, body: `["d"]`}},
		}, []string{"a", "b", "c", "d"}, []string{p1, recURI + "?page=2", recURI + "?page=3"}, ""},
		{"Link header, relative, rel list, two header fields", map[string][]page{
			p1:                  {{link: "</v1/push-notifications/recipients?after=b>; rel=\"prev next\"", body: `{"data":["a","b"]}`}},
			recURI + "?after=b": {{link: "<https://docs.example.com/paging>; rel=help\n<?after=c>; rel=next", body: `{"data":["c"]}`}},
			recURI + "?after=c": {{body: `{"data":["d"],"total":4}`}},
		}, []string{"a", "b", "c", "d"}, nil, ""},
		{"links.next relative, paging.next absolute, _links.next.href, next cursor", map[string][]page{
			p1:                                {{body: `{"data":["a"],"links":{"self":"/v1/push-notifications/recipients","next":"/v1/push-notifications/recipients?p=2"}}`}},
			recURI + "?p=2":                   {{body: `{"data":["b"],"paging":{"next":"{HOST}/v1/push-notifications/recipients?p=3","total":5}}`}},
			recURI + "?p=3":                   {{body: `{"_links":{"next":{"href":"./recipients?p=4"}},"data":["c"]}`}},
			recURI + "?p=4":                   {{body: `{"data":["d"],"meta":{"nextCursor":"/x+y=="}}`}},
			recURI + "?cursor=%2Fx%2By%3D%3D": {{body: `{"data":["e"],"links":{"next":null},"meta":{"total":5,"hasMore":false}}`}},
		}, []string{"a", "b", "c", "d", "e"}, nil, ""},
		{"cursor beside next: next wins", map[string][]page{
			p1:                    {{body: `{"cursor":"p1","userIds":["a"],"next":"p2"}`}},
			recURI + "?cursor=p2": {{body: `{"cursor":"p2","userIds":["b"]}`}},
		}, nil, nil, "paging loops"},
		{"hasMore without a next page", map[string][]page{
			p1: {{body: `{"data":["a"],"hasMore":true}`}},
		}, nil, nil, "recipients page 1: the answer says the list goes on (hasMore: true) but names no next page pushform can follow"},
		{"a total above what was served", map[string][]page{
			p1: {{body: `{"data":["a","b"],"meta":{"total":5028}}`}},
		}, nil, nil, "recipients page 1: the answer says the list goes on (the list holds 5,028 user ids (meta.total) and 2 were served) but names no next page"},
		{"page 1 of 3 without a next page: page paging", map[string][]page{
			p1:                            {{body: `{"data":["a"],"pagination":{"page":1,"totalPages":3}}`}},
			recURI + "?page=2&per_page=1": {{body: `{"data":["b"],"pagination":{"page":2,"totalPages":3}}`}},
			recURI + "?page=3&per_page=1": {{body: `{"data":["c"],"pagination":{"page":3,"totalPages":3}}`}},
		}, []string{"a", "b", "c"}, nil, ""},
		{"a field about something else next", map[string][]page{
			p1: {{body: `{"data":["a"],"nextRefreshAt":"2026-11-25T00:00:00Z"}`}},
		}, []string{"a"}, nil, ""},
		{"a next field it cannot follow", map[string][]page{
			p1: {{body: `{"data":["a"],"nextPageUri":"/v1/x"}`}},
		}, nil, nil, `names its next page under "nextPageUri", which pushform cannot follow`},
		{"a link to another host", map[string][]page{
			p1: {{link: `<https://evil.example.com/v1/push-notifications/recipients?page=2>; rel="next"`, body: `["a"]`}},
		}, nil, nil, "is on another host (https://evil.example.com): it is not followed"},
		{"a body link to another host", map[string][]page{
			p1: {{body: `{"data":["a"],"links":{"next":"http://127.0.0.2:1/v1/push-notifications/recipients?page=2"}}`}},
		}, nil, nil, "is on another host"},
		{"a link that repeats", map[string][]page{
			p1:                 {{link: `</v1/push-notifications/recipients?page=2>; rel="next"`, body: `["a"]`}},
			recURI + "?page=2": {{link: `</v1/push-notifications/recipients>; rel="next"`, body: `["b"]`}},
		}, nil, nil, "recipients page 2 names a page already fetched as its next"},
		{"a Link header that cannot be read", map[string][]page{
			p1: {{link: `<{HOST}/v1/push-notifications/recipients?page=2; rel="next"`, body: `["a"]`}},
		}, nil, nil, "recipients page 1: its Link header cannot be read"},
		{"a link longer than the cursor bound", map[string][]page{
			p1: {{link: `</v1/push-notifications/recipients?c=` + strings.Repeat("x", MaxCursorBytes) + `>; rel="next"`, body: `["a"]`}},
		}, nil, nil, "a link target longer than 8192 bytes"},
		{"a next link in the body longer than the cursor bound", map[string][]page{
			p1: {{body: `{"data":["a"],"links":{"next":"/v1/push-notifications/recipients?c=` + strings.Repeat("x", MaxCursorBytes) + `"}}`}},
		}, nil, nil, "longer than 8192 bytes: a cursor that grows with every page is refused"},
		{"429 and 503 on page 2 are asked again", map[string][]page{
			p1:                 {{link: `</v1/push-notifications/recipients?page=2>; rel="next"`, body: `["a"]`}},
			recURI + "?page=2": {{status: 429, after: "2"}, {status: 503, after: "1"}, {body: `["b"]`}},
		}, []string{"a", "b"}, []string{p1, recURI + "?page=2", recURI + "?page=2", recURI + "?page=2"}, ""},
		{"503 on every try", map[string][]page{
			p1: {{status: 503, after: "1"}},
		}, nil, slices.Repeat([]string{p1}, DefaultRecipientsMaxAttempts), "503 Service Unavailable"},
		{"404 is not asked again", map[string][]page{
			p1: {{link: `</v1/push-notifications/recipients?page=2>; rel="next"`, body: `["a"]`}},
		}, nil, []string{p1, recURI + "?page=2"}, "recipients page 2, after 1 user id listed: the service answered 404"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, asked := pagedServer(t, tc.pages)
			c := newClient(t, srv.URL)
			var waits []time.Duration
			now := time.Now()
			c.rate = NewRateLimit(time.Minute, func() time.Time { return now })
			c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); now = now.Add(d); return nil }
			res, err := c.Recipients(context.Background())
			if tc.asked != nil && !slices.Equal(asked(), tc.asked) {
				t.Errorf("asked %q, want %q", asked(), tc.asked)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), canary) {
					t.Fatal("the key is in the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.UserIDs, tc.want) {
				t.Errorf("ids %q, want %q", res.UserIDs, tc.want)
			}
			if strings.HasPrefix(tc.name, "429") && (len(waits) != 2 || waits[0] < 2*time.Second || waits[1] < time.Second) {
				t.Errorf("waits %v: want at least the Retry-After of each answer", waits)
			}
		})
	}
}

// TestRecipientsKeyOnlyToTheBaseHost: the key is never sent to a host a
// next link names, whatever the link.
func TestRecipientsKeyOnlyToTheBaseHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "" {
			t.Errorf("the key reached another host: %s", r.URL)
		}
		w.Write([]byte(`[]`))
	}))
	t.Cleanup(other.Close)
	for _, next := range []string{other.URL + "/v1/push-notifications/recipients", "//" + strings.TrimPrefix(other.URL, "http://") + "/v1/x", "http://user:pw@" + strings.TrimPrefix(other.URL, "http://")} {
		srv, _ := pagedServer(t, map[string][]page{recURI: {{link: "<" + next + `>; rel="next"`, body: `["a"]`}}})
		if _, err := newClient(t, srv.URL).Recipients(context.Background()); err == nil || !strings.Contains(err.Error(), "another host") {
			t.Errorf("%s: err = %v", next, err)
		}
	}
}

func TestParseLinks(t *testing.T) {
	cases := []struct {
		in   []string
		next string
		err  string
	}{
		{[]string{`<https://a/x?p=2>; rel="next"`}, "https://a/x?p=2", ""},
		{[]string{`<https://a/1>; rel="prev", <https://a/3>; rel="next"`}, "https://a/3", ""},
		{[]string{`<https://a/1>; rel="prev"`, `<https://a/3>; REL=Next`}, "https://a/3", ""},
		{[]string{`<a>; title="x, y; z"; rel="next"`}, "a", ""},
		{[]string{`<a>; rel="start next"; rel="prev"`}, "a", ""},
		{[]string{`<a>; rel="prev"; rel="next"`}, "", ""}, // only the first rel counts
		{[]string{` , <a>;rel=next ,`}, "a", ""},
		{[]string{`<a>; title="\"q\""; rel=next`}, "a", ""},
		{[]string{`<a>; rel`}, "", ""},
		{[]string{``}, "", ""},
		{[]string{`<a; rel="next"`}, "", "no closing"},
		{[]string{`a; rel="next"`}, "", `want "<"`},
		{[]string{`<a> rel="next"`}, "", `want ";"`},
		{[]string{`<a>; rel="next`}, "", "inside a quoted string"},
		{[]string{`<a>; rel=next <b>`}, "", `want ";"`},
		{[]string{`<>; rel=next`}, "", "empty"},
	}
	for _, tc := range cases {
		next, err := nextLink(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || next != tc.next {
			t.Errorf("%q: %q %v, want %q", tc.in, next, err, tc.next)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	for _, s := range []string{
		`<https://a/x?p=2>; rel="next"`,
		`<https://a/1>; rel="prev", <https://a/3>; rel="next"; title="a\"b"`,
		` , <a>;rel="start next" ,`,
		`<a>; rel`,
		`<a; rel=next`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		links, err := parseLinks([]string{h})
		if err != nil {
			return
		}
		if len(links) > maxLinks {
			t.Fatalf("%d links", len(links))
		}
		for _, l := range links {
			if len(l.target) > MaxCursorBytes || strings.ContainsAny(l.target, ">") {
				t.Fatalf("target %q", l.target)
			}
			for _, r := range l.rels {
				if r == "" || r != strings.ToLower(r) || strings.ContainsAny(r, " \t") {
					t.Fatalf("rel %q", r)
				}
			}
		}
		// A header of several fields reads as their values joined.
		if len(links) > maxLinks/2 {
			return
		}
		joined, err2 := parseLinks([]string{h, h})
		if err2 != nil || len(joined) != 2*len(links) {
			t.Fatalf("twice: %d links, %v; once %d", len(joined), err2, len(links))
		}
	})
}
