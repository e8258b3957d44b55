package statetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// Backend is a manager as the commands use it: with force-unlock and the
// stale lock report.
type Backend interface {
	state.Manager
	state.ForceUnlocker
	// StaleLock returns the lock info that the last successful Lock found
	// left behind by a holder that ended without unlocking.
	StaleLock() (state.LockInfo, bool)
}

// Storage opens managers over one storage, as separate processes (two CI
// runners) would.
type Storage struct {
	// Open returns a new manager over the storage on each call.
	Open func(t *testing.T) Backend
	// Kill ends m as a killed process ends: without Unlock, its lock
	// released by the operating system or the server. It returns once
	// another manager can take the lock. Nil skips the tests that need it.
	Kill func(t *testing.T, m Backend)
}

// TestShared runs the contracts between managers of one storage: what keeps
// two runs from both writing, and a run from extending a state that moved
// on. newStorage must return fresh, empty storage on each call.
func TestShared(t *testing.T, newStorage func(t *testing.T) Storage) {
	for _, c := range []struct {
		name string
		test func(*testing.T, func(t *testing.T) Storage)
	}{
		{"AppendSeenByOthers", testAppendSeenByOthers},
		{"AppendRefusedAfterOtherPersisted", testAppendRefusedAfterOtherPersisted},
		{"AppendRefusedAfterOtherCreated", testAppendRefusedAfterOtherCreated},
		{"PersistRefusedAfterOtherPersisted", testPersistRefusedAfterOtherPersisted},
		{"LockRefusedNamesHolder", testLockRefusedNamesHolder},
		{"LockWaitsForOtherHolder", testLockWaitsForOtherHolder},
		{"ForceUnlockRefusesLiveHolder", testForceUnlockRefusesLiveHolder},
		{"KilledHolder", testKilledHolder},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, newStorage) })
	}
}

// sharedEntry is an intent entry of one target, for the address addr.
func sharedEntry(addr string) state.Entry {
	return state.Entry{Type: state.EntryIntent, Batch: 1, Time: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), Items: []state.Item{
		{Address: addr, Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &message.Content{Title: "T"}, Targets: []string{"u1"}},
	}}
}

// mustRead reads m's state, failing t on an error.
func mustRead(t *testing.T, m state.Reader) *state.State {
	t.Helper()
	s, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testAppendSeenByOthers(t *testing.T, newStorage func(t *testing.T) Storage) {
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	if err := a.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(sharedEntry("notification.a")); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, b)
	if got == nil || got.Messages["notification.a"] == nil || got.Serial != 1 {
		t.Fatalf("another manager reads %+v; want serial 1 with the appended entry", got)
	}
}

func testAppendRefusedAfterOtherPersisted(t *testing.T, newStorage func(t *testing.T) Storage) {
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	if err := a.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	s := mustRead(t, b)
	if err := b.Persist(s); err != nil {
		t.Fatal(err)
	}
	// a still knows serial 1: a run started from it must record nothing.
	err := a.Append(sharedEntry("notification.stale"))
	if !errors.Is(err, state.ErrStaleSerial) {
		t.Fatalf("Append after another manager persisted: err = %v; want ErrStaleSerial", err)
	}
	if got := mustRead(t, b); got.Messages["notification.stale"] != nil {
		t.Fatal("the refused entry was recorded")
	}
	// Having read the new state, a may append again.
	if s := mustRead(t, a); s.Serial != 2 {
		t.Fatalf("serial = %d; want 2", s.Serial)
	}
	if err := a.Append(sharedEntry("notification.fresh")); err != nil {
		t.Fatalf("Append after reading the new state: %v", err)
	}
	if got := mustRead(t, b); got.Messages["notification.fresh"] == nil {
		t.Fatal("entry appended after the re-read is missing")
	}
}

func testAppendRefusedAfterOtherCreated(t *testing.T, newStorage func(t *testing.T) Storage) {
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	if s := mustRead(t, a); s != nil {
		t.Fatalf("fresh storage holds %+v", s)
	}
	if err := b.Persist(state.New("test")); err != nil {
		t.Fatal(err)
	}
	// a found no state: one created since is not the one it read.
	if err := a.Append(sharedEntry("notification.stale")); !errors.Is(err, state.ErrStaleSerial) {
		t.Fatalf("Append after another manager created the state: err = %v; want ErrStaleSerial", err)
	}
	if got := mustRead(t, b); got.Messages["notification.stale"] != nil {
		t.Fatal("the refused entry was recorded")
	}
}

func testPersistRefusedAfterOtherPersisted(t *testing.T, newStorage func(t *testing.T) Storage) {
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	if err := a.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	sa, sb := mustRead(t, a), mustRead(t, b)
	if err := a.Persist(sa); err != nil {
		t.Fatal(err)
	}
	if err := b.Persist(sb); !errors.Is(err, state.ErrStaleSerial) {
		t.Fatalf("Persist of a state another manager wrote over: err = %v; want ErrStaleSerial", err)
	}
	other := Sample()
	other.Lineage = "another-lineage"
	other.Serial = sa.Serial
	if err := b.Persist(other); !errors.Is(err, state.ErrLineage) {
		t.Fatalf("Persist of another lineage: err = %v; want ErrLineage", err)
	}
}

func testLockRefusedNamesHolder(t *testing.T, newStorage func(t *testing.T) Storage) {
	ctx := context.Background()
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	id, err := a.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(ctx, state.NewLockInfo("plan"))
	var le *state.LockError
	if !errors.As(err, &le) {
		t.Fatalf("Lock while another manager holds it: err = %v; want a *LockError", err)
	}
	if le.Info.ID != id || le.Info.Operation != "apply" || le.Info.Who == "" || le.Info.Pid == 0 || le.Info.Created.IsZero() {
		t.Errorf("LockError info = %+v; want the holder's (id %s, apply)", le.Info, id)
	}
	want := fmt.Sprintf("state is locked by %s (apply, pid %d, since ", le.Info.Who, le.Info.Pid)
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, ", lock id "+id+")") {
		t.Errorf("message = %q; want it to name the holder", msg)
	}
	if _, ok := b.StaleLock(); ok {
		t.Error("a refused Lock reported a stale lock")
	}
	if err := b.Unlock(id); err == nil {
		t.Error("Unlock by a manager that does not hold the lock succeeded")
	}
	if err := a.Unlock(id); err != nil {
		t.Fatal(err)
	}
	id2, err := b.Lock(ctx, state.NewLockInfo("plan"))
	if err != nil {
		t.Fatalf("Lock after the holder unlocked: %v", err)
	}
	if info, ok := b.StaleLock(); ok {
		t.Errorf("Lock after a clean Unlock reported stale lock %+v", info)
	}
	if err := b.Unlock(id2); err != nil {
		t.Fatal(err)
	}
}

func testLockWaitsForOtherHolder(t *testing.T, newStorage func(t *testing.T) Storage) {
	ctx := context.Background()
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	id, err := a.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = state.LockWithContext(short, b, state.NewLockInfo("plan"))
	cancel()
	var le *state.LockError
	if !errors.As(err, &le) || le.Info.ID != id {
		t.Fatalf("Lock with an expiring deadline: err = %v; want a *LockError naming %s", err, id)
	}
	long, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		id2, err := state.LockWithContext(long, b, state.NewLockInfo("plan"))
		if err == nil {
			err = b.Unlock(id2)
		}
		done <- err
	}()
	if err := a.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting Lock: %v", err)
	}
}

func testForceUnlockRefusesLiveHolder(t *testing.T, newStorage func(t *testing.T) Storage) {
	ctx := context.Background()
	st := newStorage(t)
	a, b := st.Open(t), st.Open(t)
	id, err := a.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	var le *state.LockError
	if _, err := b.ForceUnlock(id); !errors.As(err, &le) {
		t.Errorf("ForceUnlock of a live holder's lock: err = %v; want a refusal with a *LockError", err)
	}
	if _, err := b.ForceUnlock("wrong-" + id); err == nil {
		t.Error("ForceUnlock with a wrong id succeeded")
	}
	if _, err := b.Lock(ctx, state.NewLockInfo("plan")); !errors.As(err, &le) || le.Info.ID != id {
		t.Fatalf("after the refused force-unlocks, Lock: err = %v; want the lock still held by %s", err, id)
	}
	if err := a.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ForceUnlock(id); err == nil {
		t.Error("ForceUnlock of a released lock succeeded")
	}
}

func testKilledHolder(t *testing.T, newStorage func(t *testing.T) Storage) {
	ctx := context.Background()
	st := newStorage(t)
	if st.Kill == nil {
		t.Skip("the storage cannot kill a manager in-process")
	}
	a, b := st.Open(t), st.Open(t)
	if err := a.Persist(Sample()); err != nil {
		t.Fatal(err)
	}
	id, err := a.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(sharedEntry("notification.before_kill")); err != nil {
		t.Fatal(err)
	}
	st.Kill(t, a)
	// The lock died with its holder: Lock succeeds at once and
	// reports what the holder left.
	id2, err := b.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	stale, ok := b.StaleLock()
	if !ok || stale.ID != id || stale.Operation != "apply" {
		t.Errorf("StaleLock = %+v, %v; want the killed holder's lock %s", stale, ok, id)
	}
	if got := mustRead(t, b); got.Messages["notification.before_kill"] == nil {
		t.Error("an entry appended before the kill was lost")
	}
	if err := b.Unlock(id2); err != nil {
		t.Fatal(err)
	}

	// Killed again, the record it leaves is cleared by force-unlock.
	c := st.Open(t)
	id3, err := c.Lock(ctx, state.NewLockInfo("state rm"))
	if err != nil {
		t.Fatal(err)
	}
	st.Kill(t, c)
	if _, err := b.ForceUnlock("wrong-" + id3); err == nil {
		t.Error("ForceUnlock with a wrong id succeeded")
	}
	info, err := b.ForceUnlock(id3)
	if err != nil {
		t.Fatalf("ForceUnlock of a killed holder's lock: %v", err)
	}
	if info.ID != id3 || info.Operation != "state rm" {
		t.Errorf("ForceUnlock returned %+v; want the killed holder's info", info)
	}
	if _, err := b.ForceUnlock(id3); err == nil {
		t.Error("second ForceUnlock succeeded")
	}
	id4, err := b.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := b.StaleLock(); ok {
		t.Errorf("Lock after force-unlock reported stale lock %+v", info)
	}
	if err := b.Unlock(id4); err != nil {
		t.Fatal(err)
	}
}
