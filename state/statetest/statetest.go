// Package statetest is the conformance test every state backend must pass.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
	"pushform/state/statefile"
)

// TestManager runs the conformance test against managers made by
// newManager, which must return a manager over fresh, empty storage on each
// call.
func TestManager(t *testing.T, newManager func(t *testing.T) state.Manager) {
	for _, c := range []struct {
		name string
		test func(*testing.T, func(t *testing.T) state.Manager)
	}{
		{"EmptyRead", testEmptyRead},
		{"RoundTrip", testRoundTrip},
		{"SerialIncrements", testSerialIncrements},
		{"LineageMismatchRefused", testLineageMismatchRefused},
		{"StaleSerialRefused", testStaleSerialRefused},
		{"Ledger", testLedger},
		{"JournalReplay", testJournalReplay},
		{"AcceptedShapes", testAcceptedShapes},
		{"PolicyOverrides", testPolicyOverrides},
		{"JournalWithoutSnapshot", testJournalWithoutSnapshot},
		{"PersistClearsJournal", testPersistClearsJournal},
		{"LockExclusion", testLockExclusion},
		{"LockWaitsForDeadline", testLockWaitsForDeadline},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, newManager) })
	}
}

func testEmptyRead(t *testing.T, newManager func(t *testing.T) state.Manager) {
	s, err := newManager(t).Read()
	if err != nil || s != nil {
		t.Fatalf("Read of empty storage = %v, %v; want nil, nil", s, err)
	}
}

func testRoundTrip(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	want := Sample()
	if err := m.Persist(want); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func testSerialIncrements(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	s := Sample()
	for want := uint64(1); want <= 3; want++ {
		if err := m.Persist(s); err != nil {
			t.Fatal(err)
		}
		if s.Serial != want {
			t.Fatalf("after Persist, in-memory serial = %d; want %d", s.Serial, want)
		}
		got, err := m.Read()
		if err != nil {
			t.Fatal(err)
		}
		if got.Serial != want {
			t.Fatalf("stored serial = %d; want %d", got.Serial, want)
		}
	}
}

func testLineageMismatchRefused(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	if err := m.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	other := Sample()
	other.Lineage = "another-lineage"
	other.Serial = 1
	if err := m.Persist(other); !errors.Is(err, state.ErrLineage) {
		t.Fatalf("Persist of another lineage: err = %v; want ErrLineage", err)
	}
}

func testStaleSerialRefused(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	if err := m.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	a, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Persist(a); err != nil {
		t.Fatal(err)
	}
	if err := m.Persist(b); !errors.Is(err, state.ErrStaleSerial) {
		t.Fatalf("Persist of a state read before another write: err = %v; want ErrStaleSerial", err)
	}
}

func testLedger(t *testing.T, newManager func(t *testing.T) state.Manager) {
	// What reached whom survives forgetting and edits, through the
	// journal and through a snapshot, read back and written again.
	m := newManager(t)
	base := Sample()
	if err := m.Persist(base); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	coupon := &message.Content{Title: "Coupon", Body: "Your 10% coupon"}
	edited := &message.Content{Title: "Coupon", Body: "Your 15% coupon"}
	item := func(c *message.Content, fp string, ids ...string) state.Item {
		return state.Item{Address: "notification.y", Kind: "notification", TargetKind: "user_ids", Fingerprint: fp, Content: c, Targets: ids}
	}
	delivered := func(n int) []*state.Target {
		return slices.Repeat([]*state.Target{{Outcome: state.Delivered, DeviceCount: 1}}, n)
	}
	o1, o2 := item(nil, "fp-coupon", "alice", "bob"), item(nil, "fp-coupon-15", "bob")
	o1.Outcomes, o2.Outcomes = delivered(2), delivered(1)
	entries := []state.Entry{
		{Type: state.EntryIntent, Batch: 1, Time: t0, Items: []state.Item{item(coupon, "fp-coupon", "alice", "bob")}},
		{Type: state.EntryOutcome, Batch: 1, Time: t0, RequestID: "req-1", Items: []state.Item{o1}},
		{Type: state.EntryIntent, Batch: 2, Time: t0.Add(time.Hour), Items: []state.Item{item(edited, "fp-coupon-15", "bob")}},
		{Type: state.EntryOutcome, Batch: 2, Time: t0.Add(time.Hour), RequestID: "req-2", Items: []state.Item{o2}},
		{Type: state.EntryForget, Time: t0.Add(2 * time.Hour), Items: []state.Item{{Address: "notification.y"}}},
	}
	if err := m.Append(entries...); err != nil {
		t.Fatal(err)
	}
	check := func(s *state.State, when string) {
		t.Helper()
		h := s.TargetHistory(message.TargetUsers, "bob")
		if len(h) != 2 || h[0].RequestID != "req-1" || h[0].Content.Body != coupon.Body || h[1].RequestID != "req-2" ||
			h[1].Content.Body != edited.Body || !h[0].Forgotten || !h[1].Forgotten || !h[1].ForgottenAt.Equal(t0.Add(2*time.Hour)) {
			t.Fatalf("%s: history of bob = %+v", when, h)
		}
		if h := s.TargetHistory(message.TargetUsers, "alice"); len(h) != 1 || h[0].RequestID != "req-1" || h[0].Outcome != state.Delivered {
			t.Fatalf("%s: history of alice = %+v", when, h)
		}
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	check(got, "journal replayed")
	if err := m.Persist(got); err != nil {
		t.Fatal(err)
	}
	if got, err = m.Read(); err != nil {
		t.Fatal(err)
	}
	check(got, "snapshot")
	if err := m.Persist(got); err != nil {
		t.Fatal(err)
	}
	if got, err = m.Read(); err != nil {
		t.Fatal(err)
	}
	check(got, "snapshot written again")
}

func testJournalReplay(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	base := Sample()
	if err := m.Persist(base); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	content := &message.Content{Title: "Hi", Body: "There", Tag: "t"}
	entries := []state.Entry{
		{Type: state.EntryIntent, Batch: 1, Time: t0, Items: []state.Item{
			{Address: "notification.new", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp-new", Content: content, Targets: []string{"u1", "u2"}},
		}},
		{Type: state.EntryOutcome, Batch: 1, Time: t0.Add(time.Second), RequestID: "req-1", Status: 207, Items: []state.Item{
			{Address: "notification.new", Fingerprint: "fp-new", Targets: []string{"u1", "u2"}, Outcomes: []*state.Target{
				{Outcome: state.Delivered, DeviceCount: 2},
				{Outcome: state.Failed, Message: "token expired"},
			}},
		}},
		{Type: state.EntryIntent, Batch: 2, Time: t0.Add(2 * time.Second), Items: []state.Item{
			{Address: "notification.new", Fingerprint: "fp-new", Targets: []string{"u3"}},
		}},
		{Type: state.EntryForget, Time: t0.Add(3 * time.Second), Items: []state.Item{{Address: "campaign.c.badge.reset"}}},
	}
	// Two calls: entries must survive across appends.
	if err := m.Append(entries[:2]...); err != nil {
		t.Fatal(err)
	}
	if err := m.Append(entries[2:]...); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := Sample()
	want.Serial = base.Serial
	for _, e := range entries {
		if err := want.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed state:\n got %+v\nwant %+v", got, want)
	}
	msg := got.Messages["notification.new"]
	if msg == nil {
		t.Fatal("intent did not create notification.new")
	}
	if tg := msg.Targets["u1"]; tg.Outcome != state.Delivered || tg.RequestID != "req-1" || tg.DeviceCount != 2 {
		t.Errorf("u1 = %+v; want delivered to 2 devices by req-1", tg)
	}
	if tg := msg.Targets["u2"]; tg.Outcome != state.Failed || tg.Message != "token expired" {
		t.Errorf("u2 = %+v; want failed with its message", tg)
	}
	if tg := msg.Targets["u3"]; tg.Outcome != state.Unknown {
		t.Errorf("u3 (intent without outcome) = %+v; want unknown", tg)
	}
	if _, ok := got.Messages["campaign.c.badge.reset"]; ok {
		t.Error("forgotten address still in state")
	}
}

func testAcceptedShapes(t *testing.T, newManager func(t *testing.T) state.Manager) {
	// What a reviewed apply accepted survives the journal, a move and
	// a snapshot; an empty fingerprint drops an address's.
	m := newManager(t)
	if err := m.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	if err := m.Append(
		state.Entry{Type: state.EntryAccept, Time: t0, Items: []state.Item{
			{Address: "notification.a", Fingerprint: "shape-a"}, {Address: "campaign.c.badge.reset", Fingerprint: "shape-r"}, {Address: "notification.gone", Fingerprint: "shape-g"},
		}},
		state.Entry{Type: state.EntryMove, Time: t0, Items: []state.Item{{Address: "campaign.c.badge.reset", To: "campaign.c.badge.zero"}}},
		state.Entry{Type: state.EntryAccept, Time: t0, Items: []state.Item{{Address: "notification.gone"}, {Address: "notification.a", Fingerprint: "shape-a2"}}},
	); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"notification.a": "shape-a2", "campaign.c.badge.zero": "shape-r"}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Accepted, want) {
		t.Fatalf("journal replayed: accepted %v, want %v", got.Accepted, want)
	}
	if err := m.Persist(got); err != nil {
		t.Fatal(err)
	}
	if got, err = m.Read(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Accepted, want) {
		t.Fatalf("snapshot: accepted %v, want %v", got.Accepted, want)
	}
}

// testPolicyOverrides: the deny policies an apply overrode survive the
// journal and a snapshot, with their reasons and addresses, in order.
func testPolicyOverrides(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	if err := m.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	want := []state.Override{
		{Time: t0, Policy: "https_only", Reason: "the shop has no TLS yet", Addresses: []string{"notification.a", "campaign.c.badge.reset"}},
		{Time: t0, Policy: "daily_volume", Reason: "Black Friday", Addresses: []string{"notification.a"}},
		{Time: t0.Add(time.Hour), Policy: "https_only", Reason: "again: ü and \\n", Addresses: []string{"notification.b"}},
	}
	if err := m.Append(state.OverrideEntry(t0, want[:2]), state.OverrideEntry(t0.Add(time.Hour), want[2:])); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Overrides, want) {
		t.Fatalf("journal replayed: overrides %+v, want %+v", got.Overrides, want)
	}
	if o := got.OverridesOf("notification.a"); len(o) != 2 || o[1].Policy != "daily_volume" {
		t.Errorf("OverridesOf(notification.a) = %+v", o)
	}
	if err := m.Persist(got); err != nil {
		t.Fatal(err)
	}
	if got, err = m.Read(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Overrides, want) {
		t.Fatalf("snapshot: overrides %+v, want %+v", got.Overrides, want)
	}
}

func testJournalWithoutSnapshot(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	e := state.Entry{Type: state.EntryIntent, Batch: 1, Time: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), Items: []state.Item{
		{Address: "notification.a", Kind: "notification", Fingerprint: "fp", Targets: []string{"u1"}},
	}}
	if err := m.Append(e); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Lineage == "" || got.Messages["notification.a"].Targets["u1"].Outcome != state.Unknown {
		t.Fatalf("journal-only state = %+v; want a lineage and u1 unknown", got)
	}
	again, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if again.Lineage != got.Lineage {
		t.Errorf("lineage changed between reads: %q then %q", got.Lineage, again.Lineage)
	}
	if err := m.Persist(got); err != nil {
		t.Fatal(err)
	}
}

func testPersistClearsJournal(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	s := Sample()
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	forget := state.Entry{Type: state.EntryForget, Items: []state.Item{{Address: "campaign.c.badge.reset"}}}
	if err := m.Append(forget); err != nil {
		t.Fatal(err)
	}
	// Persist a state that does not include the entry: once persisted,
	// the journal must no longer apply.
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Messages["campaign.c.badge.reset"]; !ok {
		t.Fatal("journal entry replayed after Persist; the journal was not cleared")
	}
	if got.Serial != s.Serial {
		t.Fatalf("serial = %d; want %d", got.Serial, s.Serial)
	}
}

func testLockExclusion(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	ctx := context.Background()
	id, err := m.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Lock(ctx, state.NewLockInfo("plan"))
	var le *state.LockError
	if !errors.As(err, &le) {
		t.Fatalf("second Lock: err = %v; want a *LockError", err)
	}
	if le.Info.ID != id || le.Info.Operation != "apply" || le.Info.Who == "" || le.Info.Pid == 0 {
		t.Errorf("LockError info = %+v; want the holder's (id %s, apply)", le.Info, id)
	}
	if err.Error() == "" {
		t.Error("empty LockError message")
	}
	if err := m.Unlock("wrong-" + id); err == nil {
		t.Error("Unlock with a wrong id succeeded")
	}
	if err := m.Unlock(id); err != nil {
		t.Fatal(err)
	}
	id2, err := m.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if id2 == id {
		t.Error("a new lock reused the old id")
	}
	if err := m.Unlock(id2); err != nil {
		t.Fatal(err)
	}
}

func testLockWaitsForDeadline(t *testing.T, newManager func(t *testing.T) state.Manager) {
	m := newManager(t)
	id, err := m.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	// A short deadline expires while the lock is held.
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err = state.LockWithContext(short, m, state.NewLockInfo("plan"))
	cancel()
	var le *state.LockError
	if !errors.As(err, &le) {
		t.Fatalf("Lock with an expiring deadline: err = %v; want a *LockError", err)
	}
	// A long one is served once the holder unlocks.
	long, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		id2, err := state.LockWithContext(long, m, state.NewLockInfo("plan"))
		if err == nil {
			err = m.Unlock(id2)
		}
		done <- err
	}()
	if err := m.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting Lock: %v", err)
	}
}

// Sample returns a small state using every field of the model, with times
// in UTC so it survives a round trip unchanged.
func Sample() *state.State {
	t0 := time.Date(2026, 4, 1, 9, 30, 0, 0, time.UTC)
	since := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	zero := 0
	return &state.State{
		Version:     state.FormatVersion,
		Lineage:     "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
		Environment: "test",
		Recipients:  &state.Snapshot{FetchedAt: t0, UserIDs: []string{"u1", "u2", "u3"}},
		Messages: map[string]*state.Message{
			"campaign.spring_sale.notification.announce": {
				Address:     "campaign.spring_sale.notification.announce",
				Kind:        "notification",
				TargetKind:  "user_ids",
				Fingerprint: "fp-1",
				Content:     message.Content{Title: "Spring sale", Body: "20% off <today> & tomorrow", OpenToURL: "https://shop.example.com/sale?a=1&b=2", Tag: "spring", SilentInForeground: true},
				Targets: map[string]*state.Target{
					"u1": {Outcome: state.Delivered, Fingerprint: "fp-1", RequestID: "req-1", Time: t0, DeviceCount: 2},
					"u2": {Outcome: state.Skipped, Fingerprint: "fp-1", RequestID: "req-1", Time: t0, Reason: "no_active_device", UnreachableSince: &since},
					"u3": {Outcome: state.Failed, Fingerprint: "fp-1", RequestID: "req-1", Time: t0, Message: "ünïcode \"quoted\""},
					"u4": {Outcome: state.Unknown, Fingerprint: "fp-1", Time: t0},
				},
			},
			"campaign.c.badge.reset": {
				Address:     "campaign.c.badge.reset",
				Kind:        "badge",
				TargetKind:  "device_ids",
				Fingerprint: "fp-2",
				Content:     message.Content{BadgeCount: &zero},
				Targets: map[string]*state.Target{
					"dev-1": {Outcome: state.Delivered, Fingerprint: "fp-2", RequestID: "req-2", Time: t0, DeviceCount: -1},
				},
			},
		},
	}
}

// BatchEntries are the intent and outcome entries of one request of size
// targets (user ids), as apply journals them: every target delivered.
func BatchEntries(batch, size int) (intent, outcome state.Entry) {
	ids := make([]string, size)
	outs := make([]*state.Target, size)
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := t0.Add(time.Duration(batch) * 5 * time.Millisecond)
	req := fmt.Sprintf("req-%08d", batch)
	rec := &state.Target{Outcome: state.Delivered, DeviceCount: 1} // apply shares one record among equal outcomes
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", batch*size+i)
		outs[i] = rec
	}
	content := message.Content{Title: "Launch", Body: "It is here", Tag: "launch"}
	intent = state.Entry{Type: state.EntryIntent, Batch: int64(batch), Time: at,
		Items: []state.Item{{Address: "campaign.launch.notification.announce", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp-launch", Content: &content, Targets: ids}}}
	outcome = state.Entry{Type: state.EntryOutcome, Batch: int64(batch), Time: at, RequestID: req, Status: 200,
		Items: []state.Item{{Address: "campaign.launch.notification.announce", Fingerprint: "fp-launch", Targets: ids, Outcomes: outs}}}
	return intent, outcome
}

// CompactManager is a manager that also reads compact states, as plan and
// apply read them.
type CompactManager interface {
	state.Manager
	state.CompactReader
}

// Compact returns m with Read going through ReadCompact: each read checks
// that ReadCompact gives what Read gives, and hands the caller the state
// with maps, which TestManager indexes. TestManager(t, func(t) { return
// Compact(t, newManager(t)) }) runs the conformance test over compact reads.
func Compact(t *testing.T, m CompactManager) state.Manager { return compactManager{m, t} }

type compactManager struct {
	CompactManager
	t *testing.T
}

func (c compactManager) Read() (*state.State, error) {
	cs, err := c.CompactManager.ReadCompact()
	ms, merr := c.CompactManager.Read()
	if (err == nil) != (merr == nil) {
		c.t.Fatalf("ReadCompact: %v; Read: %v", err, merr)
	}
	if err != nil || cs == nil {
		if (cs == nil) != (ms == nil) {
			c.t.Fatalf("ReadCompact gave %v, Read %v", cs, ms)
		}
		return cs, err
	}
	if !cs.Compact {
		c.t.Fatal("ReadCompact gave a state that is not compact")
	}
	var a, b bytes.Buffer
	if err := statefile.Encode(&a, cs); err != nil {
		c.t.Fatal(err)
	}
	if err := statefile.Encode(&b, ms); err != nil {
		c.t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		c.t.Fatal("ReadCompact and Read disagree")
	}
	withMap := func(m *state.Message) *state.Message {
		targets := make(map[string]*state.Target, m.TargetCount())
		for id, t := range m.AllTargets() {
			targets[id] = t
		}
		return &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind, Fingerprint: m.Fingerprint,
			Content: m.Content, EarlierTags: m.EarlierTags, Targets: targets, ForgottenAt: m.ForgottenAt}
	}
	for _, m := range cs.Messages {
		*m = *withMap(m)
	}
	for i, m := range cs.Ledger {
		cs.Ledger[i] = withMap(m)
	}
	cs.Compact = false
	return cs, nil
}
