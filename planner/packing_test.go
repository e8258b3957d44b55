package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pushform/config"
)

// requestsOf renders p's requests: each a list of "address:targets".
func requestsOf(p *Plan) []string {
	var out []string
	for b := range p.Batches {
		var parts []string
		for _, pt := range p.Request(b).Parts {
			parts = append(parts, strings.TrimPrefix(pt.Change.Address, "notification.")+":"+strings.Join(pt.Targets, ","))
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// checkNoTargetTwice fails when a request of p addresses one target in
// two of its notification objects.
func checkNoTargetTwice(t *testing.T, p *Plan) {
	t.Helper()
	for b := range p.Batches {
		seen := map[string]int{}
		for _, pt := range p.Request(b).Parts {
			for _, id := range pt.Targets {
				key := fmt.Sprint(pt.Change.TargetKind, "\x00", id)
				if c, ok := seen[key]; ok && c != pt.Index {
					t.Fatalf("request %d addresses %s %q in two objects", b+1, pt.Change.TargetKind, id)
				}
				seen[key] = pt.Index
			}
		}
	}
}

// TestPackNeverAddressesATargetTwice: small notifications share requests,
// but a target never joins a request that already addresses it (a result
// entry echoes only the target, in no promised order).
func TestPackNeverAddressesATargetTwice(t *testing.T) {
	// Each block's own title: blocks alike would be one content, sent once.
	dev := func(addr string, ids ...string) *config.Message {
		return msg(addr, config.KindNotification, config.TargetDevices, ids, config.Content{Title: addr, Body: "B"})
	}
	topic := func(addr string, ids ...string) *config.Message {
		return msg(addr, config.KindNotification, config.TargetTopics, ids, config.Content{Title: addr, Body: "B"})
	}
	cases := []struct {
		name  string
		limit int
		msgs  []*config.Message
		want  []string
	}{
		{"disjoint targets share a request", 500,
			[]*config.Message{note("notification.a", "A", "b", "", "u1", "u2"), note("notification.b", "B", "b", "", "u3")},
			[]string{"a:u1,u2 b:u3"}},
		{"two notifications to the same two users", 500,
			[]*config.Message{note("notification.good", "Good", "b", "", "u1", "u2"), note("notification.long", "Long", "b", "", "u1", "u2")},
			[]string{"good:u1,u2", "long:u1,u2"}},
		{"an overlap part way: the request ends before it", 500,
			[]*config.Message{note("notification.a", "A", "b", "", "u1", "u2"), note("notification.b", "B", "b", "", "u3", "u1", "u4"),
				note("notification.c", "C", "b", "", "u5")},
			[]string{"a:u1,u2 b:u3", "b:u1,u4 c:u5"}},
		{"a user and a device of one id do not clash", 500,
			[]*config.Message{note("notification.a", "A", "b", "", "x1"), dev("notification.b", "x1")},
			[]string{"a:x1 b:x1"}},
		{"devices clash", 500,
			[]*config.Message{dev("notification.a", "d1", "d2"), dev("notification.b", "d2")},
			[]string{"a:d1,d2", "b:d2"}},
		{"topics clash by topic", 500,
			[]*config.Message{topic("notification.a", "deals", "news"), topic("notification.b", "sports"), topic("notification.c", "news")},
			[]string{"a:deals,news b:sports", "c:news"}},
		{"with the limit", 3,
			[]*config.Message{note("notification.a", "A", "b", "", "u1", "u2"), note("notification.b", "B", "b", "", "u3", "u4", "u1", "u5")},
			[]string{"a:u1,u2 b:u3", "b:u4,u1,u5"}},
		{"three to one user", 500,
			[]*config.Message{note("notification.a", "A", "b", "", "u1"), note("notification.b", "B", "b", "", "u1"), note("notification.c", "C", "b", "", "u1", "u2")},
			[]string{"a:u1", "b:u1", "c:u1,u2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Make(Input{Config: cfgOf(tc.msgs...)}, Options{Now: now, BatchLimit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if got := requestsOf(p); !slices.Equal(got, tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
			checkNoTargetTwice(t, p)
		})
	}
}
