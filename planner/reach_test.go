package planner

import (
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

func TestCountReach(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := state.New("test")
	st.Messages["notification.old"] = &state.Message{Address: "notification.old", TargetKind: message.TargetUsers, Targets: map[string]*state.Target{
		"u1": {Outcome: state.Delivered, DeviceCount: 2, Time: t1},
		"u3": {Outcome: state.Failed, Time: t1},
	}}
	st.Messages["notification.newer"] = &state.Message{Address: "notification.newer", TargetKind: message.TargetUsers, Targets: map[string]*state.Target{
		"u1": {Outcome: state.Delivered, DeviceCount: 3, Time: t1.Add(time.Hour)},
	}}
	st.Messages["notification.by_device"] = &state.Message{Address: "notification.by_device", TargetKind: message.TargetDevices, Targets: map[string]*state.Target{
		"u2": {Outcome: state.Delivered, DeviceCount: 1, Time: t1}, // a device id that looks like a user's: not the user
	}}
	p := &Plan{Changes: []*Change{
		{Action: ActionCreate, TargetKind: message.TargetUsers, Send: []string{"u1", "u2", "u3"}},
		{Action: ActionRepeat, TargetKind: message.TargetUsers, Send: []string{"u1"}, Targets: TargetCounts{Repeat: 1}},
		{Action: ActionCreate, TargetKind: message.TargetDevices, Send: []string{"d1", "d2"}},
		{Action: ActionUpdate, TargetKind: message.TargetDevices, Send: []string{"d1"}},
		{Action: ActionCreate, TargetKind: message.TargetTopics, Send: []string{"news"}},
		{Action: ActionWait, TargetKind: message.TargetUsers, Send: []string{"u9"}}, // sends nothing now
	}}
	got := CountReach(p, st)
	want := Reach{Users: 3, Devices: 3 + 2, Topics: 1, NewUsers: 2, AlreadyHad: 1}
	if got == nil || *got != want {
		t.Errorf("CountReach = %+v, want %+v", got, want)
	}
	if got := CountReach(p, nil); got == nil || got.NewUsers != 3 || got.Devices != 2 {
		t.Errorf("without a state: %+v, want every user new and only the direct devices", got)
	}
	big := &Plan{Changes: []*Change{{Action: ActionCreate, TargetKind: message.TargetUsers, Send: make([]string, ReachMaxTargets+1)}}}
	if got := CountReach(big, st); got != nil {
		t.Errorf("a plan past ReachMaxTargets: %+v, want nil", got)
	}
}
