package pg_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// openPersisted opens a Manager on a schema of its own and persists a new
// state there, which most tests start from.
func openPersisted(t *testing.T) (pg.Options, *pg.Manager, *state.State) {
	t.Helper()
	o := pgtest.Options(t)
	m := pgtest.Open(t, o)
	s := state.New("test")
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	return o, m, s
}

// Concurrent appenders share commits, and every entry lands in the order
// its caller saw it committed: the state read back is the one recorded.
func TestAppendConcurrent(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o, m, s := openPersisted(t)
	rec := state.NewRecorder(m, s)
	const workers, batches = 10, 30
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				intent, outcome := statetest.BatchEntries(w*batches+i, 20)
				if err := rec.Record(intent); err != nil {
					t.Error(err)
					return
				}
				if err := rec.Record(outcome); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := pgtest.Open(t, o).Read()
	if err != nil {
		t.Fatal(err)
	}
	rec.Read(func(want *state.State) {
		if !reflect.DeepEqual(got, want) {
			t.Fatal("the state read back differs from the one recorded")
		}
	})
	msg := got.Messages["campaign.launch.notification.announce"]
	if n := len(msg.Targets); n != workers*batches*20 {
		t.Fatalf("%d targets; want %d", n, workers*batches*20)
	}
	for id, tg := range msg.Targets {
		if tg.Outcome != state.Delivered {
			t.Fatalf("target %s is %s: an outcome was replayed before its intent", id, tg.Outcome)
		}
	}
}

// Processes opening a schema that does not exist yet all succeed.
func TestOpenCreatesSchemaOnce(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := pg.Open(context.Background(), o)
			if err == nil {
				err = m.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
}

func TestStringAndDir(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	o.StateName = "marketing \"eu\""
	m := pgtest.Open(t, o)
	if want := `PostgreSQL state "marketing \"eu\"" (schema ` + o.Schema + `)`; m.String() != want {
		t.Errorf("String = %q; want %q", m.String(), want)
	}
	if m.Dir() != "" {
		t.Errorf("Dir = %q; want \"\" (the configuration directory)", m.Dir())
	}
	// States of one schema are separate, locks included.
	o.StateName = "other"
	other := pgtest.Open(t, o)
	if err := m.Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	if s, err := other.Read(); err != nil || s != nil {
		t.Errorf("another state name reads %v, %v; want nothing", s, err)
	}
	id, err := m.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	id2, err := other.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock of another state name: %v", err)
	}
	m.Unlock(id)
	other.Unlock(id2)
}

func TestOpenRefusesBadNames(t *testing.T) {
	for _, o := range []pg.Options{
		{ConnString: "postgres://u@127.0.0.1/db", Schema: "1abc"},
		{ConnString: "postgres://u@127.0.0.1/db", Schema: "pg_catalog"},
		{ConnString: "postgres://u@127.0.0.1/db", Schema: `a"b`},
		{ConnString: "postgres://u@127.0.0.1/db", StateName: "a\x1bb"},
		{ConnString: "postgres://u@127.0.0.1/db", StateName: " "},
		{ConnString: "", Schema: "ok"},
	} {
		_, err := pg.Open(context.Background(), o)
		if err == nil {
			t.Errorf("Open(%+v) succeeded", o)
			continue
		}
		if strings.ContainsAny(err.Error(), "\x1b") {
			t.Errorf("error holds a control character: %q", err)
		}
	}
}

const lockChildEnv = "PUSHFORM_PG_TEST_LOCK_CHILD"

// TestLockChildProcess is the child of TestLockReleasedOnKill: it takes the
// lock, says so, and waits to be killed.
func TestLockChildProcess(t *testing.T) {
	spec := os.Getenv(lockChildEnv)
	if spec == "" {
		t.Skip("helper process for TestLockReleasedOnKill")
	}
	schema, name, _ := strings.Cut(spec, "/")
	statetest.HoldLock(func() (string, error) {
		m, err := pg.Open(context.Background(), pg.Options{ConnString: os.Getenv(pgtest.EnvURL), Schema: schema, StateName: name})
		if err != nil {
			return "", err
		}
		return m.Lock(context.Background(), state.NewLockInfo("apply"))
	})
}

// A holder killed with SIGKILL runs no cleanup: the server releases its
// lock when it sees the connection close.
func TestLockReleasedOnKill(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	m := pgtest.Open(t, o) // creates the schema
	h := statetest.StartLockHolder(t, "TestLockChildProcess", lockChildEnv+"="+o.Schema+"/"+o.StateName)
	childID := h.ID
	h.CheckRefused(t, m)
	var le *state.LockError
	if _, err := m.ForceUnlock(childID); !errors.As(err, &le) {
		t.Fatalf("ForceUnlock while the child holds it: err = %v; want a refusal", err)
	}

	h.Kill(t)
	// The server ends the child's session as soon as it reads the closed
	// socket; waiting for the lock (as --lock-timeout does) waits for that.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := state.LockWithContext(ctx, m, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	if stale, ok := m.StaleLock(); !ok || stale.ID != childID || stale.Pid != h.Cmd.Process.Pid {
		t.Errorf("StaleLock = %+v, %v; want the killed child's lock", stale, ok)
	}
	if err := m.Unlock(id); err != nil {
		t.Fatal(err)
	}
}
