package e2e

import (
	"encoding/json"
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
	h.setMode("hang")
	for len(h.requests) > 0 {
		<-h.requests
	}
	p := w.startProc("apply", "--auto-approve", "--replace", "notification.tagged")
	// Wait for the send to arrive; fail with what apply said if it exits
	// first, and with a message (not a hang) if nothing comes.
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

// checkFiles fails when a file in dir contains the key or is readable by
// others than its owner (pushform's files; the test's own main.hcl aside).
func checkFiles(t *testing.T, dir, when string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "main.hcl" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), testKey) {
			t.Errorf("%s: the key is in %s", when, d.Name())
		}
		fi, _ := d.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %s has mode %v, want 0600", when, d.Name(), fi.Mode().Perm())
		}
		return nil
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
