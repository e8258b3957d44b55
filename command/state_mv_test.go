package command

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"pushform/state"
	"pushform/state/local"
)

func TestStateMv(t *testing.T) {
	const announce = "campaign.spring_sale.notification.announce"
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		output   string
		moved    map[string]string // from -> to, checked in the state after
		setState func(*state.State)
	}{
		{name: "rename", args: []string{announce, "notification.announce"}, output: "Moved " + announce + " to notification.announce\nMoved 1 address in the state (serial 2). Nothing was sent.\n",
			moved: map[string]string{announce: "notification.announce"}},
		{name: "into a for_each instance", args: []string{announce, `notification.a["k 1"]`}, output: `to notification.a["k 1"]`,
			moved: map[string]string{announce: `notification.a["k 1"]`}},
		{name: "a whole block with its instances", args: []string{"notification.order", "campaign.shop.notification.order"},
			setState: func(s *state.State) {
				for _, k := range []string{`["A-1"]`, `["B-2"]`} {
					s.Messages["notification.order"+k] = &state.Message{Address: "notification.order" + k, Kind: "notification", TargetKind: "user_ids", Targets: map[string]*state.Target{}}
				}
			},
			output: "Moved 2 addresses in the state",
			moved:  map[string]string{`notification.order["A-1"]`: `campaign.shop.notification.order["A-1"]`, `notification.order["B-2"]`: `campaign.shop.notification.order["B-2"]`}},
		{name: "a notification with its variants and holdout", args: []string{"notification.news", "notification.news_v2"},
			setState: func(s *state.State) {
				for _, a := range []string{"notification.news.variant.a", "notification.news.variant.b", "notification.news.holdout", `notification.news_x.variant.a`} {
					s.Messages[a] = &state.Message{Address: a, Kind: "notification", TargetKind: "user_ids", Targets: map[string]*state.Target{}}
				}
			},
			output: "Moved 3 addresses in the state",
			moved: map[string]string{"notification.news.variant.a": "notification.news_v2.variant.a", "notification.news.variant.b": "notification.news_v2.variant.b",
				"notification.news.holdout": "notification.news_v2.holdout"}},
		{name: "unknown FROM", args: []string{"notification.nope", "notification.b"}, code: 1, output: "no address notification.nope in the state; 'pushform state list' lists them; nothing was moved"},
		{name: "TO has state", args: []string{announce, "campaign.c.badge.reset"}, code: 1, output: "is a notification and campaign.c.badge.reset names a badge"},
		{name: "TO has state, same kind", args: []string{"campaign.c.badge.reset", "badge.b"}, code: 1, output: "badge.b already has state",
			setState: func(s *state.State) {
				s.Messages["badge.b"] = &state.Message{Address: "badge.b", Kind: "badge", TargetKind: "device_ids", Targets: map[string]*state.Target{}}
			}},
		{name: "different kinds", args: []string{announce, "badge.announce"}, code: 1, output: "a notification moves to a notification, a badge to a badge"},
		{name: "not an address", args: []string{announce, "topic.deals"}, code: 1, output: `TO: "topic.deals" is not the address of a notification or badge`},
		{name: "same address", args: []string{announce, announce}, code: 1, output: "are the same address"},
		{name: "one argument", args: []string{announce}, code: 1, output: "state mv takes two addresses, FROM and TO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, out, errb := stateTestMeta(t)
			path := filepath.Join(m.Dir, "pushform.state")
			if c.setState != nil {
				s, err := local.NewFile(path).Read()
				if err != nil {
					t.Fatal(err)
				}
				c.setState(s)
				if err := local.NewFile(path).Persist(s); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := local.NewFile(path).Read()
			code := runState(context.Background(), m, append([]string{"mv"}, c.args...))
			if code != c.code || !strings.Contains(out.String()+errb.String(), c.output) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and %q", code, out, errb, c.code, c.output)
			}
			after, err := local.NewFile(path).Read()
			if err != nil {
				t.Fatal(err)
			}
			if c.code != 0 {
				if after.Serial != before.Serial || len(after.Messages) != len(before.Messages) {
					t.Errorf("a refused move changed the state: serial %d -> %d", before.Serial, after.Serial)
				}
				return
			}
			for from, to := range c.moved {
				if after.Messages[from] != nil || after.Messages[to] == nil || after.Messages[to].Address != to ||
					len(after.Messages[to].Targets) != len(before.Messages[from].Targets) {
					t.Errorf("%s -> %s: state has %v", from, to, after.Addresses())
				}
			}
			if after.Serial != before.Serial+1 || after.Lineage != before.Lineage {
				t.Errorf("serial %d -> %d", before.Serial, after.Serial)
			}
		})
	}
}
