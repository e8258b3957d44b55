package pg_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// A role granted only SELECT reads the state, takes no lock and writes
// nothing; everything that writes is refused with what the role lacks.
func TestReadOnlyRole(t *testing.T) {
	url := pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	rw := pgtest.Open(t, o) // creates the tables
	want := statetest.Sample()
	if err := rw.Persist(want); err != nil {
		t.Fatal(err)
	}
	if rw.ReadOnly() != nil {
		t.Fatalf("the test role is taken for read-only: %v", rw.ReadOnly())
	}
	ro := o
	ro.ConnString = pgtest.ReadOnlyRole(t, o.Schema)
	m := pgtest.Open(t, ro)
	roErr := m.ReadOnly()
	if roErr == nil || !strings.Contains(roErr.Error(), "can only read this state (it lacks INSERT on states, UPDATE on states, INSERT on journal, DELETE on journal, INSERT on locks, UPDATE on locks, DELETE on locks)") {
		t.Fatalf("ReadOnly = %v", roErr)
	}
	got, err := m.Read()
	if err != nil || got == nil || got.Serial != want.Serial {
		t.Fatalf("Read with the read-only role = %v, %v", got, err)
	}
	if _, err := m.ReadCompact(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Lock(ctx, state.NewLockInfo("apply")); !errors.Is(err, roErr) {
		t.Errorf("Lock = %v; want the read-only refusal", err)
	}
	intent, _ := statetest.BatchEntries(1, 2)
	if err := m.Append(intent); !errors.Is(err, roErr) {
		t.Errorf("Append = %v; want the read-only refusal", err)
	}
	if err := m.Persist(got); !errors.Is(err, roErr) {
		t.Errorf("Persist = %v; want the read-only refusal", err)
	}
	if _, err := m.ForceUnlock("x"); !errors.Is(err, roErr) {
		t.Errorf("ForceUnlock = %v; want the read-only refusal", err)
	}
	// Reading took no lock: a writer locks and writes meanwhile.
	id, err := rw.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("the writer's Lock while the reader is open: %v", err)
	}
	defer rw.Unlock(id)
	if err := rw.Append(intent); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Read(); err != nil || s.Messages["campaign.launch.notification.announce"] == nil {
		t.Errorf("the reader does not see the writer's entries: %v", err)
	}
	// Opening with the role does not try to create what exists.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var locks int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{o.Schema, "locks"}.Sanitize()).Scan(&locks); err != nil || locks != 1 {
		t.Errorf("%d lock rows (%v); want the writer's only", locks, err)
	}
	// A schema whose tables do not exist cannot be created by the role.
	other := ro
	other.Schema = pgtest.Schema(t)
	if _, err := pg.Open(ctx, other); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Open of a missing schema with the read-only role: %v", err)
	}
}
