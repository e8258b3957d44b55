package views

import (
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

// rolloutPlan has three rollouts: one sending its first stage, one
// waiting for its next, one halted by its failure gate.
func rolloutPlan(t *testing.T) *planner.Plan {
	t.Helper()
	r := &config.Rollout{Stages: []float64{0.1, 0.5, 1}, Wait: 30 * time.Minute, MaxFailureRate: 0.02}
	mk := func(addr string) *config.Message {
		return &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: ids(400, "u")},
			Content: config.Content{Title: "Spring sale", Body: "20% off at " + addr, Tag: addr}, Rollout: r, Salt: addr}
	}
	msgs := []*config.Message{mk("notification.halted"), mk("notification.new"), mk("notification.waiting")}
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: msgs}
	first, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	st := state.New("test")
	for _, c := range first.Changes {
		if c.Address == "notification.new" {
			continue
		}
		sm := &state.Message{Address: c.Address, Kind: c.Kind, TargetKind: c.TargetKind, Fingerprint: c.Fingerprint, Content: c.Content, Targets: map[string]*state.Target{}}
		for i, id := range c.Send {
			o := state.Delivered
			if c.Address == "notification.halted" && i%5 == 0 {
				o = state.Failed
			}
			sm.SetTarget(id, &state.Target{Outcome: o, Fingerprint: c.Fingerprint, RequestID: "req-0a1b2c", Time: now})
		}
		st.Messages[c.Address] = sm
	}
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now.Add(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	p.StateLineage = "lineage"
	return p
}

// TestRolloutViews: every view shows each stage with its size, what was
// sent and what is due; a halted rollout its rate and request ids.
func TestRolloutViews(t *testing.T) {
	p := rolloutPlan(t)
	human, md, js := planGoldens(t, p, "plan-rollout")
	for _, want := range []string{
		"rollout halted at stage 1 of 3 (10%)", "over max_failure_rate 2%", "req-0a1b2c",
		"stage 2 due 2026-11-22T12:30:00Z", "rollout sends stage 1 of 3 (10%)", "held for later rollout stages",
		"is held by its rollout: 376 users not sent now", "stage 1  10%   35 users, 0 sent, sends 35 now",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("human plan lacks %q", want)
		}
		if !strings.Contains(md, want) {
			t.Errorf("markdown plan lacks %q", want)
		}
	}
	for _, want := range []string{`"state": "halted"`, `"state": "waiting"`, `"next_due": "2026-11-22T12:30:00Z"`, `"request_ids": [`, `"staged_targets"`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON plan lacks %s", want)
		}
	}
}

// TestVariantViews: the variants of a notification are shown side by
// side with their weight and share, the holdout with what apply records.
func TestVariantViews(t *testing.T) {
	m := &config.Message{Address: "notification.spring", Kind: config.KindNotification, Salt: "notification.spring",
		Targets: config.Targets{Kind: config.TargetUsers, IDs: ids(400, "u")}, Content: config.Content{Tag: "spring"},
		Variants: []config.Variant{
			{Name: "a", Weight: 50, Content: config.Content{Title: "Spring sale", Body: "20% off", Tag: "spring"}},
			{Name: "b", Weight: 50, Content: config.Content{Title: "20% off everything", Body: "Until Sunday", Tag: "spring"}},
		},
		Holdout: 0.05}
	p, err := planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{m}}}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	human, md, js := planGoldens(t, p, "plan-variants")
	for _, want := range []string{`variant "a" of notification.spring: weight 50, 47.5% of the audience`, "holds out 21 users",
		"(5% of notification.spring): they receive nothing", "held out, to record"} {
		if !strings.Contains(human, want) || !strings.Contains(md, want) {
			t.Errorf("human or markdown plan lacks %q", want)
		}
	}
	if !strings.Contains(js, `"variant": {`) || !strings.Contains(js, `"action": "holdout"`) {
		t.Error("JSON plan lacks the variant or the holdout")
	}
}
