package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pushform/config"
	"pushform/state"
)

// TestCheckSavedPlan: a saved plan is a file anyone can edit or damage;
// Check must refuse every batch part that would index outside its
// change's Send list before apply executes it.
func TestCheckSavedPlan(t *testing.T) {
	good, err := Make(Input{Config: cfgOf(note("notification.a", "T", "B", "", users(700)...), note("notification.b", "T", "B", "", "x1"))}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	// The saved form of a good plan checks: what a round trip keeps is enough.
	var back Plan
	if err := json.Unmarshal(saved, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Check(); err != nil {
		t.Fatalf("a saved good plan: %v", err)
	}
	if len(back.Batches) != 2 || len(back.Batches[1].Parts) != 2 {
		t.Fatalf("batches %+v; the cases below assume two requests, the second shared", back.Batches)
	}
	tests := []struct {
		name    string
		batches string // replaces the saved "batches"
		want    string
	}{
		{"no parts", `[{"parts":[]}]`, "request 1 is empty"},
		{"parts null", `[{"parts":[{"change":0,"from":0,"to":500}]},{}]`, "request 2 is empty"},
		{"negative change", `[{"parts":[{"change":-1,"from":0,"to":1}]}]`, "request 1 names change -1 of 2"},
		{"change out of range", `[{"parts":[{"change":0,"from":0,"to":500}]},{"parts":[{"change":2,"from":0,"to":1}]}]`, "request 2 names change 2 of 2"},
		{"negative from", `[{"parts":[{"change":0,"from":-1,"to":3}]}]`, "request 1 names targets -1..3 of notification.a, which has 700"},
		{"empty range", `[{"parts":[{"change":0,"from":5,"to":5}]}]`, "request 1 names targets 5..5 of notification.a"},
		{"reversed range", `[{"parts":[{"change":0,"from":9,"to":5}]}]`, "request 1 names targets 9..5"},
		{"past the end", `[{"parts":[{"change":0,"from":500,"to":701}]}]`, "request 1 names targets 500..701 of notification.a, which has 700"},
		{"past a short list", `[{"parts":[{"change":1,"from":0,"to":2}]}]`, "request 1 names targets 0..2 of notification.b, which has 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(saved, &raw); err != nil {
				t.Fatal(err)
			}
			raw["batches"] = json.RawMessage(tt.batches)
			data, _ := json.Marshal(raw)
			var p Plan
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			err := p.Check()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v; want %q", err, tt.want)
			}
		})
	}
	// A plan with changes edited away cannot point into them.
	var raw map[string]json.RawMessage
	json.Unmarshal(saved, &raw)
	raw["changes"] = json.RawMessage(`[]`)
	data, _ := json.Marshal(raw)
	var p Plan
	json.Unmarshal(data, &p)
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "names change 0 of 0") {
		t.Fatalf("Check of a plan without changes = %v", err)
	}
}

func users(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%04d", i)
	}
	return ids
}

// TestTargetKindSwitch: an address that moves from user_ids to
// device_ids (or topics) starts afresh: its recorded targets are
// forgotten, and every id of the new kind is sent, even one spelled like
// a user id it reached before.
func TestTargetKindSwitch(t *testing.T) {
	before := note("notification.a", "Hi", "Body", "t", "alice", "bob")
	st := recorded(before, state.Delivered, nil)
	for _, tk := range []config.TargetKind{config.TargetDevices, config.TargetTopics} {
		t.Run(string(tk), func(t *testing.T) {
			after := msg("notification.a", config.KindNotification, tk, []string{"alice", "kiosk-1"}, before.Content)
			p, err := Make(Input{Config: cfgOf(after), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != ActionCreate || c.TargetKind != tk || c.Prior != nil {
				t.Errorf("action %s, kind %s, prior %v; want a create of kind %s", c.Action, c.TargetKind, c.Prior, tk)
			}
			if fmt.Sprint(c.Forget) != "[alice bob]" || c.Targets.Forget != 2 {
				t.Errorf("forget %v (%d); want every recorded user", c.Forget, c.Targets.Forget)
			}
			if fmt.Sprint(c.Send) != "[alice kiosk-1]" || c.Targets.New != 2 || c.Targets.UpToDate != 0 {
				t.Errorf("send %v, targets %+v; want both ids sent as new", c.Send, c.Targets)
			}
			if p.Summary.Create != 1 || p.Summary.Targets != 2 || !p.HasChanges() {
				t.Errorf("summary %+v", p.Summary)
			}
		})
	}
}

// TestTargetOnlyInState: --target may name an address that is only in
// the state (removed from the configuration): the plan forgets it, and
// only it.
func TestTargetOnlyInState(t *testing.T) {
	gone := note("campaign.old.notification.gone", "T", "B", "", "u1", "u2")
	st := recorded(gone, state.Delivered, nil)
	kept := note("notification.kept", "T", "B", "", "u3")
	for _, sel := range []string{"campaign.old.notification.gone", "campaign.old"} {
		t.Run(sel, func(t *testing.T) {
			p, err := Make(Input{Config: cfgOf(kept), State: st}, Options{Now: now, Targets: []string{sel}})
			if err != nil {
				t.Fatalf("--target %s: %v", sel, err)
			}
			if len(p.Changes) != 1 {
				t.Fatalf("changes %d; want the forget only (notification.kept is not selected)", len(p.Changes))
			}
			c := p.Changes[0]
			if c.Address != gone.Address || c.Action != ActionForget || fmt.Sprint(c.Forget) != "[u1 u2]" {
				t.Errorf("change %s %s forget %v", c.Address, c.Action, c.Forget)
			}
			if p.Summary.Forget != 1 || p.Summary.Requests != 0 || !p.HasChanges() {
				t.Errorf("summary %+v", p.Summary)
			}
		})
	}
	// Without a state, the same --target names nothing.
	if _, err := Make(Input{Config: cfgOf(kept)}, Options{Now: now, Targets: []string{"campaign.old"}}); err == nil {
		t.Error("--target of an address neither configured nor recorded was accepted")
	}
}
