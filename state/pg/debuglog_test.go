package pg_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// lines collects debug lines.
type lines struct {
	mu         sync.Mutex
	all, every []string // since the last take, and since the start
}

func (l *lines) log(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
	l.every = append(l.every, s)
}

func (l *lines) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.all
	l.all = nil
	return out
}

// TestDebugLog: Options.Log gets the connect (host, port, database, role,
// server, duration; never the password) and each lock taken, refused,
// acquired after a wait and released, with durations.
func TestDebugLog(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	var a, b lines
	oa, ob := pgtest.Options(t), pgtest.Options(t)
	ob.Schema = oa.Schema
	oa.Log, ob.Log = a.log, b.log
	ma, mb := pgtest.Open(t, oa), pgtest.Open(t, ob)

	dur := `[0-9.]+(µs|ms|s)`
	connect := regexp.MustCompile(`^PostgreSQL state "\w+" \(schema \w+\): connected to host=` + regexp.QuoteMeta(u.Hostname()) +
		` port=` + u.Port() + ` database=` + regexp.QuoteMeta(strings.TrimPrefix(u.Path, "/")) + ` role=` + regexp.QuoteMeta(u.User.Username()) +
		` \(server [0-9.]+.*\) in ` + dur + `$`)
	if got := a.take(); len(got) != 1 || !connect.MatchString(got[0]) {
		t.Errorf("connect lines %q; want one matching %s", got, connect)
	}
	b.take()

	id, err := ma.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.take(); len(got) != 1 || !regexp.MustCompile(`: lock acquired in `+dur+`$`).MatchString(got[0]) {
		t.Errorf("lock lines %q", got)
	}
	// b waits for it: one line when refused, one when acquired.
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := state.LockWithContext(ctx, mb, state.NewLockInfo("plan"))
		done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		l := b.take()
		if len(l) > 0 {
			if len(l) != 1 || !strings.Contains(l[0], ": lock held by ") || !strings.Contains(l[0], "(apply, lock id "+id+")") {
				t.Errorf("refusal lines %q", l)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no line for the refused lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := ma.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if got := a.take(); len(got) != 1 || !regexp.MustCompile(`: lock released in `+dur+`, held for `+dur+`$`).MatchString(got[0]) {
		t.Errorf("unlock lines %q", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.take(); len(got) != 1 || !regexp.MustCompile(`: lock acquired after waiting `+dur+`$`).MatchString(got[0]) {
		t.Errorf("lines after the wait %q", got)
	}

	// A URL whose password the server refuses: the failure is logged,
	// without the password.
	bad := *u
	bad.User = url.UserPassword(u.User.Username(), "wrong-"+pgtest.Schema(t))
	var c lines
	if _, err := pg.Open(context.Background(), pg.Options{ConnString: bad.String(), Schema: oa.Schema, Log: c.log}); err == nil {
		t.Fatal("a wrong password connected")
	}
	got := c.take()
	if len(got) != 1 || !strings.Contains(got[0], "failed after") || strings.Contains(got[0], "wrong-") {
		t.Errorf("failed connect lines %q", got)
	}
	pw, _ := u.User.Password()
	for _, l := range [][]string{a.every, b.every, got} {
		for _, line := range l {
			if strings.Contains(line, pw) {
				t.Errorf("a line holds the password: %q", line)
			}
		}
	}
}
