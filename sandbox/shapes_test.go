package sandbox

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRecipientsPagingSchemes: each RecipientsPaging serves the same list
// in pages, naming the next page its way.
func TestRecipientsPagingSchemes(t *testing.T) {
	want := append([]string{"alice", "dave", "erin", "frank"}, rangeIDs(0, 2500)...)
	linkNext := regexp.MustCompile(`<([^>]*)>; rel="next"`)
	for _, paging := range []string{PagingCursor, PagingLink, PagingLinksNext} {
		t.Run(paging, func(t *testing.T) {
			_, c := start(t, conformanceSeed, Options{RecipientsPaging: paging})
			var got []string
			next := c.base + "/push-notifications/recipients?limit=700"
			pages := 0
			for next != "" {
				if pages++; pages > 10 {
					t.Fatal("paging does not end")
				}
				r := c.do(http.MethodGet, next, "k-test", "", nil)
				if r.status != http.StatusOK {
					t.Fatalf("page %d: %d %s", pages, r.status, r.body)
				}
				next = ""
				switch paging {
				case PagingCursor:
					var p struct {
						UserIDs []string `json:"userIds"`
						Next    string   `json:"next"`
					}
					r.json(t, &p)
					got = append(got, p.UserIDs...)
					if p.Next != "" {
						next = c.base + "/push-notifications/recipients?limit=700&cursor=" + p.Next
					}
				case PagingLink:
					var ids []string
					r.json(t, &ids)
					got = append(got, ids...)
					h := r.header.Get("Link")
					if !strings.Contains(h, `</v1/push-notifications/recipients>; rel="first"`) {
						t.Errorf("Link %q", h)
					}
					if m := linkNext.FindStringSubmatch(h); m != nil {
						if !strings.HasPrefix(m[1], "/v1/push-notifications/recipients?") || !strings.Contains(m[1], "limit=700") {
							t.Errorf("next %q: want a relative URL keeping the limit", m[1])
						}
						next = c.root + m[1]
					}
				case PagingLinksNext:
					var p struct {
						Data  []string `json:"data"`
						Links struct {
							Next *string `json:"next"`
						} `json:"links"`
					}
					r.json(t, &p)
					got = append(got, p.Data...)
					if p.Links.Next != nil {
						if !strings.HasPrefix(*p.Links.Next, c.base+"/push-notifications/recipients?") {
							t.Errorf("next %q: want an absolute URL", *p.Links.Next)
						}
						next = *p.Links.Next
					}
				}
			}
			if !slices.Equal(got, want) || pages != 4 {
				t.Errorf("%d ids in %d pages, want %d in 4", len(got), pages, len(want))
			}
		})
	}
}

// TestRecipientsFaults: the first request for a named page gets the
// status with Retry-After; asked again, it is served.
func TestRecipientsFaults(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{RecipientsPaging: PagingCursor,
		RecipientsFaults: []RecipientsFault{{Page: 2, Status: 429}, {Page: 3, Status: 503}}})
	r1 := c.recipients("k-test", "")
	var p1 struct{ Next string }
	r1.json(t, &p1)
	for _, want := range []int{429, 200} {
		r := c.recipients("k-test", "?cursor="+p1.Next)
		if r.status != want || want != 200 && r.header.Get("Retry-After") != "1" {
			t.Fatalf("page 2: %d %q, want %d", r.status, r.header.Get("Retry-After"), want)
		}
	}
	var p struct{ Next string }
	c.recipients("k-test", "?cursor="+p1.Next).json(t, &p)
	for _, want := range []int{503, 200} {
		if r := c.recipients("k-test", "?cursor="+p.Next); r.status != want {
			t.Fatalf("page 3: %d, want %d", r.status, want)
		}
	}
}

func TestResultsOrder(t *testing.T) {
	body := `[{"userIds":["alice","erin","gina"],"title":"t","body":"b"},{"deviceIds":["kiosk-1"],"badgeCount":1}]`
	for _, tc := range []struct {
		order string
		want  []string
	}{
		{OrderRequest, []string{"alice", "erin", "gina", "kiosk-1"}},
		{OrderReverse, []string{"kiosk-1", "gina", "erin", "alice"}},
	} {
		_, c := start(t, conformanceSeed, Options{ResultsOrder: tc.order})
		var got []string
		for _, r := range c.send("k-test", body).results(t) {
			got = append(got, r.UserID+r.DeviceID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.order, got, tc.want)
		}
	}
	_, c := start(t, conformanceSeed, Options{ResultsOrder: OrderShuffle, FaultSeed: 3})
	seen := map[string]bool{}
	for range 20 {
		var got []string
		for _, r := range c.send("k-test", body).results(t) {
			got = append(got, r.UserID+r.DeviceID)
		}
		if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, []string{"alice", "erin", "gina", "kiosk-1"}) {
			t.Fatalf("shuffled results lost entries: %v", got)
		}
		seen[strings.Join(got, ",")] = true
	}
	if len(seen) < 2 {
		t.Errorf("shuffle gave one order in 20 requests: %v", seen)
	}
}

func TestOKBody(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{OKBodyEmpty, ``},
		{OKBodyObject, `{}`},
		{OKBodyResults, `{"results":[]}`},
	} {
		_, c := start(t, conformanceSeed, Options{OKBody: tc.body})
		if r := c.send("k-test", `[{"userIds":["alice"],"title":"t","body":"b"}]`); r.status != 200 || string(r.body) != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.body, r.status, r.body, tc.want)
		}
		// Not all delivered: the results, as always.
		if r := c.send("k-test", `[{"userIds":["alice","frank"],"title":"t","body":"b"}]`); r.status != 207 || len(r.results(t)) != 2 {
			t.Errorf("%s: a 207 %d %s", tc.body, r.status, r.body)
		}
	}
}

func TestSinceFormat(t *testing.T) {
	// alice's test device was last seen 2026-10-01T08:00:00Z; her
	// production device is not attempted with a test key, and bob has no
	// token: both skipped, with the time of last contact.
	for _, tc := range []struct{ format, want string }{
		{SinceRFC3339, `"unreachableSince":"2026-09-15T12:30:00Z"`},
		{SinceEpochS, `"unreachableSince":1789475400}`},
		{SinceEpochMS, `"unreachableSince":1789475400000}`},
	} {
		_, c := start(t, conformanceSeed, Options{SinceFormat: tc.format})
		if r := c.send("k-prod", `[{"userIds":["bob"],"title":"t","body":"b"}]`); !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %s, want %s", tc.format, r.body, tc.want)
		}
	}
}

func TestMaxLengthAnswer207(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{MaxLength: 5, MaxLengthAnswer: "207"})
	r := c.send("k-test", `[{"userIds":["erin"],"title":"short","body":"b"},{"userIds":["erin"],"title":"far too long","body":"b"},{"topics":["news"],"title":"t","body":"longer"}]`)
	want := `{"results":[{"userId":"erin","status":"delivered","deviceCount":1},` +
		`{"userId":"erin","status":"failed","message":"payload too large: title is 12 characters long; at most 5 are allowed"},` +
		`{"topics":["news"],"status":"failed","message":"payload too large: body is 6 characters long; at most 5 are allowed"}]}`
	if r.status != 207 || string(r.body) != want {
		t.Errorf("%d %s\nwant %s", r.status, r.body, want)
	}
	if v := c.device("erin-ok"); v.Received != 1 {
		t.Errorf("erin-ok received %d, want only the short one", v.Received)
	}
	if v := c.device("kiosk-1"); v.Received != 0 {
		t.Errorf("kiosk-1 received the refused one")
	}
}

func TestIssuesPointerDetail(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{IssuesShape: IssuesPointerDetail})
	r := c.send("k-test", `[{"userIds":["alice"],"title":"t","body":"b"},{"userIds":["alice",""],"title":"t","body":"b"}]`)
	if want := `{"issues":[{"pointer":"/1/userIds/1","detail":"must be a non-empty string"}]}`; r.status != 400 || string(r.body) != want {
		t.Errorf("%d %s\nwant %s", r.status, r.body, want)
	}
}
