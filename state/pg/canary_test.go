package pg_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/secret"
	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// leaks returns the spellings of pw, and pieces of five characters of
// them, found in text.
func leaks(text, pw string) []string {
	q := strconv.Quote(pw)
	var found []string
	for _, sp := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), strings.ToLower(url.QueryEscape(pw)), q[1 : len(q)-1]} {
		r := []rune(sp)
		for i := 0; i+5 <= len(r); i++ {
			if piece := string(r[i : i+5]); strings.Contains(text, piece) {
				found = append(found, piece)
			}
		}
	}
	return found
}

// withPassword returns rawURL with its password replaced by pw.
func withPassword(t *testing.T, rawURL, pw string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("%s is not a URL: the canary test needs postgres://USER:PASSWORD@HOST/DB", pgtest.EnvURL)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// TestCanaryPasswordNeverInErrors provokes every error it can and checks
// that no spelling of the connection password is in any of them.
func TestCanaryPasswordNeverInErrors(t *testing.T) {
	t.Parallel()
	base := pgtest.URL(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	realPW := cfg.Password
	if realPW == "" {
		t.Fatalf("%s has no password: the canary test needs one", pgtest.EnvURL)
	}
	const canary = `canary-P@ss:w/rd%"ü`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var msgs []string
	add := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		msgs = append(msgs, what+": "+err.Error())
	}

	// Refused before or at the connection, with the canary as password.
	badPW := withPassword(t, base, canary)
	_, err = pg.Open(ctx, pg.Options{ConnString: badPW, Schema: pgtest.Schema(t), StateName: "x"})
	add("bad password", err)
	_, err = pg.Open(ctx, pg.Options{ConnString: badPW, Schema: "bad-schema;drop", StateName: "x"})
	add("bad schema name", err)
	_, err = pg.Open(ctx, pg.Options{ConnString: strings.Replace(badPW, "@", "@@", 1) + ":x:y", Schema: "s"})
	add("malformed URL", err)
	_, err = pg.Open(ctx, pg.Options{ConnString: strings.Replace(badPW, "127.0.0.1:5432", "127.0.0.1:badport", 1), Schema: "s"})
	add("bad port", err)
	_, err = pg.Open(ctx, pg.Options{ConnString: "postgres://u:" + canary + "%zz@127.0.0.1/db", Schema: "s"})
	add("bad escape in the password", err)
	_, err = pg.Open(ctx, pg.Options{ConnString: "host=127.0.0.1 port=notaport password='" + canary + "'", Schema: "s"})
	add("malformed key=value", err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down, _ := url.Parse(badPW)
	down.Host = l.Addr().String()
	l.Close()
	_, err = pg.Open(ctx, pg.Options{ConnString: down.String(), Schema: "s"})
	add("server down", err)
	short, cancelShort := context.WithTimeout(ctx, time.Nanosecond)
	<-short.Done()
	_, err = pg.Open(short, pg.Options{ConnString: badPW, Schema: "s"})
	cancelShort()
	add("deadline", err)
	for _, m := range msgs {
		if l := leaks(m, canary); len(l) > 0 {
			t.Errorf("%s\n  holds the password as %q", m, l)
		}
	}
	t.Logf("messages checked:\n%s", strings.Join(msgs, "\n"))

	// Refused by a live state, with the real password (itself a canary in
	// CI): lock refused, stale append, force-unlock refused, lost
	// connection.
	msgs = nil
	o := pgtest.Options(t)
	a, b := pgtest.Open(t, o), pgtest.Open(t, o)
	msgs = append(msgs, a.String())
	id, err := a.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(context.Background(), state.NewLockInfo("apply")) // one try
	add("lock refused", err)
	_, err = b.ForceUnlock(id)
	add("force-unlock refused", err)
	if err := a.Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	s, err := b.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Persist(s); err != nil {
		t.Fatal(err)
	}
	add("stale append", a.Append(state.Entry{Type: state.EntryForget}))
	add("stale persist", a.Persist(statetest.Sample()))
	kill(t, a)
	add("connection lost", a.Append(state.Entry{Type: state.EntryForget}))
	var le *state.LockError
	_, err = b.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := b.StaleLock(); !ok || info.ID != id {
		t.Errorf("StaleLock = %+v, %v", info, ok)
	}
	if errors.As(err, &le) {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if l := leaks(m, realPW); len(l) > 0 {
			t.Errorf("%s\n  holds the password as %q", m, l)
		}
	}
	t.Logf("messages checked:\n%s", strings.Join(msgs, "\n"))
}

// TestTriggerQuotingKeyAndPassword: a trigger on the journal table raises
// an error quoting the API key (as is, lower-cased, base64-encoded, split
// by zero-width spaces) and the connection password (as is and
// URL-escaped). The Manager is given the key through Redact, as a run
// gives it: the error holds neither.
func TestTriggerQuotingKeyAndPassword(t *testing.T) {
	t.Parallel()
	const key = "k-test-CANARY-0123456789"
	o := pgtest.Options(t)
	realPW, err := pgx.ParseConfig(o.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	pw := realPW.Password
	o.Redact = secret.NewSet(key).String
	m := pgtest.Open(t, o)
	if err := m.Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, o.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	zw := strings.Join(strings.Split(key, ""), "\u200b")
	b64 := base64.StdEncoding.EncodeToString([]byte("x" + key))
	schema := pgx.Identifier{o.Schema}.Sanitize()
	_, err = conn.Exec(ctx, `CREATE FUNCTION `+schema+`.leak() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'key % lower % b64 % zw % pw % url-pw %', `+quote(key)+`, `+quote(strings.ToLower(key))+`, `+quote(b64)+`, `+quote(zw)+`, `+quote(pw)+`, `+quote(url.QueryEscape(pw))+`
    USING DETAIL = 'again ' || `+quote(strings.ToUpper(key))+`, HINT = `+quote(key)+`;
END $$;
CREATE TRIGGER leak BEFORE INSERT ON `+schema+`.journal FOR EACH ROW EXECUTE FUNCTION `+schema+`.leak();`)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Append(state.Entry{Type: state.EntryForget})
	if err == nil {
		t.Fatal("the trigger did not fire")
	}
	msg := err.Error()
	if !strings.Contains(msg, "key [redacted] lower [redacted]") {
		t.Errorf("the server's message is not kept around the secrets: %s", msg)
	}
	folded := strings.ToLower(strings.ReplaceAll(msg, "\\u200b", ""))
	for _, bad := range []string{strings.ToLower(key), strings.ToLower(b64[4:20])} {
		if strings.Contains(folded, bad) {
			t.Errorf("the error holds the key (%q): %s", bad, msg)
		}
	}
	if l := leaks(msg, pw); len(l) > 0 {
		t.Errorf("the error holds the password as %q: %s", l, msg)
	}
	t.Log(msg)
}
