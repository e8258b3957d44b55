package executor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// failingJournal accepts the first ok appends, then fails every one.
type failingJournal struct {
	mu      sync.Mutex
	ok      int
	entries []state.Entry
	calls   int
}

func (j *failingJournal) Append(es ...state.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls++
	if j.calls > j.ok {
		return errors.New("disk full")
	}
	j.entries = append(j.entries, es...)
	return nil
}

func msgOf(addr string, kind config.Kind, tk config.TargetKind, c config.Content, ids ...string) *config.Message {
	return &config.Message{Address: addr, Kind: kind, Targets: config.Targets{Kind: tk, IDs: ids}, Content: c}
}

// sentState returns a state in which each message was delivered to its ids.
func sentState(t *testing.T, ms ...*config.Message) *state.State {
	t.Helper()
	st := state.New("test")
	if _, err := Apply(context.Background(), plan(t, st, ms...), state.NewRecorder(&memJournal{}, st), &fakeSender{reply: deliverAll(nil, nil)}, Options{Sleep: noSleep}); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPreludeJournalsSnapshotAndForgets: before any request, apply
// journals the recipients snapshot it planned with and what the plan
// forgets (a whole address gone from the configuration, targets gone from
// an address), and says so in one event; nothing of it is sent.
func TestPreludeJournalsSnapshotAndForgets(t *testing.T) {
	old := note("notification.old", "", "u1")
	old.Content.Body = "Other" // the same content would reach u1 once only
	keep := note("notification.keep", "t", "u1", "u2")
	st := sentState(t, old, keep)
	fetched := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	snap := &state.Snapshot{FetchedAt: fetched, UserIDs: []string{"u1", "u3"}}
	p, err := planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{note("notification.keep", "t", "u1")}},
		State: st, Recipients: snap, Refreshed: true}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Requests != 0 {
		t.Fatalf("the plan sends %d requests; this test wants forgets only", p.Summary.Requests)
	}
	j := &memJournal{}
	s := &fakeSender{reply: deliverAll(nil, nil)}
	var events []Event
	res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Now: func() time.Time { return now }, Events: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Entry{
		{Type: state.EntrySnapshot, Time: fetched, Items: []state.Item{{Targets: []string{"u1", "u3"}}}},
		{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: "notification.keep", Targets: []string{"u2"}}}},
		{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: "notification.old"}}},
	}
	if !reflect.DeepEqual(j.entries, want) {
		t.Fatalf("journal %+v\nwant %+v", j.entries, want)
	}
	if s.calls != 0 || res.Requests != 0 || res.NotStarted != 0 {
		t.Errorf("%d requests sent, result %+v; a forget sends nothing", s.calls, res)
	}
	if len(events) != 1 || events[0].Type != EventForget || !reflect.DeepEqual(events[0].Addresses, []string{"notification.keep", "notification.old"}) {
		t.Errorf("events %+v; want one forget event naming both addresses", events)
	}
	if st.Messages["notification.old"] != nil || len(st.Messages["notification.keep"].Targets) != 1 || st.Messages["notification.keep"].Targets["u1"] == nil {
		t.Errorf("state after the forgets: %v, keep %+v", st.Addresses(), st.Messages["notification.keep"].Targets)
	}
	if !reflect.DeepEqual(st.Recipients, snap) {
		t.Errorf("recipients in state %+v, want %+v", st.Recipients, snap)
	}

	// A snapshot not fetched for this plan (--refresh=false) is not journaled again.
	p, err = planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}}, State: st, Recipients: snap}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	j = &memJournal{}
	if _, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(j.entries) != 1 || j.entries[0].Type != state.EntryForget {
		t.Errorf("journal %+v; want only the forget of notification.keep", j.entries)
	}
}

// TestPreludeJournalFailure: a prelude that cannot be journaled stops the
// run before any request, and nothing of it reaches the state.
func TestPreludeJournalFailure(t *testing.T) {
	st := sentState(t, note("notification.old", "", "u1"))
	p := plan(t, st, note("notification.new", "", "u2"))
	s := &fakeSender{reply: deliverAll(nil, nil)}
	_, err := Apply(context.Background(), p, state.NewRecorder(&failingJournal{}, st), s, Options{})
	if err == nil || !strings.Contains(err.Error(), "writing the state journal: disk full") {
		t.Fatalf("err = %v", err)
	}
	if s.calls != 0 || st.Messages["notification.old"] == nil {
		t.Fatalf("%d requests; old in state: %v", s.calls, st.Messages["notification.old"] != nil)
	}
}

// TestDeviceAndTopicRequests: device_ids and topics messages go out in
// their own request fields, and their outcomes land on the right targets;
// a topics notification has one result for its whole array.
func TestDeviceAndTopicRequests(t *testing.T) {
	three := 3
	badge := msgOf("badge.b", config.KindBadge, config.TargetDevices, config.Content{BadgeCount: &three}, "d1", "d2")
	topics := msgOf("notification.t", config.KindNotification, config.TargetTopics, config.Content{Title: "Topic", Body: "B"}, "deals", "news")
	users := note("notification.u", "", "u1") // title "T"
	st := state.New("test")
	p := plan(t, st, badge, topics, users)
	s := &fakeSender{reply: deliverAll(nil, nil)}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Sleep: noSleep})
	if err != nil {
		t.Fatal(err)
	}
	if s.calls != 1 || len(s.requests[0]) != 3 {
		t.Fatalf("%d requests; want the three small messages in one", s.calls)
	}
	byTitle := map[string]pushapi.Notification{}
	for _, n := range s.requests[0] {
		byTitle[n.Title] = n
	}
	if n := byTitle[""]; !reflect.DeepEqual(n.DeviceIDs, []string{"d1", "d2"}) || n.UserIDs != nil || n.Topics != nil || n.BadgeCount == nil || *n.BadgeCount != 3 {
		t.Errorf("badge request %+v", n)
	}
	if n := byTitle["Topic"]; !reflect.DeepEqual(n.Topics, []string{"deals", "news"}) || n.UserIDs != nil || n.DeviceIDs != nil {
		t.Errorf("topics request %+v", n)
	}
	if n := byTitle["T"]; !reflect.DeepEqual(n.UserIDs, []string{"u1"}) || n.DeviceIDs != nil || n.Topics != nil {
		t.Errorf("user_ids request %+v", n)
	}
	if res.Counts.Delivered != 5 {
		t.Errorf("counts %+v; want 5 delivered (2 devices, 2 topics, 1 user)", res.Counts)
	}
	for addr, ids := range map[string][]string{"badge.b": {"d1", "d2"}, "notification.t": {"deals", "news"}, "notification.u": {"u1"}} {
		for _, id := range ids {
			if tg := st.Messages[addr].Targets[id]; tg == nil || tg.Outcome != state.Delivered || tg.RequestID != "req-1" {
				t.Errorf("%s -> %s: %+v", addr, id, tg)
			}
		}
	}
	if again := plan(t, st, badge, topics, users); again.HasChanges() {
		t.Errorf("the next plan has changes: %+v", again.Summary)
	}
}

// TestMissingResultIsUnknown: a target the answer has no result for (a
// topics answer with no result at all) is recorded unknown, never
// delivered.
func TestMissingResultIsUnknown(t *testing.T) {
	topics := msgOf("notification.t", config.KindNotification, config.TargetTopics, config.Content{Title: "T", Body: "B"}, "deals")
	st := state.New("test")
	s := &fakeSender{reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
		return &pushapi.SendResponse{RequestID: "req-1", StatusCode: 200}, nil
	}}
	res, err := Apply(context.Background(), plan(t, st, topics), state.NewRecorder(&memJournal{}, st), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Unknown != 1 || st.Messages["notification.t"].Targets["deals"].Outcome != state.Unknown {
		t.Fatalf("counts %+v", res.Counts)
	}
}

// TestJournalFailureAfterFirstIntent: the journal fails once the first
// group of intents is written (one call: the batches the free slots take,
// all three here). The run stops with the journal error, sends nothing
// beyond those requests, and the state holds nothing the journal does
// not: their batches are unknown, their outcomes never journaled.
func TestJournalFailureAfterFirstIntent(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", users(1500, "u")...))
	j := &failingJournal{ok: 1}
	s := &fakeSender{reply: deliverAll(nil, nil)}
	res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1})
	if err == nil || !strings.Contains(err.Error(), "writing the state journal: disk full") {
		t.Fatalf("err = %v; want the journal error", err)
	}
	if len(j.entries) == 0 {
		t.Fatal("nothing journaled")
	}
	for i, e := range j.entries {
		if e.Type != state.EntryIntent || e.Batch != int64(i) {
			t.Fatalf("journal %+v; want the first group of intents only", j.entries)
		}
	}
	if s.calls > len(j.entries) {
		t.Fatalf("%d requests sent after the journal failed; at most the %d journaled may have left", s.calls, len(j.entries))
	}
	m := st.Messages["notification.a"]
	if m == nil || len(m.Targets) != 500*len(j.entries) {
		t.Fatalf("state holds %v; want the journaled batches' %d targets only", m, 500*len(j.entries))
	}
	for id, tg := range m.Targets {
		if tg.Outcome != state.Unknown {
			t.Fatalf("%s: %s; its outcome was never journaled, so the state must not say more", id, tg.Outcome)
		}
	}
	// If the first request left before the run stopped, its answer is
	// counted in the summary, as not recorded; the journal never holds it.
	recorded := res.Counts.Delivered
	if u := res.Unrecorded; u != nil {
		recorded -= u.Delivered
	}
	if recorded != 0 {
		t.Errorf("counted %d delivered as recorded, which the journal does not hold", recorded)
	}
}

// TestJournalFailureWhileStopping: batches journaled ahead are recorded
// "not sent" when the run stops; when that record fails too, the run
// reports the journal error rather than carrying on.
func TestJournalFailureWhileStopping(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", users(2500, "u")...))
	ctx, cancel := context.WithCancel(context.Background())
	j := &failingJournal{ok: 2} // the intents of the first group
	s := &fakeSender{}
	s.reply = func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
		cancel()
		return nil, &pushapi.StatusError{Method: "POST", StatusCode: 503}
	}
	_, err := Apply(ctx, p, state.NewRecorder(j, st), s, Options{Parallelism: 2, Sleep: noSleep})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v; want the journal error", err)
	}
}

func TestBatchErrorAndCounts(t *testing.T) {
	inner := errors.New("boom")
	be := &BatchError{Batch: 2, Addresses: []string{"a", "b"}, Err: inner}
	if be.Error() != "request 3 (a, b): boom" || !errors.Is(be, inner) {
		t.Errorf("%q, unwraps to inner: %v", be.Error(), errors.Is(be, inner))
	}
	if n := (Counts{Delivered: 1, Skipped: 2, Failed: 3, Unknown: 4}).Total(); n != 10 {
		t.Errorf("Total = %d", n)
	}
}

// TestValidationIssues: a 400 that never names a notification blames each
// with what the service said. (Issues that point at one notification are
// covered by TestRefusedPackedRequest: the others are sent again.)
func TestValidationIssues(t *testing.T) {
	tests := []struct {
		name string
		ve   *pushapi.ValidationError
		want []string // per notification
	}{
		{"whole request", &pushapi.ValidationError{Issues: []pushapi.Issue{{Index: -1, Message: "too many userIds"}}},
			[]string{"too many userIds", "too many userIds"}},
		{"excerpt only", &pushapi.ValidationError{Excerpt: "bad request, go away"}, []string{"bad request, go away", "bad request, go away"}},
		{"nothing", &pushapi.ValidationError{}, []string{"the request was refused with no details", "the request was refused with no details"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := state.New("test")
			p := plan(t, st, note("notification.a", "", "u1"), note("notification.b", "", "u2"))
			s := &fakeSender{reply: func(int, []pushapi.Notification) (*pushapi.SendResponse, error) { return nil, tt.ve }}
			if _, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{}); err != nil {
				t.Fatal(err)
			}
			for i, addr := range []string{"notification.a", "notification.b"} {
				for _, tg := range st.Messages[addr].Targets {
					if tg.Outcome != state.Failed || !strings.Contains(tg.Message, tt.want[i]) {
						t.Errorf("%s: %+v; want failed mentioning %q", addr, tg, tt.want[i])
					}
				}
			}
		})
	}
}
