package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state/pg/pgtest"
)

// setPGBackend rewrites w's backend block for p with extra attributes
// (timeouts).
func (w *workspace) setPGBackend(p *pgState, extra string) {
	w.t.Helper()
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n%s}\n", p.schema, p.name, extra)
	if err := os.WriteFile(filepath.Join(w.dir, pgBackendFile), []byte(block), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// TestPGHungConnectionMidApply: the network to PostgreSQL stops forwarding
// in the middle of an apply. The apply ends with an error naming what it
// waited for within the configured deadline; the lock goes with its
// connection, so the other checkout then applies; nothing is lost and
// nothing is shown twice.
func TestPGHungConnectionMidApply(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, crashSeed, "--latency", "100ms", "--quiet")
	campaign := crashCampaign(1)
	a := newPGWorkspace(t, sb, campaign, p)
	b := newPGWorkspace(t, sb, campaign, p)
	proxy, via := pgtest.NewStallProxy(t, p.url)
	a.setPGBackend(p, "  statement_timeout = \"3s\"\n")
	a.env = append(a.env, "PUSHFORM_PG_CONN_STR="+via) // the last one counts

	before := sb.stats().SendRequests
	proc := a.startProc("apply", "--auto-approve", "--parallelism", "4")
	waitUntil(t, 2*time.Minute, "A's apply sending 6 requests", func() bool { return sb.stats().SendRequests >= before+6 })
	proxy.Stall()
	stalled := time.Now()
	code := proc.wait(time.Minute)
	took := time.Since(stalled)
	errText := proc.stderr.String()
	if code != 1 || !strings.Contains(errText, "the server did not answer within 5s (statement_timeout 3s, plus 2s for the network)") {
		t.Fatalf("A's apply through the stalled network: exit %d; want 1 with the deadline named:\n%s", code, errText)
	}
	// The deadline of one call, and the work in progress saved or given
	// up at once (the connection is known lost).
	if took > 12*time.Second {
		t.Errorf("A's apply took %s after the network stalled; want about the 5s deadline", took)
	}
	sent := sb.stats().SendRequests - before

	r := b.mustRun(0, "apply", "--auto-approve", "--parallelism", "4", "--lock-timeout", "30s")
	plan := b.mustRun(0, "plan", "--detailed-exitcode", "--json")
	au := auditCrashTargets(t, p, sb, plan.stdout)
	noStateFiles(t, a, b)
	summary := fmt.Sprintf("pg network stalled mid-apply after %d requests: A ended %s after the stall (exit %d); B then applied (%d lines of output). "+
		"%d targets: delivered %d, lost %d, shown twice %d, unknown untagged held %d",
		sent, took.Round(100*time.Millisecond), code, strings.Count(r.stdout, "\n"), au.targets, au.delivered, au.lost, au.dups, au.held)
	t.Log(summary)
	fmt.Println(summary)
}

// TestPGConnectNeverAnswered: a server that accepts the connection and
// never answers ends plan and apply after connect_timeout, before
// anything is sent.
func TestPGConnectNeverAnswered(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, crashSeed, "--quiet")
	// A small campaign: the time measured is the connection's, not the
	// evaluation of a large configuration on a busy machine.
	w := newWorkspace(t, sb, `
notification "hello" {
  user_ids = ["u00001", "u00002"]
  title    = "Hello"
  body     = "World"
}
`)
	w.setPGBackend(&pgState{schema: "pushform", name: "team"}, "  connect_timeout = \"2s\"\n")
	w.env = append(w.env, "PUSHFORM_PG_CONN_STR=postgres://team:hunter2@"+pgtest.Silent(t)+"/push?sslmode=disable")
	for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}} {
		start := time.Now()
		r := w.run(args...)
		took := time.Since(start)
		if r.code != 1 || !strings.Contains(r.stderr, "connecting: the server did not answer within connect_timeout (2s)") {
			t.Errorf("%s: exit %d; want 1 naming connect_timeout:\n%s", args[0], r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "hunter2") {
			t.Errorf("%s: the error shows the password:\n%s", args[0], r.stderr)
		}
		t.Logf("%s took %s", args[0], took)
		if took > 10*time.Second {
			t.Errorf("%s took %s; want about connect_timeout (2s)", args[0], took)
		}
	}
	if n := sb.stats().SendRequests; n != 0 {
		t.Errorf("%d send requests reached the sandbox", n)
	}
}

// TestPGKillDuringSlowStatement: apply is killed while its first journal
// write runs a slow statement on the server. The server ends the session
// within connection_check_interval; an apply from the other checkout right
// after either proceeds or names the lingering session's backend pid and
// the statement that ends it. Then nothing is lost or shown twice.
func TestPGKillDuringSlowStatement(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, crashSeed, "--latency", "100ms", "--quiet")
	campaign := crashCampaign(1)
	a := newPGWorkspace(t, sb, campaign, p)
	b := newPGWorkspace(t, sb, campaign, p)
	a.mustRun(0, "plan") // creates the tables
	s := pgx.Identifier{p.schema}.Sanitize()
	ctx := context.Background()
	// The first statement that writes journal rows sleeps 20 s (a
	// sequence, since the killed statement's writes are rolled back).
	for _, q := range []string{
		`CREATE SEQUENCE ` + s + `.slow_once`,
		`CREATE FUNCTION ` + s + `.slow_once() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF nextval('` + s + `.slow_once') = 1 THEN PERFORM pg_sleep(20); END IF; RETURN NULL; END $$`,
		`CREATE TRIGGER slow_once AFTER INSERT ON ` + s + `.journal FOR EACH STATEMENT EXECUTE FUNCTION ` + s + `.slow_once()`,
	} {
		if _, err := p.db().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	proc := a.startProc("apply", "--auto-approve", "--parallelism", "4")
	var backendPid int32
	waitUntil(t, time.Minute, "A's journal write sleeping on the server", func() bool {
		err := p.db().QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND application_name = 'pushform'`).Scan(&backendPid)
		return err == nil
	})
	if !proc.kill(syscall.SIGKILL) {
		t.Fatalf("A's apply ended before the kill:\n%s", proc.stderr)
	}
	killed := time.Now()
	goneAfter := make(chan time.Duration, 1)
	go func() { goneAfter <- p.waitSessionGone(int(backendPid)) }()
	r := b.run("apply", "--auto-approve", "--parallelism", "4")
	afterKill := time.Since(killed)
	outcome := "proceeded"
	switch {
	case r.code == 0:
	case r.code == 1 && strings.Contains(r.stderr, fmt.Sprintf("server session (backend pid %d) still holds the lock", backendPid)) &&
		strings.Contains(r.stderr, fmt.Sprintf("SELECT pg_terminate_backend(%d);", backendPid)):
		outcome = "named the lingering session"
		b.mustRun(0, "apply", "--auto-approve", "--parallelism", "4", "--lock-timeout", "30s")
	default:
		t.Fatalf("the apply right after the kill: exit %d; want 0, or 1 naming backend pid %d and the statement to run:\n%s", r.code, backendPid, r.stderr)
	}
	gone := <-goneAfter
	plan := b.mustRun(0, "plan", "--detailed-exitcode", "--json")
	au := auditCrashTargets(t, p, sb, plan.stdout)
	summary := fmt.Sprintf("pg kill -9 during a 20 s statement: the server ended the session %s after the kill; the apply right after (done %s after the kill) %s. "+
		"%d targets: delivered %d, lost %d, shown twice %d",
		gone.Round(time.Millisecond), afterKill.Round(time.Millisecond), outcome, au.targets, au.delivered, au.lost, au.dups)
	t.Log(summary)
	fmt.Println(summary)
}

// TestPGReadOnlyRole: a pull request's commands run with a role that may
// only read the state: plan, show --markdown and state list/show succeed
// and leave no lock row; apply is refused before anything is sent.
func TestPGReadOnlyRole(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, crashSeed, "--quiet")
	campaign := crashCampaign(1)
	a := newPGWorkspace(t, sb, campaign, p)
	a.apply("--parallelism", "4")
	b := newPGWorkspace(t, sb, campaign+"\nnotification \"from_pr\" {\n  user_ids = [\"u00001\"]\n  title    = \"PR\"\n  body     = \"from a pull request\"\n}\n", p)
	b.env = append(b.env, "PUSHFORM_PG_CONN_STR="+pgtest.ReadOnlyRole(t, p.schema)) // the last one counts
	before := sb.stats().SendRequests

	b.mustRun(2, "plan", "--detailed-exitcode", "--out", "pr.plan")
	if md := b.mustRun(0, "show", "--markdown", "pr.plan"); !strings.Contains(md.stdout, "notification.from_pr") {
		t.Errorf("show --markdown does not show the change:\n%s", md.stdout)
	}
	b.mustRun(0, "state", "list")
	b.mustRun(0, "state", "show", "notification.tagged_w0")
	if _, _, found := p.lockRow(); found {
		t.Error("a read-only run left a lock row")
	}
	for _, args := range [][]string{{"apply", "--auto-approve"}, {"apply", "pr.plan"}} {
		r := b.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "apply refused: PostgreSQL state") || !strings.Contains(r.stderr, "can only read this state (it lacks INSERT on states") {
			t.Errorf("%s with the read-only role: exit %d; want 1 with the refusal:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if n := sb.stats().SendRequests - before; n != 0 {
		t.Errorf("%d send requests reached the sandbox from the read-only checkout", n)
	}
	// The team's role applies what the pull request planned.
	a.write(campaign+"\nnotification \"from_pr\" {\n  user_ids = [\"u00001\"]\n  title    = \"PR\"\n  body     = \"from a pull request\"\n}\n", sb)
	a.apply()
	b.mustRun(0, "plan", "--detailed-exitcode")
}
