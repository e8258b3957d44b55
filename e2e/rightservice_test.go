package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/pg"
)

// Never the sandbox by accident (issue 37): every output names the
// service, an empty PUSHFORM_BASE_URL is an error, production against the
// sandbox warns, and a state records the service its deliveries went to
// and refuses another. The figures before this change are in the
// comments (main at 276d97f).

// copyExample copies examples/name into a new workspace, without what an
// earlier run there left.
func copyExample(t *testing.T, name string, env ...string) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), env: append(append(os.Environ(), "NO_COLOR=1"), env...)}
	if err := os.CopyFS(w.dir, os.DirFS(filepath.Join("..", "examples", name))); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{"pushform.state", "pushform.sandbox.json", "pushform.state.backup", "pushform.state.journal"} {
		os.Remove(filepath.Join(w.dir, leftover))
	}
	return w
}

// hello is a notification to alice and bob.
const hello = `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "First"
}
`

// noState fails unless w has no state yet.
func noState(t *testing.T, w *workspace) {
	t.Helper()
	if r := w.mustRun(0, "state", "list"); !strings.Contains(r.stderr, "No state at") {
		t.Errorf("a state was recorded:\n%s%s", r.stdout, r.stderr)
	}
}

// TestEmptyBaseURLIsAnError: PUSHFORM_BASE_URL set but empty (what GitHub
// Actions gives for an unset variable) with the quickstart's sandbox =
// "sandbox.hcl" and a key in the environment. Before: apply exited 0,
// "5 delivered" to the sandbox, the word sandbox nowhere, and with the pg
// backend the fake deliveries recorded in the team's state. After: plan
// and apply exit 1 naming the variable and what it would have hidden;
// nothing delivered, no state written.
func TestEmptyBaseURLIsAnError(t *testing.T) {
	clockBackends(t, func(t *testing.T, p *pgState) {
		w := copyExample(t, "quickstart", "PUSHFORM_BASE_URL=", "PUSHFORM_API_KEY="+testKey)
		w.usePG(p)
		for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"apply", "--auto-approve", "--json"}} {
			r := w.mustRun(1, args...)
			if !strings.Contains(r.stderr, "PUSHFORM_BASE_URL is set but empty") || !strings.Contains(r.stderr, "unset it to use the embedded sandbox (sandbox.hcl)") ||
				strings.Contains(r.stdout, "delivered") {
				t.Errorf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(w.dir, "pushform.sandbox.json")); err == nil {
			t.Error("the embedded sandbox received deliveries")
		}
		noState(t, w)
	})
}

// TestEveryOutputNamesTheService: plan, its markdown, plan --json, show
// --json and apply (human and --json) name the service: a sandbox process
// by its base URL, the embedded sandbox as such. Before: none did.
func TestEveryOutputNamesTheService(t *testing.T) {
	for _, tt := range []struct {
		name  string
		svc   service
		human string
		md    string
		json  func(svc service) string
	}{
		{"sandbox process", startSandbox(t, seed, "--quiet"), "Service: %s, environment test\n", "**Service:** `%s`",
			func(svc service) string { return `{"kind":"base_url","url":"` + svc.(*sandbox).base + `"}` }},
		{"embedded sandbox", startEmbedded(t, seed), "Service: embedded sandbox (sandbox.hcl), environment test\n", "**Service:** embedded sandbox (`sandbox.hcl`)",
			func(service) string { return `{"kind":"sandbox","url":null}` }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.svc, hello)
			name := ""
			if sb, ok := tt.svc.(*sandbox); ok {
				name = sb.base
			}
			human := strings.ReplaceAll(tt.human, "%s", name)
			md := strings.ReplaceAll(tt.md, "%s", name)
			want := tt.json(tt.svc)
			if r := w.mustRun(0, "plan"); !strings.HasPrefix(r.stdout, human) {
				t.Errorf("plan starts:\n%s\nwant %q", r.stdout, human)
			}
			if r := w.mustRun(0, "plan", "--markdown"); !strings.Contains(r.stdout, md) {
				t.Errorf("plan --markdown lacks %q:\n%s", md, r.stdout)
			}
			var doc struct{ Service json.RawMessage }
			r := w.mustRun(0, "plan", "--json", "--out", "p.plan")
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || string(doc.Service) != want {
				t.Errorf("plan --json service %s (%v), want %s", doc.Service, err, want)
			}
			if r := w.mustRun(0, "show", "p.plan", "--json"); !strings.Contains(r.stdout, `"service":`+want) {
				t.Errorf("show --json lacks the service:\n%s", r.stdout)
			}
			r = w.mustRun(0, "apply", "p.plan", "--json")
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if !strings.HasPrefix(lines[1], `{"type":"service","service":`+want) || !strings.Contains(lines[len(lines)-1], `"service":`+want) {
				t.Errorf("apply --json does not name the service first and in its summary:\n%s", r.stdout)
			}
			w.write(hello+strings.ReplaceAll(hello, "hello", "again"), tt.svc)
			if r := w.apply(); !strings.HasPrefix(r.stdout, human) || !strings.Contains(r.stdout, "Sent through ") {
				t.Errorf("apply:\n%s", r.stdout)
			}
		})
	}
}

// TestProductionInTheSandboxWarns: examples/environments with the
// production variables and no PUSHFORM_BASE_URL rehearses production in
// the embedded sandbox. Before: "3 delivered", no warning. After: every
// output warns that nothing reaches a device; test does not.
func TestProductionInTheSandboxWarns(t *testing.T) {
	w := copyExample(t, "environments")
	prod := []string{"--var-file", "env/production.pfvars", "--state", "env/production.state"}
	const warning = `environment "production" runs against the embedded sandbox (sandbox.hcl): nothing reaches a device`
	jsonWarning := strings.ReplaceAll(warning, `"`, `\"`)
	outputs := map[string]string{
		"plan":            w.mustRun(0, append([]string{"plan"}, prod...)...).stdout,
		"plan --markdown": w.mustRun(0, append([]string{"plan", "--markdown"}, prod...)...).stdout,
		"plan --json":     strings.ReplaceAll(w.mustRun(0, append([]string{"plan", "--json"}, prod...)...).stdout, jsonWarning, warning),
		"apply --json": strings.ReplaceAll(w.mustRun(0, append([]string{"apply", "--auto-approve", "--json", "--var",
			`beta_users=["alice"]`}, prod...)...).stdout, jsonWarning, warning),
		"apply": w.mustRun(0, append([]string{"apply", "--auto-approve"}, prod...)...).stdout,
	}
	for name, out := range outputs {
		if !strings.Contains(out, warning) {
			t.Errorf("%s does not warn:\n%s", name, out)
		}
	}
	if !strings.Contains(outputs["apply"], "2 delivered") || !strings.Contains(outputs["apply"], "Warning: "+warning) {
		t.Errorf("apply:\n%s", outputs["apply"])
	}
	test := []string{"--var-file", "env/test.pfvars", "--state", "env/test.state"}
	if r := w.apply(test...); strings.Contains(r.stdout, "nothing reaches a device") {
		t.Errorf("the test environment warns:\n%s", r.stdout)
	}
}

// clearService rewrites w's state as a state from before states recorded
// their service (format 5 has no such field; a state with none reads the
// same).
func clearService(t *testing.T, w *workspace) {
	t.Helper()
	s := w.readState()
	s.Service = nil
	if w.pg == nil {
		if err := local.NewFile(filepath.Join(w.dir, "pushform.state")).Persist(s); err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := pg.Open(ctx, pg.Options{ConnString: w.pg.url, Schema: w.pg.schema, StateName: w.pg.name})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	read, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	read.Service = nil
	if err := m.Persist(read); err != nil {
		t.Fatal(err)
	}
}

// TestStateKeepsItsService: a state records the service its deliveries
// went to. One that holds the embedded sandbox's refuses a sandbox
// process (or any base URL), and the reverse, before anything is sent,
// saying how to start a fresh state; a state from before records the
// first service it is used with, and says so. Before: the state recorded
// no service, and either mix planned from the other's deliveries.
func TestStateKeepsItsService(t *testing.T) {
	clockBackends(t, func(t *testing.T, p *pgState) {
		proc := startSandbox(t, seed, "--quiet")
		box := startEmbedded(t, seed)
		w := newPGWorkspace(t, box, hello, p)
		w.env = append(w.env, "PUSHFORM_API_KEY="+testKey)
		w.apply()
		if s := w.readState(); s.Service == nil || s.Service.Kind != state.KindSandbox {
			t.Fatalf("the state records %+v, want the sandbox", s.Service)
		}
		real := append(w.env[:len(w.env):len(w.env)], "PUSHFORM_BASE_URL="+proc.base)
		sandboxEnv := w.env
		w.env = real
		for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}} {
			r := w.mustRun(1, args...)
			if !strings.Contains(r.stderr, "holds deliveries made through the embedded sandbox, which reached no real device, but this run talks to "+proc.base) ||
				!strings.Contains(r.stderr, "start a fresh state for it") {
				t.Errorf("%v with the sandbox's state:\n%s", args, r.stderr)
			}
		}
		if n := proc.stats().SendRequests; n != 0 {
			t.Errorf("the refused runs sent %d requests", n)
		}

		// A state from before: the first service it meets is recorded.
		clearService(t, w)
		r := w.apply()
		if !strings.Contains(r.stderr, "recorded no service (an earlier pushform wrote it); it now records the service at 127.0.0.1") {
			t.Errorf("apply of a state from before:\n%s", r.stderr)
		}
		if s := w.readState(); s.Service == nil || s.Service.Host != "127.0.0.1" {
			t.Fatalf("the state records %+v, want 127.0.0.1", s.Service)
		}
		w.env = sandboxEnv
		before := box.received()
		r = w.mustRun(1, "apply", "--auto-approve")
		if !strings.Contains(r.stderr, "holds deliveries made through the service at 127.0.0.1, but this run talks to embedded sandbox (sandbox.hcl)") {
			t.Errorf("the sandbox with a real service's state:\n%s", r.stderr)
		}
		if after := box.received(); len(after) != len(before) || after["alice-phone"] != before["alice-phone"] {
			t.Errorf("the refused run delivered in the sandbox: %v, then %v", before, after)
		}
	})
}
