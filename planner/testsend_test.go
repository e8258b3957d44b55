package planner

import (
	"maps"
	"strings"
	"testing"

	"pushform/config"
	"pushform/state"
)

// TestTestSendDoesNotHoldTheSend: the ledger's record of a test send of
// the same content to a target does not make it already delivered.
func TestTestSendDoesNotHoldTheSend(t *testing.T) {
	m := note("notification.spring", "Spring sale", "20% off", "", "alice", "bob")
	st := state.New("test")
	c := m.Content
	err := st.ApplyEntry(state.Entry{Type: state.EntryTestSend, Time: now, RequestID: "req-t", Items: []state.Item{{
		Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: Fingerprint(m.Kind, c), Content: &c,
		Targets: []string{"alice"}, Outcomes: []*state.Target{{Reason: "delivered"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if ch := p.Changes[0]; ch.Action != ActionCreate || ch.Targets.Send != 2 || ch.Targets.AlreadyDelivered != 0 {
		t.Errorf("after a test send to alice: %s %+v", ch.Action, ch.Targets)
	}
}

// TestMarkTestSends: with require_test_send, a change is held until its
// exact content (each variant's) has a delivered test send, under any
// address; a skipped test send, another content or a badge do not count.
func TestMarkTestSends(t *testing.T) {
	spring := note("campaign.spring.notification.sale", "Spring sale", "20% off", "spring", "alice", "bob")
	spring.Campaign = "spring"
	other := note(`notification.order["A-1"]`, "Shipped", "Today", "", "carol")
	badge := msg("badge.reset", config.KindBadge, config.TargetDevices, []string{"d1"}, config.Content{BadgeCount: new(int)})
	testSend := func(st *state.State, addr string, c config.Content, outcome string) {
		t.Helper()
		if err := st.ApplyEntry(state.Entry{Type: state.EntryTestSend, Time: now, RequestID: "req-t", Items: []state.Item{{
			Address: addr, Kind: config.KindNotification, TargetKind: config.TargetDevices, Fingerprint: Fingerprint(config.KindNotification, c), Content: &c,
			Targets: []string{"test-phone"}, Outcomes: []*state.Target{{Reason: outcome}},
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		service bool // require_test_send in the service block, else in the campaign
		sends   func(st *state.State)
		want    map[string]string
	}{
		{"campaign, none sent", false, func(*state.State) {}, map[string]string{
			"campaign.spring.notification.sale": "pushform test-send campaign.spring.notification.sale --device ID"}},
		{"service, none sent", true, func(*state.State) {}, map[string]string{
			"campaign.spring.notification.sale": "pushform test-send campaign.spring.notification.sale --device ID",
			`notification.order["A-1"]`:         `pushform test-send 'notification.order["A-1"]' --device ID`}},
		{"delivered under another address", true, func(st *state.State) {
			testSend(st, "notification.draft", spring.Content, "delivered")
			testSend(st, `notification.order["A-1"]`, other.Content, "skipped")
		}, map[string]string{`notification.order["A-1"]`: `pushform test-send 'notification.order["A-1"]' --device ID`}},
		{"an earlier content", false, func(st *state.State) {
			c := spring.Content
			c.Title = "Sprng sale"
			testSend(st, spring.Address, c, "delivered")
		}, map[string]string{"campaign.spring.notification.sale": "pushform test-send campaign.spring.notification.sale --device ID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfgOf(spring, other, badge)
			cfg.Campaigns = map[string]config.Campaign{"spring": {Name: "spring", RequireTestSend: !tc.service}}
			cfg.Service.RequireTestSend = tc.service
			st := state.New("test")
			tc.sends(st)
			p, err := Make(Input{Config: cfg, State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			MarkTestSends(p, cfg, st)
			got := map[string]string{}
			for _, c := range p.Changes {
				if c.TestSendCommand != "" {
					got[c.Address] = c.TestSendCommand
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("marked %v, want %v", got, tc.want)
			}
			err = p.TestSendGuard()
			if (err == nil) != (len(tc.want) == 0) {
				t.Fatalf("TestSendGuard: %v", err)
			}
			for addr, cmd := range tc.want {
				if !strings.Contains(err.Error(), addr+": "+cmd) || !strings.Contains(err.Error(), "nothing was sent") {
					t.Errorf("TestSendGuard does not name %s and %s: %v", addr, cmd, err)
				}
			}
		})
	}
}

// TestMarkTestSendsKeepsWhatThePlanMarked: a saved plan that needed a test
// send still needs one at apply, though require_test_send was taken out of
// the configuration since; a delivered test send of its content satisfies
// it.
func TestMarkTestSendsKeepsWhatThePlanMarked(t *testing.T) {
	spring := note("notification.spring", "Spring sale", "20% off", "spring", "alice")
	cfg := cfgOf(spring)
	cfg.Service.RequireTestSend = true
	st := state.New("test")
	p, err := Make(Input{Config: cfg, State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	MarkTestSends(p, cfg, st)
	if p.TestSendGuard() == nil {
		t.Fatal("the plan needs no test send")
	}
	cfg.Service.RequireTestSend = false // edited after the plan was saved
	MarkTestSends(p, cfg, st)
	if err := p.TestSendGuard(); err == nil || !strings.Contains(err.Error(), "notification.spring: pushform test-send notification.spring --device ID") {
		t.Fatalf("the saved plan at apply: %v", err)
	}
	c := spring.Content
	if err := st.ApplyEntry(state.Entry{Type: state.EntryTestSend, Time: now, RequestID: "req-t", Items: []state.Item{{
		Address: spring.Address, Kind: config.KindNotification, TargetKind: config.TargetDevices, Fingerprint: Fingerprint(config.KindNotification, c), Content: &c,
		Targets: []string{"test-phone"}, Outcomes: []*state.Target{{Reason: "delivered"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	MarkTestSends(p, cfg, st)
	if err := p.TestSendGuard(); err != nil {
		t.Fatalf("after a delivered test send: %v", err)
	}
}
