package operation

import (
	"reflect"
	"testing"
	"time"

	"pushform/plandoc"
	"pushform/planner"
	"pushform/state"
)

// TestOverrideEntry: an override of a policy on the changes records the
// addresses it failed for; one on the whole plan every address the plan
// sends to; a passed or warned policy records nothing.
func TestOverrideEntry(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a, b := "notification.a", "notification.b"
	p := &planner.Plan{Changes: []*planner.Change{
		{Address: a, Action: planner.ActionCreate}, {Address: b, Action: planner.ActionReplace},
		{Address: "notification.later", Action: planner.ActionWait}, {Address: "notification.gone", Action: planner.ActionForget},
	}}
	results := []plandoc.Policy{
		{Name: "https_only", Result: plandoc.Overridden, ForEachChange: true, Failures: []plandoc.Failure{{Address: &b, Message: "http"}},
			Override: &plandoc.Override{Policy: "https_only", Reason: "no TLS yet"}},
		{Name: "daily_volume", Result: plandoc.Overridden, Failures: []plandoc.Failure{{Message: "too many"}},
			Override: &plandoc.Override{Policy: "daily_volume", Reason: "Black Friday"}},
		{Name: "titles", Result: plandoc.Warn, ForEachChange: true, Failures: []plandoc.Failure{{Address: &a, Message: "long"}}},
		{Name: "tags", Result: plandoc.Pass},
	}
	e, ok := overrideEntry(results, p, at)
	if !ok {
		t.Fatal("no entry")
	}
	st := state.New("test")
	if err := st.ApplyEntry(e); err != nil {
		t.Fatal(err)
	}
	want := []state.Override{
		{Time: at, Policy: "https_only", Reason: "no TLS yet", Addresses: []string{b}},
		{Time: at, Policy: "daily_volume", Reason: "Black Friday", Addresses: []string{a, b}},
	}
	if !reflect.DeepEqual(st.Overrides, want) {
		t.Errorf("overrides %+v, want %+v", st.Overrides, want)
	}
	if _, ok := overrideEntry(results[2:], p, at); ok {
		t.Error("an entry without an override")
	}
}
