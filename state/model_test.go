package state_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func intentOf(addr string, targets ...string) state.Entry {
	return state.Entry{Type: state.EntryIntent, Batch: 1, Time: t0, Items: []state.Item{{Address: addr, Kind: message.KindNotification,
		TargetKind: message.TargetUsers, Fingerprint: "fp", Content: &message.Content{Title: "T"}, Targets: targets}}}
}

func TestApplyEntry(t *testing.T) {
	later := t0.Add(time.Minute)
	tests := []struct {
		name    string
		entries []state.Entry
		check   func(t *testing.T, s *state.State)
		err     string
	}{
		{name: "intent creates the address, targets unknown", entries: []state.Entry{intentOf("notification.a", "u1", "u2")},
			check: func(t *testing.T, s *state.State) {
				m := s.Messages["notification.a"]
				if m.Address != "notification.a" || m.Kind != message.KindNotification || m.TargetKind != message.TargetUsers || m.Fingerprint != "fp" || m.Content.Title != "T" {
					t.Errorf("message %+v", m)
				}
				for _, id := range []string{"u1", "u2"} {
					if tg := m.Targets[id]; tg.Outcome != state.Unknown || tg.Fingerprint != "fp" || !tg.Time.Equal(t0) {
						t.Errorf("%s: %+v", id, tg)
					}
				}
			}},
		{name: "an intent without kind or content keeps what is recorded", entries: []state.Entry{intentOf("notification.a", "u1"),
			{Type: state.EntryIntent, Time: later, Items: []state.Item{{Address: "notification.a", Fingerprint: "fp2", Targets: []string{"u2"}}}}},
			check: func(t *testing.T, s *state.State) {
				m := s.Messages["notification.a"]
				if m.Kind != message.KindNotification || m.TargetKind != message.TargetUsers || m.Content.Title != "T" || m.Fingerprint != "fp2" {
					t.Errorf("message %+v", m)
				}
				if m.Targets["u1"].Fingerprint != "fp" || m.Targets["u2"].Fingerprint != "fp2" {
					t.Errorf("targets %+v %+v", m.Targets["u1"], m.Targets["u2"])
				}
			}},
		{name: "outcome fills request id, time and fingerprint from the entry", entries: []state.Entry{intentOf("notification.a", "u1", "u2", "u3"),
			{Type: state.EntryOutcome, Batch: 1, Time: later, RequestID: "req-9", Items: []state.Item{{Address: "notification.a", Fingerprint: "fp",
				Targets:  []string{"u1", "u2", "u3"},
				Outcomes: []*state.Target{{Outcome: state.Delivered, DeviceCount: 1}, {Outcome: state.Delivered, DeviceCount: 1}, {Outcome: state.Failed, Message: "m", RequestID: "req-own", Time: t0, Fingerprint: "own"}}}}}},
			check: func(t *testing.T, s *state.State) {
				m := s.Messages["notification.a"]
				u1, u2, u3 := m.Targets["u1"], m.Targets["u2"], m.Targets["u3"]
				if u1.Outcome != state.Delivered || u1.RequestID != "req-9" || !u1.Time.Equal(later) || u1.Fingerprint != "fp" || u1.DeviceCount != 1 {
					t.Errorf("u1 %+v", u1)
				}
				if u1 != u2 {
					t.Error("equal outcomes of one request do not share a record")
				}
				if u3.Outcome != state.Failed || u3.RequestID != "req-own" || !u3.Time.Equal(t0) || u3.Fingerprint != "own" || u3.Message != "m" {
					t.Errorf("u3 %+v", u3)
				}
			}},
		{name: "outcome without intent", entries: []state.Entry{{Type: state.EntryOutcome, Items: []state.Item{{Address: "notification.x", Targets: []string{"u1"}, Outcomes: []*state.Target{{}}}}}},
			err: "journal: outcome for notification.x without an intent"},
		{name: "outcome count mismatch", entries: []state.Entry{intentOf("notification.a", "u1"),
			{Type: state.EntryOutcome, Items: []state.Item{{Address: "notification.a", Targets: []string{"u1"}}}}},
			err: "journal: outcome for notification.a has 0 outcomes for 1 targets"},
		{name: "null outcome", entries: []state.Entry{intentOf("notification.a", "u1", "u2"),
			{Type: state.EntryOutcome, Items: []state.Item{{Address: "notification.a", Targets: []string{"u1", "u2"}, Outcomes: []*state.Target{{}, nil}}}}},
			err: "journal: outcome for notification.a has a null outcome"},
		{name: "shared outcome records, one unknown", entries: []state.Entry{intentOf("notification.a", "u1", "u2", "u3"),
			{Type: state.EntryOutcome, Batch: 1, RequestID: "req-1", Items: []state.Item{{Address: "notification.a", Targets: []string{"u1", "u3"},
				Outcomes: slices.Repeat([]*state.Target{{Outcome: state.Unknown}}, 2)}}},
			{Type: state.EntryOutcome, Batch: 2, RequestID: "req-2", Items: []state.Item{{Address: "notification.a", Targets: []string{"u1", "u2", "u3"},
				Outcomes: slices.Repeat([]*state.Target{{Outcome: state.Unknown}}, 3)}}}},
			check: func(t *testing.T, s *state.State) {
				m := s.Messages["notification.a"]
				// One record for all three in the entry; each keeps its own count.
				for id, want := range map[string]int{"u1": 2, "u2": 1, "u3": 2} {
					if r := m.Targets[id]; r.Outcome != state.Unknown || r.Unanswered != want || r.RequestID != "req-2" {
						t.Errorf("%s: %+v, want unknown with %d unanswered requests", id, r, want)
					}
				}
			}},
		{name: "forget an address", entries: []state.Entry{intentOf("notification.a", "u1"), intentOf("notification.b", "u1"),
			{Type: state.EntryForget, Items: []state.Item{{Address: "notification.a"}}}},
			check: func(t *testing.T, s *state.State) {
				if got := fmt.Sprint(s.Addresses()); got != "[notification.b]" {
					t.Errorf("addresses %s", got)
				}
			}},
		{name: "forget targets", entries: []state.Entry{intentOf("notification.a", "u1", "u2", "u3"),
			{Type: state.EntryForget, Items: []state.Item{{Address: "notification.a", Targets: []string{"u1", "u3", "zz"}}, {Address: "notification.none", Targets: []string{"u1"}}}}},
			check: func(t *testing.T, s *state.State) {
				if m := s.Messages["notification.a"]; len(m.Targets) != 1 || m.Targets["u2"] == nil {
					t.Errorf("targets %v", m.Targets)
				}
				if s.Messages["notification.none"] != nil {
					t.Error("forgetting targets of an unknown address created it")
				}
			}},
		{name: "recipients snapshot", entries: []state.Entry{{Type: state.EntrySnapshot, Time: later}, // no list yet: none stands
			{Type: state.EntrySnapshot, Time: t0, Items: []state.Item{{Targets: []string{"u1", "u2"}}}}},
			check: func(t *testing.T, s *state.State) {
				if r := s.Recipients; r == nil || !r.FetchedAt.Equal(t0) || fmt.Sprint(r.UserIDs) != "[u1 u2]" {
					t.Errorf("recipients %+v", r)
				}
			}},
		{name: "recipients snapshot withdrawn", entries: []state.Entry{{Type: state.EntrySnapshot, Time: t0, Items: []state.Item{{Targets: []string{"u1", "u2"}}}},
			{Type: state.EntrySnapshot, Time: later}}, // a streamed apply fetches it again
			check: func(t *testing.T, s *state.State) {
				if r := s.Recipients; r != nil {
					t.Errorf("recipients %+v, want none while a new list is fetched", r)
				}
			}},
		{name: "unknown entry type", entries: []state.Entry{{Type: "teleport"}}, err: `journal: unknown entry type "teleport"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state.State{} // no Messages map: ApplyEntry makes one
			var err error
			for _, e := range tt.entries {
				if err = s.ApplyEntry(e); err != nil {
					break
				}
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

// An intent over a message decoded without a targets map still records.
func TestApplyEntryNilTargets(t *testing.T) {
	s := state.New("test")
	s.Messages["notification.a"] = &state.Message{Address: "notification.a"}
	if err := s.ApplyEntry(intentOf("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	s.Messages["notification.a"].Targets = nil
	err := s.ApplyEntry(state.Entry{Type: state.EntryOutcome, Items: []state.Item{{Address: "notification.a", Targets: []string{"u1"}, Outcomes: []*state.Target{{Outcome: state.Delivered}}}}})
	if err != nil || s.Messages["notification.a"].Targets["u1"].Outcome != state.Delivered {
		t.Fatalf("err %v, targets %v", err, s.Messages["notification.a"].Targets)
	}
}

func TestNew(t *testing.T) {
	a, b := state.New("test"), state.New("test")
	lineage := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	if !lineage.MatchString(a.Lineage) || a.Lineage == b.Lineage {
		t.Errorf("lineages %q %q", a.Lineage, b.Lineage)
	}
	if a.Version != state.FormatVersion || a.Environment != "test" || a.Messages == nil || a.Serial != 0 {
		t.Errorf("New = %+v", a)
	}
}

// memJournal records what is appended, or fails.
type memJournal struct {
	mu      sync.Mutex
	entries []state.Entry
	fail    error
}

func (j *memJournal) Append(es ...state.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	j.entries = append(j.entries, es...)
	return nil
}

func TestRecorder(t *testing.T) {
	s := state.New("test")
	j := &memJournal{}
	r := state.NewRecorder(j, s)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := r.Record(intentOf(fmt.Sprintf("notification.n%02d", i), "u1")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r.Read(func(s *state.State) {
		if len(s.Messages) != 20 || len(j.entries) != 20 {
			t.Errorf("%d messages, %d journaled; want 20 of each", len(s.Messages), len(j.entries))
		}
	})

	// Memory never runs ahead of the journal.
	j.fail = errors.New("disk full")
	if err := r.Record(intentOf("notification.late", "u1")); err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
	if s.Messages["notification.late"] != nil {
		t.Fatal("an entry the journal refused reached the state")
	}
	// An entry the state cannot take is reported (it is journaled: replay
	// reports it too).
	j.fail = nil
	if err := r.Record(state.Entry{Type: "bogus"}); err == nil || !strings.Contains(err.Error(), "unknown entry type") {
		t.Fatalf("err = %v", err)
	}
}

func TestLockInfo(t *testing.T) {
	before := time.Now().UTC().Truncate(time.Second)
	info := state.NewLockInfo("apply")
	if info.Operation != "apply" || info.Pid != os.Getpid() || !strings.Contains(info.Who, "@") || info.Created.Before(before) || info.Created.After(time.Now()) {
		t.Errorf("NewLockInfo = %+v", info)
	}
	a, b := state.NewLockID(), state.NewLockID()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a) || a == b {
		t.Errorf("lock ids %q %q", a, b)
	}
	e := &state.LockError{Info: state.LockInfo{ID: "5f3c", Who: "ana@ci-7", Operation: "apply", Pid: 4121, Created: time.Date(2026, 11, 22, 14, 3, 11, 0, time.FixedZone("", 3600))}}
	if want := "state is locked by ana@ci-7 (apply, pid 4121, since 2026-11-22T13:03:11Z, lock id 5f3c)"; e.Error() != want {
		t.Errorf("LockError = %q, want %q", e.Error(), want)
	}
	if got := (&state.LockError{}).Error(); got != "state is locked by another process (its lock info is not readable)" {
		t.Errorf("LockError without info = %q", got)
	}
}
