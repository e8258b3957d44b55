package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pushform/state"
	"pushform/state/statetest"
)

func TestConformance(t *testing.T) {
	n := 0
	statetest.TestManager(t, func(t *testing.T) state.Manager {
		n++
		return New(fmt.Sprint("test-", n))
	})
}

// TestLockHeld: a second lock is refused while the first is held, and
// ForceUnlock never takes a live run's lock.
func TestLockHeld(t *testing.T) {
	m := New("x")
	id, err := m.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	var le *state.LockError
	if _, err := m.Lock(context.Background(), state.NewLockInfo("plan")); !errors.As(err, &le) || le.Info.Operation != "apply" {
		t.Fatalf("second lock: %v", err)
	}
	if _, err := m.ForceUnlock(id); err == nil {
		t.Fatal("ForceUnlock took a held lock")
	}
	if err := m.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(context.Background(), state.NewLockInfo("plan")); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}
