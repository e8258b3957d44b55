package planner

import (
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

// TestFrequencyCapCountsOutcomes: what a recorded outcome of an earlier
// notification does to a second one under max = 1 per 24h. An unknown
// outcome counts as a delivery (the answer may have been lost after the
// service processed the request): a cap is a promise to the user.
func TestFrequencyCapCountsOutcomes(t *testing.T) {
	first := note("notification.a_first", "First", "One", "", "u1")
	second := note("notification.b_second", "Second", "Two", "", "u1")
	for _, tt := range []struct {
		name    string
		outcome state.Outcome
		age     time.Duration // how long before the plan it was recorded
		capped  bool
	}{
		{"delivered", state.Delivered, time.Hour, true},
		{"unknown", state.Unknown, time.Hour, true},
		{"unknown, recorded after the plan's time", state.Unknown, -time.Hour, true},
		{"unknown, older than the window", state.Unknown, 25 * time.Hour, false},
		{"failed", state.Failed, time.Hour, false},
		{"skipped", state.Skipped, time.Hour, false},
		{"already delivered (not a delivery of its own)", state.AlreadyDelivered, time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := recorded(first, tt.outcome, nil)
			st.Messages[first.Address].Targets["u1"].Time = now.Add(-tt.age)
			cfg := cfgOf(second) // the first is forgotten: its records count all the same
			cfg.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
			p, err := Make(Input{Config: cfg, State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			c := change(t, p, second.Address)
			if tt.capped && (c.Action != ActionCapped || c.Targets.Capped != 1 || len(c.Send) != 0) {
				t.Errorf("want capped: %s %+v", c.Action, c.Targets)
			}
			if !tt.capped && (c.Action != ActionCreate || c.Targets.Capped != 0 || len(c.Send) != 1) {
				t.Errorf("want sent: %s %+v", c.Action, c.Targets)
			}
		})
	}
}

// TestFrequencyCapCountsFromSendAt: a plan at a time ahead (--now) that
// apply sends at once counts its caps from the real time of the sends
// (SendAt): a delivery an hour ago holds the user back, though a day has
// passed at the plan's time. A plan only rehearsing that time (no SendAt)
// shows the user free then.
func TestFrequencyCapCountsFromSendAt(t *testing.T) {
	first := note("notification.a_first", "First", "One", "", "u1")
	second := note("notification.b_second", "Second", "Two", "", "u1")
	ahead := now.Add(25 * time.Hour)
	for _, tt := range []struct {
		name       string
		planAt     time.Time
		sendAt     time.Time
		wantCapped bool
	}{
		{"rehearsing a day ahead", ahead, time.Time{}, false},
		{"sent now, planned a day ahead", ahead, now, true},
		{"sent now, planned now", now, now, true},
		{"a plan for the past: from its own time, later deliveries included", now.Add(-2 * time.Hour), now, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := recorded(first, state.Delivered, nil)
			st.Messages[first.Address].Targets["u1"].Time = now.Add(-time.Hour)
			cfg := cfgOf(first, second)
			cfg.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
			p, err := Make(Input{Config: cfg, State: st}, Options{Now: tt.planAt, SendAt: tt.sendAt})
			if err != nil {
				t.Fatal(err)
			}
			c := change(t, p, second.Address)
			if capped := c.Action == ActionCapped && c.Targets.Capped == 1; capped != tt.wantCapped {
				t.Errorf("%s %+v, want capped %v", c.Action, c.Targets, tt.wantCapped)
			}
		})
	}
}
