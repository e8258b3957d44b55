package operation

import (
	"testing"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

func TestListDiff(t *testing.T) {
	tests := []struct {
		before, after []string
		want          views.ListDiff
	}{
		{nil, []string{"a", "b"}, views.ListDiff{Total: 2, Added: 2}},
		{[]string{"a", "b", "c"}, []string{"b", "c", "d", "d"}, views.ListDiff{Total: 3, Added: 1, Removed: 1}},
		{[]string{"a"}, []string{"a"}, views.ListDiff{Total: 1}},
	}
	for _, tt := range tests {
		if got := listDiff(tt.before, tt.after); got == nil || *got != tt.want {
			t.Errorf("listDiff(%v, %v) = %+v, want %+v", tt.before, tt.after, got, tt.want)
		}
	}
	if got := listDiff(make([]string, audienceMaxTargets+1), nil); got != nil {
		t.Errorf("a list past the bound was compared: %+v", got)
	}
}

// TestPlanAudience: a change's devices are those last reported for its
// users, under any address, the latest delivery winning.
func TestPlanAudience(t *testing.T) {
	st := state.New("test")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	old := &state.Message{Address: "notification.old", Kind: message.KindNotification, TargetKind: message.TargetUsers}
	old.SetTarget("alice", &state.Target{Outcome: state.Delivered, DeviceCount: 1, Time: t0})
	old.SetTarget("bob", &state.Target{Outcome: state.Delivered, DeviceCount: 2, Time: t0})
	old.SetTarget("carol", &state.Target{Outcome: state.Skipped, Time: t0})
	newer := &state.Message{Address: "notification.newer", Kind: message.KindNotification, TargetKind: message.TargetUsers}
	newer.SetTarget("alice", &state.Target{Outcome: state.Delivered, DeviceCount: 3, Time: t0.Add(time.Hour)})
	st.Messages[old.Address], st.Messages[newer.Address] = old, newer
	st.Recipients = &state.Snapshot{UserIDs: []string{"alice", "bob", "carol"}}

	p := &planner.Plan{Refreshed: true, Recipients: &state.Snapshot{UserIDs: []string{"alice", "bob", "dave"}}, Changes: []*planner.Change{
		{Address: "notification.hello", Kind: message.KindNotification, TargetKind: message.TargetUsers, Send: []string{"alice", "bob", "carol", "dave"}},
		{Address: "badge.b", Kind: message.KindBadge, TargetKind: message.TargetUsers, Send: []string{"alice"}},
	}}
	a := planAudience(p, st)
	if a == nil {
		t.Fatal("no audience")
	}
	if got, want := a.Devices["notification.hello"], (views.Devices{Count: 5, Of: 2}); got != want {
		t.Errorf("devices = %+v, want %+v (alice's latest 3, bob's 2)", got, want)
	}
	if _, ok := a.Devices["badge.b"]; ok {
		t.Error("a badge got a device count")
	}
	if got, want := *a.Recipients, (views.ListDiff{Total: 3, Added: 1, Removed: 1}); got != want {
		t.Errorf("recipients = %+v, want %+v", got, want)
	}
	if planAudience(p, nil) != nil {
		t.Error("an audience without a state")
	}
}
