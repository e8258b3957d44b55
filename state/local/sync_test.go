package local_test

import (
	"context"
	"testing"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
)

func outcome(addr string, targets ...string) state.Entry {
	outs := make([]*state.Target, len(targets))
	for i := range outs {
		outs[i] = &state.Target{Outcome: state.Delivered, DeviceCount: 1}
	}
	e := intent(addr, targets...)
	e.Type, e.RequestID, e.Status = state.EntryOutcome, "req-1", 200
	e.Items[0].Outcomes = outs
	return e
}

// Under the lock, outcomes are written without an fsync of their own: the
// next entry that needs one (an intent), Persist or Unlock syncs them too.
// Without the lock every Append syncs. Every acknowledged entry is in the
// journal at once either way (a kill -9 loses nothing the kernel holds).
func TestFileOutcomesShareTheNextSync(t *testing.T) {
	type step struct {
		do        string // intent, outcome, unlock, persist
		wantSyncs int    // journal fsyncs so far
	}
	for _, tt := range []struct {
		name   string
		locked bool
		steps  []step
	}{
		{"locked: outcomes wait for the next intent", true, []step{
			{"intent", 1}, {"outcome", 1}, {"outcome", 1}, {"intent", 2}, {"outcome", 2}, {"unlock", 3}}},
		{"locked: unlock after an intent syncs nothing more", true, []step{
			{"intent", 1}, {"outcome", 1}, {"intent", 2}, {"unlock", 2}}},
		{"locked: persist syncs the outcomes first", true, []step{
			{"intent", 1}, {"outcome", 1}, {"persist", 2}, {"unlock", 2}}},
		{"unlocked: every append syncs", false, []step{
			{"intent", 1}, {"outcome", 2}, {"outcome", 3}, {"intent", 4}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFile(t)
			mustPersist(t, f, statetest.Sample())
			s, err := f.Read()
			if err != nil {
				t.Fatal(err)
			}
			var id string
			if tt.locked {
				if id, err = f.Lock(context.Background(), state.LockInfo{Operation: "apply"}); err != nil {
					t.Fatal(err)
				}
			}
			appended := 0
			for i, st := range tt.steps {
				switch st.do {
				case "intent":
					err = f.Append(intent("notification.n", "u1"))
					appended++
				case "outcome":
					err = f.Append(outcome("notification.n", "u1"))
					appended++
				case "unlock":
					err = f.Unlock(id)
				case "persist":
					if err = s.ApplyEntry(intent("notification.n", "u1")); err == nil {
						err = f.Persist(s)
					}
					appended = 0
				}
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, st.do, err)
				}
				if got := local.JournalSyncs(f); got != st.wantSyncs {
					t.Errorf("after step %d (%s): %d journal fsyncs; want %d", i, st.do, got, st.wantSyncs)
				}
				// Another reader sees every acknowledged entry.
				got, err := local.NewFile(f.Path()).Read()
				if err != nil {
					t.Fatalf("step %d: Read: %v", i, err)
				}
				if m := got.Messages["notification.n"]; appended > 0 && (m == nil || m.Targets["u1"] == nil) {
					t.Fatalf("step %d (%s): the journal lacks the entries appended", i, st.do)
				} else if appended > 0 && tt.steps[i].do == "outcome" && m.Targets["u1"].Outcome != state.Delivered {
					t.Fatalf("step %d: u1 is %v; want delivered", i, m.Targets["u1"].Outcome)
				}
			}
		})
	}
}
