package planner

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

func rolloutNote(n int, r *config.Rollout) *config.Message {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%05d", i)
	}
	m := note("notification.spring", "Spring sale", "20% off", "spring", ids...)
	m.Rollout, m.Salt = r, m.Address
	return m
}

// record adds what applying p sends of m to st, at t: each target's
// outcome is outcome(id).
func record(st *state.State, m *config.Message, p *Plan, t time.Time, outcome func(string) state.Outcome) {
	c := p.Changes[0]
	sm := st.Messages[m.Address]
	if sm == nil {
		sm = &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Targets: map[string]*state.Target{}}
		st.Messages[m.Address] = sm
	}
	sm.Fingerprint, sm.Content = c.Fingerprint, c.Content
	for i, id := range c.Send {
		sm.SetTarget(id, &state.Target{Outcome: outcome(id), Fingerprint: c.Fingerprint, RequestID: fmt.Sprintf("req-%d", i/500), Time: t})
	}
}

func delivered(string) state.Outcome { return state.Delivered }

func mustPlan(t *testing.T, m *config.Message, st *state.State, opts Options) *Change {
	t.Helper()
	p, err := Make(Input{Config: cfgOf(m), State: st}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Changes[0]
	if c.Rollout == nil {
		t.Fatalf("%s: no rollout status", c.Address)
	}
	sum := 0
	for _, s := range c.Rollout.Stages {
		sum += s.Send
	}
	if sum != len(c.Send) || c.Targets.Send != len(c.Send) {
		t.Fatalf("stages send %d, the change %d (counted %d)", sum, len(c.Send), c.Targets.Send)
	}
	return c
}

// TestRolloutStages walks a rollout through its stages: each apply sends
// the stage that is due, waits hold the next, and every target is sent
// exactly once.
func TestRolloutStages(t *testing.T) {
	r := &config.Rollout{Stages: []float64{0.1, 0.5, 1}, Wait: 30 * time.Minute, MaxFailureRate: 0.05}
	m := rolloutNote(2000, r)
	st := state.New("test")
	sent := map[string]int{}
	at := now
	steps := []struct {
		after      time.Duration
		action     Action
		state      string
		sends      int
		wantNoSend bool
	}{
		{0, ActionCreate, RolloutSending, 0, false},
		{10 * time.Minute, ActionStage, RolloutWaiting, 0, true},
		{20 * time.Minute, ActionSendNew, RolloutSending, 1, false},
		{29 * time.Minute, ActionStage, RolloutWaiting, 1, true},
		{time.Minute, ActionSendNew, RolloutSending, 2, false},
		{time.Hour, ActionNoOp, RolloutComplete, 2, true},
	}
	for i, s := range steps {
		at = at.Add(s.after)
		c := mustPlan(t, m, st, Options{Now: at})
		rs := c.Rollout
		if c.Action != s.action || rs.State != s.state || rs.Sends != s.sends && !s.wantNoSend {
			t.Fatalf("step %d: %s %s sends stage %d; want %s %s %d", i, c.Action, rs.State, rs.Sends, s.action, s.state, s.sends)
		}
		if s.wantNoSend != (len(c.Send) == 0) {
			t.Fatalf("step %d sends %d", i, len(c.Send))
		}
		if rs.State == RolloutWaiting {
			if want := at.Add(-s.after).Add(r.Wait); rs.NextDue == nil || !rs.NextDue.Equal(want) {
				t.Errorf("step %d: next due %v, want %v", i, rs.NextDue, want)
			}
			if c.Targets.Staged == 0 {
				t.Errorf("step %d: nothing staged", i)
			}
		}
		for _, id := range c.Send {
			if sg := newStager(m).of(id); sg > rs.Sends {
				t.Errorf("step %d sends %s of stage %d", i, id, sg)
			}
			sent[id]++
		}
		p := &Plan{Changes: []*Change{c}}
		record(st, m, p, at, delivered)
	}
	if len(sent) != 2000 {
		t.Errorf("%d of 2000 targets sent", len(sent))
	}
	for id, n := range sent {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
}

// TestRolloutSizes: the stages hold about their share, and their sizes
// add up to the audience.
func TestRolloutSizes(t *testing.T) {
	m := rolloutNote(20000, &config.Rollout{Stages: []float64{0.01, 0.1, 1}, MaxFailureRate: -1})
	c := mustPlan(t, m, nil, Options{Now: now})
	got := []int{c.Rollout.Stages[0].Size, c.Rollout.Stages[1].Size, c.Rollout.Stages[2].Size}
	want := []int{200, 1800, 18000}
	total := 0
	for i := range got {
		total += got[i]
		if got[i] < want[i]*8/10 || got[i] > want[i]*12/10 {
			t.Errorf("stage %d holds %d, want about %d", i+1, got[i], want[i])
		}
	}
	if total != 20000 || c.Targets.Send != got[0] || c.Targets.Staged != 20000-got[0] || c.Targets.New != got[0] {
		t.Errorf("sizes %v, targets %+v", got, c.Targets)
	}
}

// TestRolloutGate: a stage over max_failure_rate halts the rollout;
// nothing is sent, retries neither, until --resume or a change.
func TestRolloutGate(t *testing.T) {
	r := &config.Rollout{Stages: []float64{0.2, 1}, Wait: time.Minute, MaxFailureRate: 0.02}
	m := rolloutNote(1000, r)
	st := state.New("test")
	c := mustPlan(t, m, st, Options{Now: now})
	failing := map[string]bool{}
	for _, id := range c.Send[:len(c.Send)/10] {
		failing[id] = true
	}
	record(st, m, &Plan{Changes: []*Change{c}}, now, func(id string) state.Outcome {
		if failing[id] {
			return state.Failed
		}
		return state.Delivered
	})
	later := now.Add(time.Hour)
	for range 3 {
		c = mustPlan(t, m, st, Options{Now: later})
		rs := c.Rollout
		if c.Action != ActionStage || rs.State != RolloutHalted || len(c.Send) != 0 || rs.Failed != len(failing) || rs.FailureRate <= 0.02 {
			t.Fatalf("halted rollout: %s %+v, send %d", c.Action, rs, len(c.Send))
		}
		if len(rs.RequestIDs) == 0 || rs.RequestIDs[0] != "req-0" {
			t.Errorf("request ids %v", rs.RequestIDs)
		}
		later = later.Add(time.Hour)
	}
	p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: later})
	if err != nil || p.Summary.Halted != 1 || p.Summary.Staged != 1 || p.HasChanges() {
		t.Fatalf("summary %+v, %v", p.Summary, err)
	}
	if _, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: later, Resume: []string{"notification.other"}}); err == nil {
		t.Error("--resume of an unknown address accepted")
	}
	c = mustPlan(t, m, st, Options{Now: later, Resume: []string{"notification.spring"}})
	if c.Rollout.State != RolloutResumed || c.Rollout.Sends != 1 || c.Targets.Retry != len(failing) || c.Targets.Staged != 0 {
		t.Fatalf("resumed: %s %+v targets %+v", c.Action, c.Rollout, c.Targets)
	}
	// Raising the gate is a configuration change: it lets the rollout on.
	r.MaxFailureRate = 0.5
	if c = mustPlan(t, m, st, Options{Now: later}); c.Rollout.State != RolloutSending {
		t.Errorf("gate raised: %+v", c.Rollout)
	}
	// New content starts the rollout over from its first stage.
	r.MaxFailureRate = 0.02
	m.Content.Body = "25% off"
	c = mustPlan(t, m, st, Options{Now: later})
	if c.Rollout.State != RolloutSending || c.Rollout.Sends != 0 || c.Rollout.Current != -1 || len(c.Send) != c.Rollout.Stages[0].Size {
		t.Errorf("changed content: %s %+v", c.Action, c.Rollout)
	}
}

// TestRolloutAssignmentStable: adding targets moves no existing one, a
// salt keeps the assignment across a rename, another address moves it.
func TestRolloutAssignmentStable(t *testing.T) {
	r := &config.Rollout{Stages: []float64{0.05, 0.3, 1}, MaxFailureRate: -1}
	small, big := rolloutNote(1000, r), rolloutNote(2000, r)
	a, b := newStager(small), newStager(big)
	for _, id := range small.Targets.IDs {
		if a.of(id) != b.of(id) {
			t.Fatalf("%s moved from stage %d to %d", id, a.of(id), b.of(id))
		}
	}
	renamed := rolloutNote(1000, r)
	renamed.Address = "notification.spring_v2"
	renamed.Salt = renamed.Address
	moved := 0
	for _, id := range small.Targets.IDs {
		if newStager(renamed).of(id) != a.of(id) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("another salt assigned every target alike")
	}
	renamed.Salt = "notification.spring"
	for _, id := range small.Targets.IDs {
		if newStager(renamed).of(id) != a.of(id) {
			t.Fatalf("salt kept, but %s moved", id)
		}
	}
	// The plan's first stage is the same set in both.
	c1 := mustPlan(t, small, nil, Options{Now: now})
	c2 := mustPlan(t, big, nil, Options{Now: now})
	for _, id := range c1.Send {
		if !slices.Contains(c2.Send, id) {
			t.Fatalf("%s in the first stage of 1,000 but not of 2,000", id)
		}
	}
}

// TestAssignParallel: the walk split over the CPUs assigns exactly what
// one walk does, and counts the same sizes.
func TestAssignParallel(t *testing.T) {
	m := rolloutNote(parallelAssign+1234, &config.Rollout{Stages: []float64{0.01, 0.2, 1}, MaxFailureRate: -1})
	sg := newStager(m)
	par := make([]StageStatus, 3)
	got := sg.assign(m.Targets.IDs, par)
	seq := make([]StageStatus, 3)
	want := make([]uint8, len(m.Targets.IDs))
	sg.assignRange(m.Targets.IDs, want, seq)
	if !slices.Equal(got, want) || !slices.Equal(par, seq) {
		t.Fatalf("parallel sizes %+v, one walk %+v", par, seq)
	}
	for i, id := range m.Targets.IDs[:1000] {
		if int(got[i]) != sg.of(id) {
			t.Fatalf("%s: assigned %d, of says %d", id, got[i], sg.of(id))
		}
	}
}

// TestRolloutAlreadyDelivered: targets of later stages that already had
// the content (apply records them at once) start no stage, and a stage
// of nothing but those is passed over.
func TestRolloutAlreadyDelivered(t *testing.T) {
	r := &config.Rollout{Stages: []float64{0.1, 0.5, 1}, Wait: time.Hour, MaxFailureRate: -1}
	m := rolloutNote(1000, r)
	sg := newStager(m)
	st := state.New("test")
	fp := Fingerprint(m.Kind, m.Content)
	sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: m.Content, Targets: map[string]*state.Target{}}
	for _, id := range m.Targets.IDs {
		if s := sg.of(id); s == 1 || s == 2 && id < "u00100" {
			// All of stage 2, some of stage 3, already had it elsewhere.
			sm.SetTarget(id, &state.Target{Outcome: state.AlreadyDelivered, Fingerprint: fp, Time: now, Reason: "notification.other"})
		}
	}
	st.Messages[m.Address] = sm
	c := mustPlan(t, m, st, Options{Now: now})
	if c.Rollout.Current != -1 || c.Rollout.Sends != 0 || len(c.Send) != c.Rollout.Stages[0].Size {
		t.Fatalf("first plan: %+v, send %d", c.Rollout, len(c.Send))
	}
	record(st, m, &Plan{Changes: []*Change{c}}, now, delivered)
	// An hour on, stage 2 is all recorded: stage 3 goes next.
	c = mustPlan(t, m, st, Options{Now: now.Add(time.Hour)})
	if c.Rollout.Current != 0 || c.Rollout.Sends != 2 || c.Targets.Staged != 0 || len(c.Send) == 0 {
		t.Fatalf("second plan: %+v, send %d, targets %+v", c.Rollout, len(c.Send), c.Targets)
	}
}

// TestRolloutStagesCountWhatIsSent: a stage's send counts the targets the
// plan sends, after local time and quiet hours held some of the stage
// back (it counted them as sent).
func TestRolloutStagesCountWhatIsSent(t *testing.T) {
	tokyo, la := zone(t, "Asia/Tokyo"), zone(t, "America/Los_Angeles")
	nine := &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}
	m := localMsg(40, []*time.Location{tokyo, la}, nine, nil)
	m.Rollout, m.Salt = &config.Rollout{Stages: []float64{0.5, 1}, MaxFailureRate: -1}, m.Address
	// 09:30 in Tokyo, the night before in Los Angeles.
	c := mustPlan(t, m, nil, Options{Now: time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)})
	if c.Targets.Send == 0 || c.Targets.Waiting == 0 || c.Rollout.Stages[0].Send != c.Targets.Send {
		t.Errorf("send %d, waiting %d, stages %+v", c.Targets.Send, c.Targets.Waiting, c.Rollout.Stages)
	}
}
