package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

func TestManagerConformance(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	statetest.TestManager(t, func(t *testing.T) state.Manager {
		return pgtest.Open(t, pgtest.Options(t))
	})
}

// TestManagerCompactConformance runs it reading compact states, as plan
// and apply do.
func TestManagerCompactConformance(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	statetest.TestManager(t, func(t *testing.T) state.Manager {
		return statetest.Compact(t, pgtest.Open(t, pgtest.Options(t)))
	})
}

func TestSharedConformance(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	statetest.TestShared(t, func(t *testing.T) statetest.Storage {
		o := pgtest.Options(t)
		return statetest.Storage{
			Open: func(t *testing.T) statetest.Backend { return pgtest.Open(t, o) },
			Kill: func(t *testing.T, m statetest.Backend) { kill(t, m.(*pg.Manager)) },
		}
	})
}

// kill terminates m's server process from another connection, as the
// server does when a runner is killed, and waits until it is gone.
func kill(t *testing.T, m *pg.Manager) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_terminate_backend($1, 20000)`, int32(pg.BackendPID(m))).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminating the holder's connection: %v, %v", ok, err)
	}
}
