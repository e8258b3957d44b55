// Package e2e drives the real pushform binary against a real `pushform
// sandbox` on loopback, as a user and a CI job would.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/planner"
)

// binary is the pushform built for this test run.
var binary string

func TestMain(m *testing.M) {
	// The quick inner loop (go test -short ./...) skips the whole package
	// before building the binary: every test here runs it, and the package
	// takes minutes.
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped with -short (run go test ./e2e for the end-to-end tests)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "pushform-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "pushform")
	// The race runtime sleeps a second before every exit of the binary
	// under test; these tests run it hundreds of times.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	build := exec.Command("go", "build", "-race", "-o", binary, "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pushform:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sandbox is a running `pushform sandbox` process.
type sandbox struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT/v1
	root string // http://127.0.0.1:PORT
}

// startSandbox runs the sandbox binary with seed and extra flags until the
// test ends.
func startSandbox(t *testing.T, seed string, flags ...string) *sandbox {
	t.Helper()
	dir := t.TempDir()
	seedPath := filepath.Join(dir, "seed.hcl")
	if err := os.WriteFile(seedPath, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, append([]string{"sandbox", "--addr", "127.0.0.1:0", "--seed", seedPath}, flags...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("sandbox did not start: %v\n%s", err, stderr.String())
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("unexpected first line %q", line)
	}
	go io.Copy(io.Discard, stdout)
	return &sandbox{t: t, base: base, root: strings.TrimSuffix(base, "/v1")}
}

// deviceView is the part of GET /_sandbox/devices/{id} the tests read.
type deviceView struct {
	DeviceID string `json:"deviceId"`
	Badge    *int   `json:"badge"`
	Received int    `json:"received"`
	Inbox    []struct {
		Title, Body, Tag, RequestID string
	} `json:"inbox"`
}

func (s *sandbox) device(id string) deviceView {
	s.t.Helper()
	var v deviceView
	s.get("/_sandbox/devices/"+id, &v)
	return v
}

type stats struct {
	SendRequests int `json:"sendRequests"`
	Targets      int `json:"targets"`
	Deliveries   int `json:"deliveries"`
}

func (s *sandbox) stats() stats {
	s.t.Helper()
	var st stats
	s.get("/_sandbox/stats", &st)
	return st
}

func (s *sandbox) get(path string, v any) {
	s.t.Helper()
	resp, err := http.Get(s.root + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
}

func (s *sandbox) patch(device, body string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, s.root+"/_sandbox/devices/"+device, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		s.t.Fatalf("PATCH %s: %d", device, resp.StatusCode)
	}
}

// workspace is a configuration directory wired to a sandbox.
type workspace struct {
	t   *testing.T
	dir string
	env []string
	pg  *pgState // the state in PostgreSQL (usePG); nil: pushform.state
}

const testKey = "k-test-canary-0123456789"

// service is what a workspace's service block names: a sandbox process
// (base_url) or the embedded sandbox (see embedded).
type service interface {
	// serviceBlock is the service block of a workspace in dir.
	serviceBlock(dir string) string
}

func (s *sandbox) serviceBlock(string) string {
	return fmt.Sprintf("service {\n  base_url    = %q\n  api_key_env = \"PF_KEY\"\n  environment = \"test\"\n}\n\n", s.base)
}

// newWorkspace writes main.hcl (the campaign part) after a service block
// naming sb.
func newWorkspace(t *testing.T, sb service, campaign string) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "PF_KEY="+testKey, "NO_COLOR=1")}
	w.write(campaign, sb)
	return w
}

func (w *workspace) write(campaign string, sb service) {
	w.t.Helper()
	svc := sb.serviceBlock(w.dir)
	if err := os.WriteFile(filepath.Join(w.dir, "main.hcl"), []byte(svc+campaign), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func (w *workspace) run(args ...string) result {
	w.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	r := result{out.String(), errb.String(), code}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, testKey) {
			w.t.Fatalf("the API key leaked into the output of %v:\n%s", args, s)
		}
	}
	return r
}

// mustRun runs and fails the test unless the exit code is want.
func (w *workspace) mustRun(want int, args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != want {
		w.t.Fatalf("pushform %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

func (w *workspace) apply(args ...string) result {
	w.t.Helper()
	return w.mustRun(0, append([]string{"apply", "--auto-approve"}, args...)...)
}

// planJSON runs plan --json and decodes it.
func (w *workspace) planJSON(args ...string) planDoc {
	w.t.Helper()
	p, _ := planAs[planDoc](w, args...)
	return p
}

// planAs runs plan --json with args and decodes it into a T, the fields a
// test reads; it also returns the output, for messages.
func planAs[T any](w *workspace, args ...string) (T, string) {
	w.t.Helper()
	r := w.mustRun(0, append([]string{"plan", "--json"}, args...)...)
	var p T
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		w.t.Fatalf("plan --json: %v\n%s", err, r.stdout)
	}
	return p, r.stdout
}

// savedPlan runs plan --out and reads the saved plan back.
func (w *workspace) savedPlan(args ...string) planner.Plan {
	w.t.Helper()
	w.mustRun(0, append([]string{"plan", "--out", "p.plan"}, args...)...)
	b, err := os.ReadFile(filepath.Join(w.dir, "p.plan"))
	if err != nil {
		w.t.Fatal(err)
	}
	var p planner.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		w.t.Fatal(err)
	}
	return p
}

type planDoc struct {
	FormatVersion string `json:"format_version"`
	Changes       []struct {
		Address string `json:"address"`
		Action  string `json:"action"`
		Targets counts `json:"targets"`
	} `json:"changes"`
	Summary  counts   `json:"summary"`
	Warnings []string `json:"warnings"`
}

func (p planDoc) action(addr string) (string, map[string]int) {
	for _, c := range p.Changes {
		if c.Address == addr {
			return c.Action, c.Targets
		}
	}
	return "", nil
}

// counts are the counts of an object whose other keys are not (the plan's
// summary holds reach, an object).
type counts map[string]int

func (c *counts) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*c = counts{}
	for k, v := range all {
		var n int
		if json.Unmarshal(v, &n) == nil {
			(*c)[k] = n
		}
	}
	return nil
}
