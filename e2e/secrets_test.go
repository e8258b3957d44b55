package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// hostileService is a fake service on loopback that answers in one way,
// echoing the API key it is sent everywhere it can: body, x-request-id,
// error messages, results, recipient ids.
type hostileService struct {
	*httptest.Server
	mode     atomic.Value // string
	requests chan string  // the path of every request, as it arrives
	// forms, when set, echoes the key in other forms instead (keyForms).
	forms atomic.Bool
}

func startHostile(t *testing.T) *hostileService {
	t.Helper()
	h := &hostileService{requests: make(chan string, 100)}
	h.mode.Store("ok")
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *hostileService) setMode(m string) { h.mode.Store(m) }

func (h *hostileService) base() *sandbox { return &sandbox{base: h.URL + "/v1", root: h.URL} }

func (h *hostileService) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("x-api-key")
	if h.forms.Load() {
		key = keyForms(key)
	}
	body, _ := io.ReadAll(r.Body)
	select {
	case h.requests <- r.URL.Path:
	default:
	}
	mode := h.mode.Load().(string)
	w.Header().Set("x-request-id", "req-"+key)
	if strings.HasSuffix(r.URL.Path, "/recipients") {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode([]string{"alice", "bob", key})
		return
	}
	// The send body names its targets; answer each, echoing the key.
	var req []struct {
		UserIDs []string `json:"userIds"`
	}
	json.Unmarshal(body, &req)
	results := func(outcome string) []map[string]any {
		var out []map[string]any
		for _, n := range req {
			for _, u := range n.UserIDs {
				e := map[string]any{"userId": u, "status": outcome}
				switch outcome {
				case "delivered":
					e["deviceCount"] = 1
				case "failed":
					e["message"] = "device rejected key " + key
				case "skipped":
					e["reason"] = "no_active_device " + key
				}
				out = append(out, e)
			}
		}
		return out
	}
	switch mode {
	case "ok":
		w.WriteHeader(200)
		json.NewEncoder(w).Encode(map[string]any{"results": results("delivered"), "echo": key})
	case "207":
		w.WriteHeader(207)
		json.NewEncoder(w).Encode(map[string]any{"results": results("failed")})
	case "skipped":
		w.WriteHeader(200)
		json.NewEncoder(w).Encode(map[string]any{"results": results("skipped")})
	case "401":
		w.WriteHeader(401)
		io.WriteString(w, `{"message":"invalid API key `+key+`"}`)
	case "400":
		w.WriteHeader(400)
		io.WriteString(w, `{"issues":[{"path":[0,"title"],"message":"bad key `+key+`"},{"unexpected":"`+key+`"}]}`)
	case "400-text":
		w.WriteHeader(400)
		io.WriteString(w, "you sent "+key)
	case "500":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(500)
		io.WriteString(w, "<html><head><title>Error for "+key+"</title></head><body>"+key+"</body></html>")
	case "503":
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
		io.WriteString(w, "overloaded, key "+key)
	case "garbage":
		w.WriteHeader(200)
		io.WriteString(w, `{"results": "`+key+`"`)
	case "drop":
		if hj, ok := w.(http.Hijacker); ok {
			conn, buf, _ := hj.Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nx-request-id: " + key + "\r\nContent-Length: 100\r\n\r\n{\"results\":")
			buf.Flush()
			conn.Close()
		}
	case "trickle": // slow loris: headers at once, then a byte a second
		w.WriteHeader(200)
		for range 60 {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}
}

// TestKeyNeverLeaks runs plan and apply against a service that echoes the
// API key in every answer, on every path (success, 207, 400, 401, 5xx,
// dropped connections, unreadable bodies, a kill mid-request), and checks
// that the key appears in no output and no file pushform writes, and that
// those files are readable by their owner only.
func TestKeyNeverLeaks(t *testing.T) {
	h := startHostile(t)
	w := newWorkspace(t, h.base(), `
data "recipients" "all" {}

notification "everyone" {
  user_ids = data.recipients.all.user_ids
  title    = "To all"
  body     = "Hello"
}

notification "tagged" {
  user_ids = ["alice", "carol"]
  title    = "Tagged"
  body     = "Hello"
  tag      = "t"
}
`)
	// w.run fails the test as soon as the key shows in stdout or stderr.
	for _, mode := range []string{"ok", "207", "skipped", "401", "400", "400-text", "500", "503", "garbage", "drop"} {
		h.setMode(mode)
		w.run("plan", "--out", "saved.plan")
		w.run("show", "saved.plan")
		w.run("show", "saved.plan", "--json")
		w.run("apply", "--auto-approve", "--max-attempts", "2", "--retry-delay", "10ms")
		r := w.run("apply", "--auto-approve", "--json", "--replace", "notification.tagged", "--max-attempts", "2", "--retry-delay", "10ms")
		t.Logf("%s: apply exit %d\nstdout: %.600s\nstderr: %.600s", mode, r.code, r.stdout, r.stderr)
		if mode != "ok" && mode != "skipped" && r.code == 0 {
			t.Errorf("%s: apply exited 0\n%s", mode, r.stdout)
		}
		w.run("apply", "saved.plan")
		w.run("state", "list")
		w.run("state", "show", "notification.everyone")
		w.run("state", "show", "notification.tagged", "--json")
		w.run("recipients")
		w.run("recipients", "--json")
		checkFiles(t, w.dir, mode)
	}

	// Killed while a request is in flight: the journal is left behind.
	p := killedMidSend(t, w, h, "notification.tagged")
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.journal")); err != nil {
		t.Fatalf("no journal after a kill: %v", err)
	}
	checkFiles(t, w.dir, "killed")
	for _, s := range []string{p.stdout.String(), p.stderr.String()} {
		if strings.Contains(s, testKey) {
			t.Fatalf("the key leaked into the output of a killed apply:\n%s", s)
		}
	}
	h.setMode("ok")
	r := w.run("apply", "--auto-approve")
	if !strings.Contains(r.stderr, "ended without releasing it") {
		t.Errorf("the killed holder is not reported:\n%s", r.stderr)
	}
	checkFiles(t, w.dir, "after recovery")

	// A key mistaken for a URL part is not echoed either.
	for _, base := range []string{
		"https://user:" + testKey + "@push.example.invalid/v1",
		"https://push.example.invalid/v1?key=" + testKey,
		"https://push.example.invalid/v1#" + testKey,
		"https://push.example.invalid/" + testKey,
		"https://push.example.invalid/v1\x7f" + testKey,
		"ftp://push.example.invalid/" + testKey,
	} {
		w.env = append(w.env, "PUSHFORM_BASE_URL="+base)
		r := w.run("apply", "--auto-approve")
		w.env = w.env[:len(w.env)-1]
		if r.code != 1 || !strings.Contains(r.stderr, "base URL") {
			t.Errorf("base URL %q: exit %d\n%s", strings.ReplaceAll(base, testKey, "KEY"), r.code, r.stderr)
		}
	}
}

// formsKey is the key of the tests of other forms: in both letter cases,
// so that lower- and upper-casing change it.
const formsKey = "Pf-CANARY-key-0123456789-AbC"

// keyForms is key as a hostile or careless service may echo it: lower-
// and upper-cased, base64- and base64url-encoded (at each of the three
// alignments within a longer encoded string), split by zero-width spaces
// and by soft hyphens.
func keyForms(key string) string {
	split := func(sep string) string { return strings.Join(strings.Split(key, ""), sep) }
	return strings.Join([]string{
		strings.ToLower(key),
		strings.ToUpper(key),
		base64.StdEncoding.EncodeToString([]byte(key)),
		base64.RawURLEncoding.EncodeToString([]byte("x" + key)),
		base64.StdEncoding.EncodeToString([]byte("ab" + key + "c")),
		split("\u200b"),
		split("\u00ad"),
	}, " ")
}

// keyLeak names the form of key that text holds, or is "". It is written
// apart from the redactor it checks: letter case folded, invisible
// characters (raw or escaped as termtext and JSON escape them) dropped,
// and the part of each base64 encoding that does not depend on what comes
// before or after the key.
func keyLeak(text, key string) string {
	norm := text
	for _, inv := range []string{"\u200b", "\u00ad", `\u200b`, `\u00ad`, `\u200B`, `\u00AD`} {
		norm = strings.ReplaceAll(norm, inv, "")
	}
	if strings.Contains(strings.ToLower(norm), strings.ToLower(key)) {
		return "the key, in some letter case or split by invisible characters"
	}
	for pad := range 3 {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00", pad) + key))
		mid := enc[4 : len(enc)-4]
		for _, m := range []string{mid, strings.NewReplacer("+", "-", "/", "_").Replace(mid)} {
			if strings.Contains(text, m) {
				return fmt.Sprintf("the key base64-encoded (alignment %d)", pad)
			}
		}
	}
	return ""
}

// checkKeyLeak checks that keyLeak finds each form keyForms makes (the
// check can fail), then that no file of dir holds any form of key.
func checkKeyForms(t *testing.T, dir, key, when string) {
	t.Helper()
	for _, f := range strings.Fields(keyForms(key)) {
		if keyLeak("x"+f+"x", key) == "" {
			t.Fatalf("keyLeak misses the form %q", f)
		}
	}
	eachOutput(t, dir, func(d fs.DirEntry, b []byte) {
		if s := keyLeak(string(b), key); s != "" {
			t.Errorf("%s: %s is in %s", when, s, d.Name())
		}
	})
}

// eachOutput calls fn with every file pushform left in dir and its
// content (the test's own main.hcl aside).
func eachOutput(t *testing.T, dir string, fn func(d fs.DirEntry, b []byte)) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "main.hcl" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fn(d, b)
		return nil
	})
}

// TestKeyFormsNeverLeak: a service echoing the key lower- and upper-cased,
// base64-encoded and split by invisible characters, in every answer, on
// the paths that store or print what it says (results and their messages,
// request ids, error bodies, recipient ids): no form of the key is printed
// or stored (state, its backup, journal, plan file), a killed apply's
// journal included.
func TestKeyFormsNeverLeak(t *testing.T) {
	h := startHostile(t)
	h.forms.Store(true)
	w := newWorkspace(t, h.base(), `
data "recipients" "all" {}

notification "everyone" {
  user_ids = data.recipients.all.user_ids
  title    = "To all"
  body     = "Hello"
}
`)
	w.env = append(w.env, "PF_KEY="+formsKey) // the last one wins
	runs := 0
	run := func(args ...string) result {
		t.Helper()
		r := w.run(args...)
		runs++
		if s := keyLeak(r.stdout+r.stderr, formsKey); s != "" {
			t.Errorf("pushform %s printed %s:\n%s%s", strings.Join(args, " "), s, r.stdout, r.stderr)
		}
		return r
	}
	for _, mode := range []string{"ok", "207", "skipped", "400", "401", "500"} {
		h.setMode(mode)
		run("plan", "--out", "saved.plan")
		run("show", "saved.plan")
		r := run("apply", "--auto-approve", "--json", "--replace", "notification.everyone", "--max-attempts", "1")
		if (mode == "ok" || mode == "skipped") != (r.code == 0) {
			t.Errorf("%s: apply exited %d\n%s%s", mode, r.code, r.stdout, r.stderr)
		}
		run("apply", "saved.plan", "--max-attempts", "1")
		run("state", "show", "notification.everyone")
		run("recipients")
		checkKeyForms(t, w.dir, formsKey, mode)
	}
	// The check can fail: what the service says reached the state.
	h.setMode("207")
	run("apply", "--auto-approve", "--replace", "notification.everyone", "--max-attempts", "1")
	if r := run("state", "show", "notification.everyone"); !strings.Contains(r.stdout, "device rejected key") {
		t.Errorf("the service's message is not in the state:\n%s", r.stdout)
	}

	// Killed while a request is in flight: the journal left behind holds
	// the intents (their recipient ids) and not a form of the key.
	p := killedMidSend(t, w, h, "notification.everyone")
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.journal")); err != nil {
		t.Fatalf("no journal after a kill: %v", err)
	}
	if s := keyLeak(p.stdout.String()+p.stderr.String(), formsKey); s != "" {
		t.Errorf("a killed apply printed %s", s)
	}
	checkKeyForms(t, w.dir, formsKey, "killed")
	h.setMode("ok")
	run("apply", "--auto-approve")
	checkKeyForms(t, w.dir, formsKey, "after recovery")
	t.Logf("%d runs, 6 answers and a kill", runs)
}

// TestKeyInValuesNeverSent: a configuration whose values hold the key
// (a variable set to it, lower-cased, base64url-encoded, split by
// zero-width spaces) is refused before anything is sent, each value named
// with its file and line and none shown; nothing reaches a device.
func TestKeyInValuesNeverSent(t *testing.T) {
	sb := startSandbox(t, strings.ReplaceAll(seed, testKey, formsKey))
	w := newWorkspace(t, sb, `
variable "k" { default = "" }
variable "z" { default = "" }
variable "b" { default = "" }

notification "n" {
  user_ids = ["alice"]
  title    = var.k
  body     = "Hello"
}

notification "m" {
  user_ids = ["bob"]
  title    = "Hi"
  body     = "your code: ${lower(var.k)}"
}

notification "o" {
  user_ids = ["alice"]
  title    = "Hi"
  body     = "b"
  tag      = var.b
}

notification "p" {
  user_ids = ["bob"]
  title    = var.z
  body     = "b"
}
`)
	zw := strings.Join(strings.Split(formsKey, ""), "\u200b")
	w.env = append(w.env, "PF_KEY="+formsKey, "PUSHFORM_VAR_k="+formsKey, "PUSHFORM_VAR_z="+zw,
		"PUSHFORM_VAR_b="+base64.RawURLEncoding.EncodeToString([]byte("x"+formsKey)))
	for _, args := range [][]string{{"validate"}, {"plan"}, {"plan", "--out", "x.plan"}, {"apply", "--auto-approve"}, {"validate", "--json"}} {
		r := w.run(args...)
		if r.code != 1 {
			t.Errorf("pushform %s: exit %d, want 1\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		if s := keyLeak(r.stdout+r.stderr, formsKey); s != "" {
			t.Errorf("pushform %s printed %s:\n%s%s", strings.Join(args, " "), s, r.stdout, r.stderr)
		}
		if args[len(args)-1] == "--json" {
			continue
		}
		for _, want := range []string{
			"The API key (PF_KEY) appears in title", "main.hcl line 14",
			"The API key (PF_KEY) appears in body", "main.hcl line 21",
			"The API key (PF_KEY) appears in tag", "main.hcl line 28",
			"main.hcl line 33",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("pushform %s does not say %q:\n%s", strings.Join(args, " "), want, r.stderr)
			}
		}
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Errorf("%d send requests reached the service", st.SendRequests)
	}
	for _, d := range []string{"alice-phone", "bob-phone"} {
		if v := sb.device(d); len(v.Inbox) != 0 {
			t.Errorf("%s received %d notifications", d, len(v.Inbox))
		}
	}
	if _, err := os.Stat(filepath.Join(w.dir, "x.plan")); err == nil {
		t.Error("a plan file was written")
	}
	checkKeyForms(t, w.dir, formsKey, "refused")
}

// checkFiles fails when a file in dir contains the key or is readable by
// others than its owner (pushform's files; the test's own main.hcl aside).
func checkFiles(t *testing.T, dir, when string) {
	t.Helper()
	eachOutput(t, dir, func(d fs.DirEntry, b []byte) {
		if strings.Contains(string(b), testKey) {
			t.Errorf("%s: the key is in %s", when, d.Name())
		}
		fi, _ := d.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %s has mode %v, want 0600", when, d.Name(), fi.Mode().Perm())
		}
	})
}

// TestPlainHTTPRefused: a key never travels in clear text to another host.
func TestPlainHTTPRefused(t *testing.T) {
	w := newWorkspace(t, &sandbox{base: "http://push.example.invalid/v1"}, `
notification "n" {
  user_ids = ["alice"]
  title    = "T"
  body     = "B"
}
`)
	// validate catches it in the configuration, pointing at the line.
	r := w.mustRun(1, "validate")
	if !strings.Contains(r.stderr, "main.hcl line 2") || !strings.Contains(r.stderr, "plain http:// to push.example.invalid, which is not loopback: use https://") {
		t.Fatalf("validate:\n%s", r.stderr)
	}
	// The client refuses it too, for a URL from PUSHFORM_BASE_URL.
	w.write(`
notification "n" {
  user_ids = ["alice"]
  title    = "T"
  body     = "B"
}
`, &sandbox{base: "https://push.example.invalid/v1"})
	w.env = append(w.env, "PUSHFORM_BASE_URL=http://push.example.invalid/v1")
	r = w.mustRun(1, "apply", "--auto-approve")
	w.env = w.env[:len(w.env)-1]
	want := "uses plain http:// to push.example.invalid, which is not loopback: use https://"
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "push.example.invalid") {
		t.Fatalf("want %q:\n%s", want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.journal")); err == nil {
		t.Fatal("a journal was written although nothing could be sent")
	}
	w.env = append(w.env, "PUSHFORM_BASE_URL=http://127.0.0.1:1/v1")
	r = w.mustRun(1, "apply", "--auto-approve", "--max-attempts", "1")
	if strings.Contains(r.stderr, "plain http://") || !strings.Contains(r.stderr, "connection refused") {
		t.Fatalf("loopback http:// must be allowed (and fail to connect here):\n%s", r.stderr)
	}
}

// killedMidSend runs apply --replace addr against h made to hang, waits
// for its send request to arrive and kills it there: the journal is left
// behind with the request's intent. It fails with what apply said if
// apply exits first, and with a message (not a hang) if nothing comes.
func killedMidSend(t *testing.T, w *workspace, h *hostileService, addr string) *proc {
	t.Helper()
	h.setMode("hang")
	for len(h.requests) > 0 {
		<-h.requests
	}
	p := w.startProc("apply", "--auto-approve", "--replace", addr)
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for sent := false; !sent; {
		select {
		case path := <-h.requests:
			sent = strings.HasSuffix(path, "/send")
		case <-p.done:
			t.Fatalf("apply exited before sending:\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		case <-guard.C:
			p.kill(syscall.SIGKILL)
			t.Fatalf("no send request reached the service within a minute:\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	}
	if !p.kill(syscall.SIGKILL) {
		t.Fatalf("apply was not killed:\n%s", p.stderr)
	}
	return p
}
