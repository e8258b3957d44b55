package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSpecPagingSchemes: each issue 38 scheme serves the whole list in
// pages of the size asked, signalling the next page and the total its way.
func TestSpecPagingSchemes(t *testing.T) {
	want := append([]string{"alice", "dave", "erin", "frank"}, rangeIDs(0, 2500)...)
	total := strconv.Itoa(len(want))
	for _, paging := range []string{PagingHeader, PagingOffset, PagingPage, PagingHasMore} {
		t.Run(paging, func(t *testing.T) {
			_, c := start(t, conformanceSeed, Options{RecipientsPaging: paging})
			var got []string
			query := map[string]string{PagingHeader: "?limit=700", PagingOffset: "?offset=0&limit=700", PagingPage: "?page=1&per_page=700", PagingHasMore: "?limit=700"}[paging]
			for pages := 1; query != ""; pages++ {
				if pages > 10 {
					t.Fatal("paging does not end")
				}
				r := c.recipients("k-test", query)
				if r.status != http.StatusOK {
					t.Fatalf("page %d: %d %s", pages, r.status, r.body)
				}
				query = ""
				switch paging {
				case PagingHeader:
					var ids []string
					r.json(t, &ids)
					got = append(got, ids...)
					if r.header.Get("X-Total-Count") != total {
						t.Errorf("X-Total-Count %q, want %s", r.header.Get("X-Total-Count"), total)
					}
					if c := r.header.Get("X-Next-Cursor"); c != "" {
						query = "?limit=700&cursor=" + c
					}
				case PagingOffset:
					var p struct {
						Data                 []string
						Offset, Limit, Total int
					}
					r.json(t, &p)
					got = append(got, p.Data...)
					if p.Limit != 700 || strconv.Itoa(p.Total) != total || p.Offset != (pages-1)*700 {
						t.Errorf("page %d: %+v", pages, p)
					}
					if next := p.Offset + len(p.Data); next < p.Total {
						query = fmt.Sprintf("?offset=%d&limit=700", next)
					}
				case PagingPage:
					var p struct {
						Items      []string
						Page       int
						PerPage    int `json:"per_page"`
						TotalCount int `json:"total_count"`
					}
					r.json(t, &p)
					got = append(got, p.Items...)
					if p.Page != pages || p.PerPage != 700 || strconv.Itoa(p.TotalCount) != total {
						t.Errorf("page %d: %+v", pages, p)
					}
					if p.Page*p.PerPage < p.TotalCount {
						query = fmt.Sprintf("?page=%d&per_page=700", p.Page+1)
					}
				case PagingHasMore:
					var p struct {
						UserIDs    []string
						HasMore    bool
						NextCursor string
					}
					r.json(t, &p)
					got = append(got, p.UserIDs...)
					if p.NextCursor == "" {
						t.Fatalf("page %d names no next cursor", pages)
					}
					if p.HasMore {
						query = "?limit=700&cursor=" + p.NextCursor
						continue
					}
					// The last page's cursor leads to an empty page naming itself.
					var after struct {
						UserIDs    []string
						HasMore    bool
						NextCursor string
					}
					c.recipients("k-test", "?limit=700&cursor="+p.NextCursor).json(t, &after)
					if len(after.UserIDs) != 0 || after.HasMore || after.NextCursor != p.NextCursor {
						t.Errorf("past the end: %+v", after)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d ids, want %d", len(got), len(want))
			}
		})
	}
}

// TestTotalOnly: the first page and a total, nothing else, whatever is
// asked.
func TestTotalOnly(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{RecipientsPaging: PagingTotalOnly})
	for _, q := range []string{"", "?cursor=1000", "?offset=1000"} {
		r := c.recipients("k-test", q)
		var ids []string
		r.json(t, &ids)
		if len(ids) != RecipientsPageSize || ids[0] != "alice" || r.header.Get("X-Total-Count") != "2504" || r.header.Get("X-Next-Cursor") != "" || r.header.Get("Link") != "" {
			t.Fatalf("%q: %d ids from %q, headers %v", q, len(ids), ids[0], r.header)
		}
	}
}

// TestMaxBodyBytes: a body over the bound is refused before anything is
// processed, 413 or a request-level 400, in the log; one within is sent.
func TestMaxBodyBytes(t *testing.T) {
	small := `[{"userIds":["alice"],"title":"t","body":"b"}]`
	big := `[{"userIds":["dave"],"title":"t","body":"` + strings.Repeat("x", 200) + `"}]`
	for _, answer := range []string{"413", "400"} {
		t.Run(answer, func(t *testing.T) {
			s, c := start(t, conformanceSeed, Options{SpecShapes: SpecShapes{MaxBodyBytes: 100, TooLargeAnswer: answer}})
			r := c.send("k-test", big)
			var out struct {
				Issues []struct {
					Path    []any
					Message string
				}
			}
			r.json(t, &out)
			if strconv.Itoa(r.status) != answer || len(out.Issues) != 1 || len(out.Issues[0].Path) != 0 || !strings.Contains(out.Issues[0].Message, "over the limit of 100 bytes") {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if answer == "400" && !strings.HasPrefix(out.Issues[0].Message, "payload too large: ") {
				t.Errorf("a 400 must say the payload is too large: %s", r.body)
			}
			if d := c.device("dave-phone"); d.Received != 0 {
				t.Fatalf("the refused request was processed: %+v", d)
			}
			var entry struct{ Status int }
			c.do(http.MethodGet, c.root+"/_sandbox/log/"+r.header.Get("x-request-id"), "", "", nil).json(t, &entry)
			if strconv.Itoa(entry.Status) != answer {
				t.Errorf("logged as %d", entry.Status)
			}
			if r := c.send("k-test", small); r.status != http.StatusOK {
				t.Fatalf("within the bound: %d %s", r.status, r.body)
			}
			if st := s.Stats(); st.Deliveries != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestSendFaults: the first send requests get the faults in order, with
// Retry-After, processing nothing; then the service answers.
func TestSendFaults(t *testing.T) {
	faults, err := ParseSendFaults("429x2,503")
	if err != nil {
		t.Fatal(err)
	}
	s, c := start(t, conformanceSeed, Options{SpecShapes: SpecShapes{SendFaults: faults}})
	body := `[{"userIds":["alice"],"title":"t","body":"b"}]`
	for i, want := range []int{429, 429, 503, 200, 200} {
		r := c.send("k-test", body)
		if r.status != want || want != 200 && r.header.Get("Retry-After") != "1" {
			t.Fatalf("request %d: %d %q, want %d", i+1, r.status, r.header.Get("Retry-After"), want)
		}
	}
	if st := s.Stats(); st.Deliveries != 2 || st.RateLimited != 2 {
		t.Errorf("stats %+v", st)
	}
	for _, bad := range []string{"", "429x0", "500", "429x", "x2"} {
		if _, err := ParseSendFaults(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestOddOptionalFields: unreachableSince and deviceCount in the forms of
// issue 38.
func TestOddOptionalFields(t *testing.T) {
	seed := `
api_key "k" { environment = "test" }
user "gone" {
  device "gone-phone" {
    environment = "test"
    push_token  = false
    last_seen   = "2026-11-01T11:00:00Z"
  }
}
user "here" {
  device "p1" { environment = "test" }
  device "p2" { environment = "test" }
}
`
	for _, tc := range []struct{ since, count, wantSince, wantCount string }{
		{SincePG, CountNumber, `"2026-11-01 11:00:00+00"`, `2`},
		{SinceSpaceZ, CountNumber, `"2026-11-01 11:00:00Z"`, `2`},
		{SinceWords, CountWords, `"1 November 2026, 11:00"`, `"2 devices"`},
	} {
		_, c := start(t, seed, Options{SinceFormat: tc.since, SpecShapes: SpecShapes{DeviceCountFormat: tc.count}})
		r := c.send("k", `[{"userIds":["gone","here"],"title":"t","body":"b"}]`)
		var out struct{ Results []map[string]json.RawMessage }
		r.json(t, &out)
		if got := string(out.Results[0]["unreachableSince"]); got != tc.wantSince {
			t.Errorf("%s: unreachableSince %s, want %s", tc.since, got, tc.wantSince)
		}
		if got := string(out.Results[1]["deviceCount"]); got != tc.wantCount {
			t.Errorf("%s: deviceCount %s, want %s", tc.count, got, tc.wantCount)
		}
	}
}
