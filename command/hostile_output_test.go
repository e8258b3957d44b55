package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"pushform/internal/testutil"
	"pushform/message"
	"pushform/sandbox"
	"pushform/state"
	"pushform/state/local"
	"pushform/termtext"
)

// Hostile text as a configuration or a server supplies it: a terminal
// title change and screen clear, a bell, a right-to-left override, a NUL,
// a C1 control and a line separator.
const (
	evilOSC  = "a\u001b]0;owned\u0007\u001b[2J"
	evilBidi = "b\u202ex"
	evilNUL  = "u\u0000x"
	evilText = "T\u0007 \u001b[31mred\u001b[0m \u202eevil \u0085 \u2028 \u2066end"
)

// assertTerminalSafe fails when out holds a byte below 0x20 other than
// newline and tab, DEL, a C1 control, a bidi control, a line separator or
// invalid UTF-8: anything termtext shows escaped.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s is not UTF-8:\n%q", what, out)
		return
	}
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || termtext.Unsafe(r) {
			t.Errorf("%s has %U at byte %d:\n%q", what, r, i, out[max(0, i-60):min(len(out), i+60)])
			return
		}
	}
}

// hostileSeed is a sandbox whose user and device ids hold control
// characters and a bidi override, and one of whose devices fails every
// delivery with a message holding them too.
const hostileSeed = `
api_key "k-test" { environment = "test" }
user "a\u001b]0;owned\u0007\u001b[2J" {
  device "d\u001b[2Jphone" { environment = "test" }
}
user "b\u202ex" {
  device "d2" {
    environment = "test"
    fail        = "bad\u001b[31m token\r\n\u202e"
  }
}
user "c" {
  device "dc" { environment = "test" }
}
`

// hostileCampaign is a configuration whose addresses (for_each keys),
// ids, titles, bodies, tags and URLs hold control characters.
const hostileCampaign = `
variable "greeting" {
  default = "hi\u001b[5m\u202e"
}

data "recipients" "all" {}

notification "hello" {
  for_each = { "k\u001b[2J" = "T\u0007 \u001b[31mred", "k\u202e2" = "\u2066x\u2028y\u0085z" }
  user_ids = data.recipients.all.user_ids
  title    = each.value
  body     = "${var.greeting} \u001b]8;;http://evil\u0007link"
  tag      = "t\u001b[1m${each.key}"
}

notification "plain" {
  user_ids    = ["c", "u\u0000x"]
  title       = "U\u0085"
  body        = "x\u2066y"
  open_to_url = "https://shop.example.com/\u202e"
}

badge "b" {
  device_ids  = ["dc", "d\u001b[2Jphone"]
  badge_count = 1
}
`

// TestHostileOutputEveryCommand runs every human command over a hostile
// configuration and a hostile sandbox (issue 16, must show): validate,
// plan, show (a plan file and the state), apply, state list, show, rm and
// repair, recipients, force-unlock, the stale-lock warning and sandbox
// show. No output may hold a raw control character or bidi control.
func TestHostileOutputEveryCommand(t *testing.T) {
	base, _ := testutil.StartSandbox(t, hostileSeed, sandbox.Options{})
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceAt(base) + hostileCampaign})
	// Addresses quote their keys: the escapes are part of them.
	hostileAddr := `notification.hello["k\x1b[2J"]`
	bidiAddr := `notification.hello["k\u202e2"]`
	statePath := filepath.Join(dir, "pushform.state")

	type step struct {
		args []string
		code int
		want string // in stdout or stderr, escaped
		// before prepares the step.
		before func(t *testing.T)
	}
	evilLock := func(t *testing.T) {
		info := state.LockInfo{ID: "lock\x1b[2J1", Who: "mallory\x1b]0;x\x07@host\u202e", Operation: "apply\x07", Pid: 42, Created: time.Now()}
		data, _ := json.Marshal(info)
		if err := os.WriteFile(statePath+".lock.info", data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damageJournal := func(t *testing.T) {
		f := local.NewFile(statePath)
		st, err := f.Read()
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{evilOSC, evilBidi, evilNUL}
		if err := f.Append(state.Entry{Type: state.EntryIntent, Time: time.Now().UTC(), Items: []state.Item{{Address: `notification.x["` + evilText + `"]`,
			Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp\x1b", Content: &message.Content{Title: evilText}, Targets: ids}}}); err != nil {
			t.Fatal(err)
		}
		_ = st
		data, _ := os.ReadFile(f.JournalPath())
		last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
		data[last+10] ^= 0x20
		os.WriteFile(f.JournalPath(), data, 0o600)
	}
	devAddr := strings.TrimPrefix(base, "http://")
	for _, s := range []step{
		{args: []string{"validate"}, code: 0},
		{args: []string{"plan"}, code: 0, want: `T\a \x1b[31mred`},
		{args: []string{"plan", "--out", "h.plan"}, code: 0},
		{args: []string{"show", "h.plan"}, code: 0, want: `k\x1b[2J`},
		{args: []string{"apply", "--auto-approve"}, code: 1, want: `bad\x1b[31m token\r\n\u202e`},
		{args: []string{"show"}, code: 0, want: `\u202e`},
		{args: []string{"state", "list"}, code: 0, want: `k\x1b[2J`},
		{args: []string{"state", "show", hostileAddr}, code: 0, want: `a\x1b]0;owned\a\x1b[2J`},
		{args: []string{"state", "show", "notification.plain"}, code: 0, want: `u\x00x`},
		{args: []string{"state", "show", `notification.none["` + evilText + `"]`}, code: 1, want: `\u202eevil`},
		{args: []string{"recipients"}, code: 0, want: `b\u202ex`},
		{args: []string{"sandbox", "show", "--addr", devAddr, "d\x1b[2Jphone"}, code: 0, want: `d\x1b[2Jphone`},
		{args: []string{"sandbox", "show", "--addr", devAddr, "d\u202enone"}, code: 1},
		{args: []string{"state", "rm", bidiAddr}, code: 0, want: `k\u202e2`},
		{args: []string{"plan"}, code: 0, want: `mallory\x1b]0;x\a@host\u202e`, before: evilLock},
		{args: []string{"force-unlock", "--force", "lock\x1b[2J1"}, code: 0, want: `lock\x1b[2J1`, before: evilLock},
		{args: []string{"state", "repair"}, code: 0, want: "nothing to repair"},
		{args: []string{"state", "list"}, code: 1, want: "state repair", before: damageJournal},
		{args: []string{"state", "repair"}, code: 1, want: "--force"},
		{args: []string{"state", "repair", "--force"}, code: 0, want: "Moved line"},
	} {
		if s.before != nil {
			s.before(t)
		}
		code, stdout, stderr := runCLI(t, dir, Env{}, s.args...)
		what := fmt.Sprintf("%q", s.args)
		if code != s.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, code, s.code, stdout, stderr)
		}
		assertTerminalSafe(t, what+" stdout", stdout)
		assertTerminalSafe(t, what+" stderr", stderr)
		if s.want != "" && !strings.Contains(stdout+stderr, s.want) {
			t.Errorf("%s: output lacks %q:\n%s\n%s", what, s.want, stdout, stderr)
		}
	}

	// A configuration that does not validate, with control characters in
	// the lines its diagnostics quote.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "main.hcl"), []byte(testutil.ServiceAt(base)+"notification \"n\x1b[2J\" {\n  title = \"\x1b]0;owned\x07\u202e\"\n  nope = 1\n}\n# \x1b[31m\u202e\x00\n"), 0o600)
	for _, args := range [][]string{{"validate"}, {"plan"}, {"apply", "--auto-approve"}} {
		code, stdout, stderr := runCLI(t, bad, Env{}, args...)
		if code != 1 || !strings.Contains(stderr, "main.hcl") {
			t.Errorf("%q on a bad configuration: exit %d\n%s", args, code, stderr)
		}
		assertTerminalSafe(t, fmt.Sprintf("%q stdout (bad configuration)", args), stdout)
		assertTerminalSafe(t, fmt.Sprintf("%q stderr (bad configuration)", args), stderr)
	}
}

// hostileServer answers like the service, with control characters and
// bidi controls in everything it says: request ids, recipient ids, skip
// reasons, failure messages, 400 issues, error bodies.
func hostileServer(t *testing.T) (string, *atomic.Value) {
	t.Helper()
	var mode atomic.Value
	mode.Store("207")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// Go's HTTP client refuses ASCII controls in a header: the
		// request id carries what it lets through.
		w.Header().Set("x-request-id", "req-\u202e\u0085x")
		if strings.HasSuffix(r.URL.Path, "/recipients") {
			json.NewEncoder(w).Encode([]string{evilOSC, evilBidi, evilNUL, "ok"})
			return
		}
		var req []struct {
			UserIDs []string `json:"userIds"`
		}
		json.Unmarshal(body, &req)
		switch mode.Load().(string) {
		case "207":
			var results []map[string]any
			for _, n := range req {
				for i, u := range n.UserIDs {
					e := map[string]any{"userId": u}
					switch i % 3 {
					case 0:
						e["status"], e["deviceCount"] = "delivered", 1
					case 1:
						e["status"], e["reason"] = "skipped", "no_active_device\x1b[2J\u202e"
					default:
						e["status"], e["message"] = "failed", "bad\x1b[31m\u202e token\r\n\x00"
					}
					results = append(results, e)
				}
			}
			w.WriteHeader(207)
			json.NewEncoder(w).Encode(map[string]any{"results": results})
		case "400":
			w.WriteHeader(400)
			io.WriteString(w, `{"issues":[{"path":[0,"title"],"message":"bad \u001b[2J title \u202e"},{"odd":"\u0007"}]}`)
		case "500":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			io.WriteString(w, "<html>\x1b]0;owned\x07 \u202eerror\x00</html>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &mode
}

// TestHostileServerOutput runs recipients, plan, apply, show and state
// show against a server whose every word holds control characters, in
// each of its answers: a 207 with hostile outcomes, a 400 with hostile
// issues, a 500 with a hostile page (issue 16, must show).
func TestHostileServerOutput(t *testing.T) {
	base, mode := hostileServer(t)
	dir := t.TempDir()
	svc := testutil.ServiceAt(base)
	campaign := `
data "recipients" "all" {}
notification "n" {
  user_ids = data.recipients.all.user_ids
  title    = "T"
  body     = "B"
  tag      = "t"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(svc+campaign), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		mode string
		args []string
		code int
		want string
	}{
		{"207", []string{"recipients"}, 0, `a\x1b]0;owned\a\x1b[2J`},
		{"207", []string{"plan"}, 0, `u\x00x`},
		{"207", []string{"apply", "--auto-approve"}, 1, `bad\x1b[31m\u202e token\r\n\x00`},
		{"207", []string{"show"}, 0, "notification.n"},
		{"207", []string{"state", "show", "notification.n"}, 0, `no_active_device\x1b[2J\u202e`},
		{"400", []string{"apply", "--auto-approve", "--replace", "notification.n"}, 1, "title: bad"}, // pushapi drops controls from issues
		{"500", []string{"apply", "--auto-approve", "--replace", "notification.n", "--max-attempts", "1"}, 1, "500"},
	} {
		mode.Store(s.mode)
		code, stdout, stderr := runCLI(t, dir, Env{}, s.args...)
		what := fmt.Sprintf("%s: %q", s.mode, s.args)
		if code != s.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, code, s.code, stdout, stderr)
		}
		assertTerminalSafe(t, what+" stdout", stdout)
		assertTerminalSafe(t, what+" stderr", stderr)
		if !strings.Contains(stdout+stderr, s.want) {
			t.Errorf("%s: output lacks %q:\n%s\n%s", what, s.want, stdout, stderr)
		}
	}
}
