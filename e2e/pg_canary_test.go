package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"pushform/internal/testutil"
)

// pwSpellings are the ways a password can appear in text: as is, escaped
// for a URL (query, path, userinfo; either case of hex), quoted as a Go or
// JSON string, and pieces of eight characters of those.
func pwSpellings(pw string) []string {
	q := strconv.Quote(pw)
	j, _ := json.Marshal(pw)
	whole := []string{pw, url.QueryEscape(pw), url.PathEscape(pw), strings.ToLower(url.QueryEscape(pw)),
		url.UserPassword("", pw).String()[1:], q[1 : len(q)-1], string(j[1 : len(j)-1])}
	seen := map[string]bool{}
	var out []string
	for _, s := range whole {
		r := []rune(s)
		for i := 0; i+8 <= len(r); i++ {
			if p := string(r[i : i+8]); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// leaked returns the first spelling of a password found in text, or "".
func leaked(text string, spellings []string) string {
	for _, s := range spellings {
		if strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// startEchoingPG is a fake PostgreSQL server that asks for the password in
// clear text and refuses it with an error that quotes it back, escaped and
// not: a hostile or badly configured server. It returns its address.
func startEchoingPG(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go echoPassword(c)
		}
	}()
	return ln.Addr().String()
}

func echoPassword(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	be := pgproto3.NewBackend(c, c)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := c.Write([]byte("N")); err != nil {
				return
			}
		case *pgproto3.StartupMessage:
			be.Send(&pgproto3.AuthenticationCleartextPassword{})
			if be.Flush() != nil || be.SetAuthType(pgproto3.AuthTypeCleartextPassword) != nil {
				return
			}
			reply, err := be.Receive()
			if err != nil {
				return
			}
			pw := ""
			if p, ok := reply.(*pgproto3.PasswordMessage); ok {
				pw = p.Password
			}
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01",
				Message: fmt.Sprintf("password %s (%s, %q) is wrong for user %s", pw, url.QueryEscape(pw), pw, m.Parameters["user"]),
				Detail:  "you sent " + pw, Hint: pw})
			be.Flush()
			return
		default:
			return
		}
	}
}

// TestPGCanaryPasswordNeverLeaks runs every command that touches the state
// with the connection password a canary: with the right password, with a
// wrong one, against a server that refuses the connection, one that quotes
// the password back in its error, and with connection strings that do not
// parse. No spelling of either password may appear in any output (stdout,
// stderr, PUSHFORM_LOG=debug) or in any file of the campaign directory:
// plan files, the embedded sandbox's devices file, pulled states.
func TestPGCanaryPasswordNeverLeaks(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatalf("the test URL is not a URL: the canary test needs postgres://USER:PASSWORD@HOST/DB")
	}
	realPW, ok := u.User.Password()
	if !ok || realPW == "" {
		t.Fatal("the test URL has no password: the canary test needs one")
	}
	const wrongPW = `wrong-canary P@ss:w/rd%"ü`
	spellings := append(pwSpellings(realPW), pwSpellings(wrongPW)...)
	// The check can fail: it finds the password in the URL that holds it.
	if leaked(p.url, spellings) == "" || leaked(`"`+strconv.Quote(wrongPW)+`"`, spellings) == "" {
		t.Fatal("pwSpellings misses the password as written in a URL or quoted")
	}

	// The embedded sandbox keeps its devices in the campaign directory.
	w := canaryWorkspace(t, p, testKey, "chirp", `  tag      = "hello"
`)

	runs := 0
	check := func(w *workspace, code int, args ...string) result {
		t.Helper()
		r := w.run(args...)
		runs++
		if r.code != code {
			t.Errorf("pushform %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
		if s := leaked(r.stdout+r.stderr, spellings); s != "" {
			t.Errorf("pushform %s printed the password (%q):\n%s%s", strings.Join(args, " "), s, r.stdout, r.stderr)
		}
		return r
	}

	// The right password: every command.
	for _, c := range []struct {
		code int
		args []string
	}{
		{0, []string{"validate"}},
		{0, []string{"plan", "--out", "hello.plan"}},
		{0, []string{"show", "hello.plan"}},
		{0, []string{"show", "hello.plan", "--json"}},
		{0, []string{"show", "hello.plan", "--markdown"}},
		{0, []string{"apply", "hello.plan", "--json"}},
		{0, []string{"apply", "--auto-approve", "--replace", "notification.hello"}},
		{0, []string{"plan", "--detailed-exitcode", "--json"}},
		{0, []string{"show"}},
		{0, []string{"state", "list", "--json"}},
		{0, []string{"state", "show", "notification.hello"}},
		{1, []string{"force-unlock", "--force", "0123456789abcdef"}},
	} {
		check(w, c.code, c.args...)
	}
	// PUSHFORM_LOG=debug logs the connect and the lock, so the checks
	// above read those lines too.
	r := check(w, 0, "apply", "--auto-approve")
	for _, want := range []string{"[DEBUG] PostgreSQL state", ": connected to host=" + u.Hostname() + " port=", " role=" + u.User.Username() + " (server ",
		": lock acquired in ", ": lock released in "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("apply with PUSHFORM_LOG=debug does not log %q:\n%s", want, r.stderr)
		}
	}
	pulled := check(w, 0, "state", "pull")
	if err := os.WriteFile(filepath.Join(w.dir, "pulled.state"), []byte(pulled.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	check(w, 0, "state", "push", "pulled.state")

	// Wrong passwords, servers that refuse, strings that do not parse.
	withPW := func(host, pw string) string {
		v := *u
		v.Host = host
		v.User = url.UserPassword(u.User.Username(), pw)
		return v.String()
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close() // nothing listens there now: connection refused
	host, port, _ := net.SplitHostPort(u.Host)
	kv := func(pw string) string {
		return fmt.Sprintf("host=%s port=%s user=%s dbname=%s password='%s' connect_timeout=10",
			host, port, u.User.Username(), strings.TrimPrefix(u.Path, "/"), strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw))
	}
	bad := []struct{ name, conn, says string }{
		{"wrong password", withPW(u.Host, wrongPW), "password authentication failed"},
		{"wrong password, key=value", kv(wrongPW), "password authentication failed"},
		{"connection refused", withPW(closedAddr, wrongPW), "connect"},
		{"server quoting the password", withPW(startEchoingPG(t), wrongPW), "is wrong for user"},
		{"URL that does not parse", "postgres://" + u.User.Username() + ":" + wrongPW + "@" + host + ":notaport/db", "not a valid postgres:// URL"},
		{"right password, URL that does not parse", "postgres://" + u.User.Username() + ":" + realPW + "@" + host + ":" + port + "/db?sslmode=maybe", "not a valid postgres:// URL"},
	}
	for _, b := range bad {
		wb := *w
		wb.env = append(append([]string(nil), w.env...), "PUSHFORM_PG_CONN_STR="+b.conn)
		for _, args := range [][]string{
			{"plan"},
			{"apply", "--auto-approve"},
			{"apply", "hello.plan"},
			{"show"},
			{"state", "list"},
			{"state", "pull"},
			{"state", "push", "pulled.state"},
			{"force-unlock", "--force", "0123456789abcdef"},
		} {
			r := check(&wb, 1, args...)
			if !strings.Contains(r.stderr, "PostgreSQL state") || !strings.Contains(r.stderr, b.says) {
				t.Errorf("%s, pushform %s: the error must name the state and say %q:\n%s", b.name, strings.Join(args, " "), b.says, r.stderr)
			}
		}
	}

	// No file of the directory holds it either.
	scanned := 0
	err = filepath.WalkDir(w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		if s := leaked(string(data), spellings); s != "" {
			t.Errorf("%s holds the password (%q)", path, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hello.plan", "pushform.sandbox.json", "pulled.state"} {
		if _, err := os.Stat(filepath.Join(w.dir, name)); err != nil {
			t.Errorf("%s was not written: %v", name, err)
		}
	}
	noStateFiles(t, w)
	t.Logf("canary: %d runs (%d with a bad connection), %d files scanned, %d spellings of 2 passwords looked for", runs, len(bad)*8, scanned, len(spellings))
}

// TestPGTriggerQuotingKeyNeverLeaks: a trigger on the journal table raises
// an error quoting the API key (as is and in the forms keyForms makes:
// letter case, base64, invisible characters) and the connection password
// (as is and URL-escaped), in its message, detail and hint. apply fails
// with the server's error, naming the state, and neither secret in any
// form is printed, stored (plan file, the embedded sandbox's devices,
// the state in the database) or sent.
func TestPGTriggerQuotingKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatalf("the test URL is not a URL: the canary test needs postgres://USER:PASSWORD@HOST/DB")
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		t.Fatal("the test URL has no password: the canary test needs one")
	}
	spellings := pwSpellings(pw)
	w := canaryWorkspace(t, p, formsKey, "canary", "")
	check := func(code int, args ...string) result {
		t.Helper()
		r := w.run(args...)
		if r.code != code {
			t.Errorf("pushform %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
		if s := leaked(r.stdout+r.stderr, spellings); s != "" {
			t.Errorf("pushform %s printed the password (%q):\n%s%s", strings.Join(args, " "), s, r.stdout, r.stderr)
		}
		if s := keyLeak(r.stdout+r.stderr, formsKey); s != "" {
			t.Errorf("pushform %s printed %s:\n%s%s", strings.Join(args, " "), s, r.stdout, r.stderr)
		}
		return r
	}
	check(0, "apply", "--auto-approve") // makes the tables
	check(0, "plan", "--replace", "notification.hello", "--out", "again.plan")

	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	leak := "key " + formsKey + " forms " + keyForms(formsKey) + " pw " + pw + " url-pw " + url.QueryEscape(pw)
	journal := pgx.Identifier{p.schema, "journal"}.Sanitize()
	fn := pgx.Identifier{p.schema, "leak"}.Sanitize()
	if _, err := p.db().Exec(context.Background(), `CREATE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', `+quote(leak)+`
    USING DETAIL = `+quote("detail "+strings.ToUpper(formsKey)+" "+pw)+`, HINT = `+quote("hint "+keyForms(formsKey))+`;
END $$;
CREATE TRIGGER leak BEFORE INSERT ON `+journal+` FOR EACH ROW EXECUTE FUNCTION `+fn+`();`); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"apply", "again.plan"},
		{"apply", "--auto-approve", "--replace", "notification.hello"},
		{"apply", "--auto-approve", "--replace", "notification.hello", "--json"},
	} {
		r := check(1, args...)
		if !strings.Contains(r.stdout+r.stderr, "PostgreSQL state") || !strings.Contains(r.stdout+r.stderr, "[redacted]") {
			t.Errorf("pushform %s: the error must name the state and keep the server's message around the secrets:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
		// A database's error is not a full disk (issue 25 item 8).
		if strings.Contains(r.stderr, "Free space") || !strings.Contains(r.stderr, "Fix what the error above names") {
			t.Errorf("pushform %s: the advice after a failed journal write is not the database's:\n%s", strings.Join(args, " "), r.stderr)
		}
		t.Logf("pushform %s:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
	}
	pulled := check(0, "state", "pull")
	check(0, "state", "show", "notification.hello")
	if s := keyLeak(pulled.stdout, formsKey); s != "" {
		t.Errorf("the state holds %s", s)
	}
	// Nothing was sent while the journal refused its entries: alice has
	// the first apply's notification only.
	var devices struct {
		Devices []struct {
			DeviceID string `json:"deviceId"`
			Received int    `json:"received"`
		} `json:"devices"`
	}
	data, err := os.ReadFile(filepath.Join(w.dir, "pushform.sandbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &devices); err != nil {
		t.Fatalf("pushform.sandbox.json: %v", err)
	}
	received := -1
	for _, d := range devices.Devices {
		if d.DeviceID == "alice-phone" {
			received = d.Received
		}
	}
	if received != 1 {
		t.Errorf("alice-phone received %d notifications, want the first apply's one", received)
	}
	err = filepath.WalkDir(w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "sandbox.hcl" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if s := leaked(string(data), spellings); s != "" {
			t.Errorf("%s holds the password (%q)", path, s)
		}
		if s := keyLeak(string(data), formsKey); s != "" {
			t.Errorf("%s holds %s", path, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	noStateFiles(t, w)
}

// canaryWorkspace is a campaign of one notification "hello" to alice
// (body, then the extra attributes), sent through an embedded sandbox
// that takes key, with its state in p and debug logging on.
func canaryWorkspace(t *testing.T, p *pgState, key, body, extra string) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "PF_KEY="+key, "NO_COLOR=1", "PUSHFORM_LOG=debug")}
	testutil.WriteFile(t, w.dir, "main.hcl", `service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PF_KEY"
}

notification "hello" {
  user_ids = ["alice"]
  title    = "Hello"
  body     = "`+body+`"
`+extra+`}
`)
	testutil.WriteFile(t, w.dir, "sandbox.hcl", `api_key "`+key+`" { environment = "test" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
`)
	w.usePG(p)
	return w
}
