package sandbox

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// rangeIDs lists the ids of a "u%04d" range from lo to hi-1, skipping some.
func rangeIDs(lo, hi int, skip ...int) []string {
	var out []string
	for i := lo; i < hi; i++ {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == i
		}
		if !skipped {
			out = append(out, fmt.Sprintf("u%04d", i))
		}
	}
	return out
}

func TestRecipientsRules(t *testing.T) {
	// The four rules of spec 2.3, for each environment, with a device per
	// rule broken.
	const seed = `
api_key "k-test" { environment = "test" }
api_key "k-prod" { environment = "production" }
user "ok-both" {
  device "p1" { environment = "production" }
  device "t1" { environment = "test" }
}
user "no-token" {
  device "p2" {
    environment = "production"
    push_token  = false
  }
  device "t2" {
    environment = "test"
    push_token  = false
  }
}
user "no-permission" {
  device "p3" {
    environment = "production"
    permission  = false
  }
  device "t3" {
    environment = "test"
    permission  = false
  }
}
user "prod-only" {
  device "p4" { environment = "production" }
}
user "test-only" {
  device "t5" { environment = "test" }
}
user "offline" {                    # being offline does not matter
  device "t6" {
    environment = "test"
    online      = false
  }
}
user "one-of-two" {                 # one good device is enough
  device "t7a" {
    environment = "test"
    push_token  = false
  }
  device "t7b" { environment = "test" }
}
user "no-device" {}
device "kiosk" { environment = "test" }  # rule 1: no user signed in
`
	for _, shape := range []string{"array", "object"} {
		_, c := start(t, seed, Options{RecipientsShape: shape})
		for _, tc := range []struct {
			key  string
			want []string
		}{
			{"k-prod", []string{"ok-both", "prod-only"}},
			{"k-test", []string{"ok-both", "test-only", "offline", "one-of-two"}},
		} {
			t.Run(shape+" "+tc.key, func(t *testing.T) {
				r := c.recipients(tc.key, "")
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				checkRequestID(t, r)
				var got []string
				if shape == "array" {
					r.json(t, &got)
				} else {
					var page struct {
						UserIDs []string `json:"userIds"`
						Next    *string  `json:"next"`
					}
					r.json(t, &page)
					if page.Next != nil {
						t.Errorf("one page only, got next %q", *page.Next)
					}
					got = page.UserIDs
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("recipients %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestRecipientsPaging(t *testing.T) {
	s, c := start(t, conformanceSeed, Options{RecipientsShape: "object"})
	// Take some range users out, so pages are not all alike.
	for _, i := range []int{0, 999, 1000, 2499} {
		s.Patch(fmt.Sprintf("d%04d", i), DevicePatch{Permission: new(bool)})
	}
	want := append([]string{"alice", "dave", "erin", "frank"}, rangeIDs(0, 2500, 0, 999, 1000, 2499)...)
	for _, tc := range []struct {
		name  string
		limit string
		pages int
	}{
		{"default page size", "", 3},
		{"limit 700", "700", 4},
		{"limit 1", "1", len(want) + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			cursor := ""
			pages := 0
			for {
				q := url.Values{}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				if tc.limit != "" {
					q.Set("limit", tc.limit)
				}
				r := c.recipients("k-test", "?"+q.Encode())
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				var page struct {
					UserIDs []string `json:"userIds"`
					Next    string   `json:"next"`
				}
				r.json(t, &page)
				pages++
				if tc.limit == "" && len(page.UserIDs) > RecipientsPageSize {
					t.Fatalf("page of %d", len(page.UserIDs))
				}
				got = append(got, page.UserIDs...)
				if page.Next == "" {
					break
				}
				cursor = page.Next
				if pages > len(want)+2 {
					t.Fatal("paging does not end")
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %d ids, want %d (first %v)", len(got), len(want), got[:min(len(got), 6)])
			}
			if pages != tc.pages {
				t.Errorf("%d pages, want %d", pages, tc.pages)
			}
		})
	}
	for _, q := range []string{"?cursor=x", "?cursor=-1", "?cursor=999999", "?limit=0", "?limit=10001"} {
		if r := c.recipients("k-test", q); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	// The array shape gives everything at once.
	s2, c2 := start(t, conformanceSeed, Options{})
	_ = s2
	var all []string
	c2.recipients("k-test", "").json(t, &all)
	if len(all) != 4+2500 {
		t.Errorf("array shape: %d ids", len(all))
	}
}

// TestRecipientsIDFormats: range users' ids are counted up from the one
// listed before them; they must be what their format gives, across a
// number gaining a digit, a gap, a range's end and another range, and
// escaped where the format needs it, in both shapes and on every page.
func TestRecipientsIDFormats(t *testing.T) {
	const seed = `
api_key "k-test" { environment = "test" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
user_range "u%d" {
  count       = 23
  device      = "du%d"
  environment = "test"
}
user_range "q\"%02d\\" {
  count       = 3
  device      = "dq%d"
  environment = "test"
}
user_range "ü%03d-eu" {
  count       = 101
  device      = "dü%d"
  environment = "test"
}
user_range "z%d" {
  count       = 1
  device      = "dz%d"
  environment = "test"
}
`
	want := []string{"alice"}
	for i := range 23 {
		if i != 10 && i != 19 {
			want = append(want, fmt.Sprintf("u%d", i))
		}
	}
	want = append(want, `q"00\`, `q"01\`, `q"02\`)
	for i := range 101 {
		if i != 99 {
			want = append(want, fmt.Sprintf("ü%03d-eu", i))
		}
	}
	want = append(want, "z0")
	for _, shape := range []string{"array", "object"} {
		s, c := start(t, seed, Options{RecipientsShape: shape})
		for _, d := range []string{"du10", "du19", "dü99"} { // gaps: a carry, a range's last but three, a carry to 100
			s.Patch(d, DevicePatch{PushToken: new(bool)})
		}
		limits := []string{""}
		if shape == "object" {
			limits = []string{"", "1", "7", "10"}
		}
		for _, limit := range limits {
			t.Run(shape+" limit "+limit, func(t *testing.T) {
				var got []string
				if shape == "array" {
					c.recipients("k-test", "").json(t, &got)
				}
				for cursor := ""; shape == "object"; {
					q := url.Values{}
					if cursor != "" {
						q.Set("cursor", cursor)
					}
					if limit != "" {
						q.Set("limit", limit)
					}
					var page struct {
						UserIDs []string `json:"userIds"`
						Next    string   `json:"next"`
					}
					c.recipients("k-test", "?"+q.Encode()).json(t, &page)
					got = append(got, page.UserIDs...)
					if cursor = page.Next; cursor == "" || len(got) > len(want) {
						break
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("recipients\n%q\nwant\n%q", got, want)
				}
			})
		}
	}
}
