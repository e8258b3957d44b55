package pg_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// A refused Lock names the holder only from the holder's own row. Between
// taking the advisory lock and writing its row, a holder leaves the row
// missing, or a dead holder's row in place: naming that one would send
// the user after the wrong process.
func TestRefusedLockNamesOnlyTheCurrentHolder(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	m := pgtest.Open(t, o) // creates the schema
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, o.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	locks := pgx.Identifier{o.Schema, "locks"}.Sanitize()
	// A dead holder's row (its server process is long gone), and a live
	// session holding the advisory lock that has not written its row.
	if _, err := holder.Exec(ctx, `INSERT INTO `+locks+` VALUES ($1, 'dead', 'ghost@gone', 'apply', now(), 4242, 2147483000)`, o.StateName); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, pg.LockKey(m)); err != nil {
		t.Fatal(err)
	}
	var le *state.LockError
	_, err = m.Lock(ctx, state.NewLockInfo("apply"))
	if !errors.As(err, &le) {
		t.Fatalf("Lock while another session holds it: %v", err)
	}
	if le.Info.ID != "" || le.Info.Pid != 0 || le.Error() != "state is locked by another process (its lock info is not readable)" {
		t.Fatalf("the refusal names %+v (%v); the dead holder's row is not the holder's", le.Info, err)
	}

	// Once the holder has written its row, it is named.
	if _, err := holder.Exec(ctx, `UPDATE `+locks+` SET lock_id = 'live', who = 'ana@ci-7', pid = 77, backend_pid = pg_backend_pid() WHERE state_name = $1`, o.StateName); err != nil {
		t.Fatal(err)
	}
	_, err = m.Lock(ctx, state.NewLockInfo("apply"))
	if !errors.As(err, &le) || le.Info.ID != "live" || le.Info.Who != "ana@ci-7" || le.Info.Pid != 77 {
		t.Fatalf("Lock while the live holder's row is written: %v (%+v)", err, le)
	}

	// Released: the next Lock takes it, and reports the row left.
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, pg.LockKey(m)); err != nil {
		t.Fatal(err)
	}
	id, err := m.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if stale, ok := m.StaleLock(); !ok || stale.ID != "live" {
		t.Errorf("StaleLock = %+v, %v", stale, ok)
	}
	if err := m.Unlock(id); err != nil {
		t.Fatal(err)
	}
}
