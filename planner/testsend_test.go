package planner

import (
	"testing"

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
