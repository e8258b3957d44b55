package pg_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// A connection that stops answering mid-run ends the call within the
// statement deadline with an error saying what it waited for; the lock
// goes with the connection, and another run then takes it and finds
// everything recorded before the stall.
func TestHungConnectionEnds(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	o.Timeouts = pg.Timeouts{Statement: 2 * time.Second}
	viaO := o
	p, proxied := pgtest.NewStallProxy(t, o.ConnString)
	viaO.ConnString = proxied
	m := pgtest.Open(t, viaO)
	if err := m.Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(context.Background(), state.NewLockInfo("apply")); err != nil {
		t.Fatal(err)
	}
	intent, _ := statetest.BatchEntries(1, 3)
	if err := m.Append(intent); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	start := time.Now()
	_, outcome := statetest.BatchEntries(1, 3)
	err := m.Append(outcome)
	took := time.Since(start)
	if err == nil {
		t.Fatal("Append through a stalled connection succeeded")
	}
	if want := "did not answer within 4s (statement_timeout 2s, plus 2s for the network)"; !strings.Contains(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want it to say %q", err, want)
	}
	if took > 6*time.Second {
		t.Errorf("Append took %s; want the deadline (4s)", took)
	}
	// Another run (straight to the server) gets the lock once the server
	// has ended the session, and reads the entry recorded before.
	other := pgtest.Open(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := state.LockWithContext(ctx, other, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("the lock outlived the hung connection: %v", err)
	}
	defer other.Unlock(id)
	t.Logf("append failed after %s; the other run had the lock %s after the stall", took, time.Since(start))
	s, err := other.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Messages["campaign.launch.notification.announce"].Targets); n != 3 {
		t.Errorf("%d targets recorded before the stall; want 3", n)
	}
	// Closing the hung Manager does not wait for the server either.
	start = time.Now()
	m.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close took %s", took)
	}
}

// An interrupted run (Ctrl-C) waits only a few seconds for a server that
// does not answer.
func TestHungConnectionInterrupted(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	o.Timeouts = pg.Timeouts{Statement: time.Minute}
	viaO := o
	p, proxied := pgtest.NewStallProxy(t, o.ConnString)
	viaO.ConnString = proxied
	run, interrupt := context.WithCancel(context.Background())
	viaO.Interrupt = run
	m := pgtest.Open(t, viaO)
	p.Stall()
	interrupt()
	start := time.Now()
	err := m.Persist(statetest.Sample())
	if err == nil || !strings.Contains(err.Error(), "interrupted, and the server did not answer within 5s") {
		t.Errorf("err = %v; want it to say it was interrupted", err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("Persist took %s after the interrupt", took)
	}
}

// A server that accepts the connection but never answers is given up on
// after connect_timeout.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	addr := pgtest.Silent(t)
	start := time.Now()
	_, err := pg.Open(context.Background(), pg.Options{ConnString: "postgres://u:hunter2@" + addr + "/db?sslmode=disable",
		Timeouts: pg.Timeouts{Connect: time.Second}})
	if err == nil || !strings.Contains(err.Error(), "connecting: the server did not answer within connect_timeout (1s)") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("Open took %s; want about connect_timeout", took)
	}
}

// A transaction left open on the state's row is reported with its
// session and the statement that ends it, after lock_timeout.
func TestOpenTransactionReported(t *testing.T) {
	url := pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	o.Timeouts = pg.Timeouts{Lock: 300 * time.Millisecond}
	m := pgtest.Open(t, o)
	s := statetest.Sample()
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+pgx.Identifier{o.Schema, "states"}.Sanitize()+" WHERE name = $1 FOR UPDATE", o.StateName); err != nil {
		t.Fatal(err)
	}
	// The role is the URL's (or libpq's default for a URL without one):
	// any server and role the tests are pointed at.
	pid, role := conn.PgConn().PID(), conn.Config().User
	start := time.Now()
	err = m.Persist(s)
	if err == nil {
		t.Fatal("Persist succeeded while another transaction holds the row")
	}
	for _, want := range []string{"waited lock_timeout (300ms) for the state's row, which another transaction holds",
		fmt.Sprintf("backend pid %d (user %s", pid, role), fmt.Sprintf("SELECT pg_terminate_backend(%d);", pid)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Persist took %s; want about lock_timeout", took)
	}
	tx.Rollback(ctx)
	if err := m.Persist(s); err != nil {
		t.Fatalf("Persist once the transaction ended: %v", err)
	}
}

// deadPid returns the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a process: %v", err)
	}
	return cmd.Process.Pid
}

// A lock whose process has ended while its server session lingers (its
// last statement still running) is reported with the session's backend
// pid and the statement to run; force-unlock ends the session.
func TestLingeringSessionLock(t *testing.T) {
	url := pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	m := pgtest.Open(t, o)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The lingering session: it holds the advisory lock and its row says
	// a process of this machine that no longer exists took it.
	info := state.NewLockInfo("apply").ForNewLock()
	info.Pid = deadPid(t)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, pg.LockKey(m)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO "+pgx.Identifier{o.Schema, "locks"}.Sanitize()+
		` (state_name, lock_id, who, operation, created, pid, backend_pid) VALUES ($1, $2, $3, $4, $5, $6, pg_backend_pid())`,
		o.StateName, info.ID, info.Who, info.Operation, info.Created, int32(info.Pid)); err != nil {
		t.Fatal(err)
	}
	backendPid := conn.PgConn().PID()
	_, err = m.Lock(ctx, state.NewLockInfo("apply"))
	var le *state.LockError
	if !errors.As(err, &le) {
		t.Fatalf("Lock: %v; want a *LockError", err)
	}
	for _, want := range []string{fmt.Sprintf("server session (backend pid %d) still holds the lock", backendPid),
		fmt.Sprintf("SELECT pg_terminate_backend(%d);", backendPid), "pushform force-unlock --force " + info.ID} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
	}
	got, err := m.ForceUnlock(info.ID)
	if err != nil || got.ID != info.ID {
		t.Fatalf("ForceUnlock = %+v, %v", got, err)
	}
	id, err := m.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock after force-unlock: %v", err)
	}
	m.Unlock(id)
	if err := conn.Ping(ctx); err == nil {
		t.Error("the lingering session survived force-unlock")
	}
}

// Every session is bounded as the backend block says, with defaults for
// what it leaves out, and what the connection string sets itself wins.
func TestSessionBounds(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o := pgtest.Options(t)
	o.Timeouts = pg.Timeouts{Statement: 90 * time.Second, Keepalive: 45 * time.Second, CheckInterval: 3 * time.Second}
	m := pgtest.Open(t, o)
	want := map[string]string{
		"statement_timeout": "90s", "lock_timeout": "10s", "idle_in_transaction_session_timeout": "92s",
		"client_connection_check_interval": "3s", "tcp_keepalives_idle": "45", "tcp_keepalives_interval": "15", "tcp_keepalives_count": "3",
		"application_name": "pushform",
	}
	for name, w := range want {
		if got, err := pg.Show(m, name); err != nil || got != w {
			t.Errorf("%s = %q, %v; want %q", name, got, err, w)
		}
	}
	o.ConnString += "&statement_timeout=5000"
	if !strings.Contains(o.ConnString, "?") {
		o.ConnString = strings.Replace(o.ConnString, "&", "?", 1)
	}
	o.Timeouts.CheckInterval = pg.Disabled
	m = pgtest.Open(t, o)
	if got, err := pg.Show(m, "statement_timeout"); err != nil || got != "5s" {
		t.Errorf("statement_timeout from the connection string = %q, %v; want 5s", got, err)
	}
	if got, err := pg.Show(m, "client_connection_check_interval"); err != nil || got != "0" {
		t.Errorf("client_connection_check_interval when disabled = %q, %v; want the server's 0", got, err)
	}
}
