package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const prodKey = "k-prod-canary-9876543210"

// envSeed has a key per environment and users with the test app, the
// production app, or both; device ids match examples/environments.
const envSeed = `
api_key "k-test-canary-0123456789" { environment = "test" }
api_key "k-prod-canary-9876543210" { environment = "production" }
user "alice" {
  device "alice-test-phone" { environment = "test" }
  device "alice-phone" { environment = "production" }
}
user "bob" {
  device "bob-test-phone" { environment = "test" }
  device "bob-phone" { environment = "production" }
}
user "carol" {
  device "carol-phone" { environment = "production" }
}
`

// TestEnvironments drives test and production from the one campaign
// directory of examples/environments with --var-file and --state, against a
// real sandbox, and checks that mixing them is refused before any send.
func TestEnvironments(t *testing.T) {
	sb := startSandbox(t, envSeed)
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1",
		"PUSHFORM_BASE_URL="+sb.base, "PUSHFORM_TEST_API_KEY="+testKey, "PUSHFORM_PRODUCTION_API_KEY="+prodKey)}
	if err := os.CopyFS(w.dir, os.DirFS("../examples/environments")); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{"env/test.state", "env/production.state", "env/pushform.sandbox.json"} {
		os.Remove(filepath.Join(w.dir, leftover))
	}
	test := []string{"--var-file", "env/test.pfvars", "--state", "env/test.state"}
	prod := []string{"--var-file", "env/production.pfvars", "--state", "env/production.state"}
	run := func(want int, args ...string) result {
		t.Helper()
		r := w.mustRun(want, args...)
		if strings.Contains(r.stdout+r.stderr, prodKey) {
			t.Fatalf("the production key leaked into %v", args)
		}
		return r
	}

	r := run(0, append([]string{"apply", "--auto-approve"}, test...)...)
	if !strings.Contains(r.stdout, "2 delivered") {
		t.Fatalf("test apply:\n%s", r.stdout)
	}
	r = run(0, append([]string{"apply", "--auto-approve"}, prod...)...)
	if !strings.Contains(r.stdout, "3 delivered") {
		t.Fatalf("production apply:\n%s", r.stdout)
	}
	for dev, want := range map[string]int{"alice-test-phone": 1, "bob-test-phone": 1, "alice-phone": 1, "bob-phone": 1, "carol-phone": 1} {
		if d := sb.device(dev); d.Received != want {
			t.Errorf("%s received %d, want %d", dev, d.Received, want)
		}
	}
	// Each environment converged on its own.
	for _, flags := range [][]string{test, prod} {
		if r := run(0, append([]string{"plan", "--detailed-exitcode"}, flags...)...); !strings.Contains(r.stdout, "No changes.") {
			t.Fatalf("plan %v:\n%s", flags, r.stdout)
		}
	}

	// Mixing is refused, both ways and with the default state, and sends nothing.
	sent := sb.stats().SendRequests
	mixes := []struct {
		name string
		args []string
		want string
	}{
		{"production config, test state", []string{"apply", "--auto-approve", "--var-file", "env/production.pfvars", "--state", "env/test.state"},
			`belongs to environment "test" but the configuration declares "production"`},
		{"test config, production state", []string{"plan", "--var-file", "env/test.pfvars", "--state", "env/production.state"},
			`belongs to environment "production" but the configuration declares "test"`},
		{"default variables, production state", []string{"apply", "--auto-approve", "--state", "env/production.state"},
			`belongs to environment "production" but the configuration declares "test"`},
	}
	for _, m := range mixes {
		if r := run(1, m.args...); !strings.Contains(r.stderr, m.want) || !strings.Contains(r.stderr, "--state") {
			t.Errorf("%s: stderr:\n%s", m.name, r.stderr)
		}
	}
	// A plan saved for test cannot be applied as production.
	run(0, append([]string{"plan", "--out", "test.plan", "--var", "beta_users=[\"alice\",\"bob\",\"carol\"]"}, test...)...)
	r = run(1, "apply", "test.plan", "--state", "env/production.state")
	if !strings.Contains(r.stderr, `belongs to environment "production" but the configuration declares "test"`) {
		t.Errorf("applying a test plan to production's state:\n%s", r.stderr)
	}
	// The plan is applied with its own variables: production's are refused.
	r = run(1, append([]string{"apply", "test.plan"}, prod...)...)
	if !strings.Contains(r.stderr, "Can't set variables when applying a saved plan") {
		t.Errorf("applying a test plan with production variables:\n%s", r.stderr)
	}
	if got := sb.stats().SendRequests; got != sent {
		t.Errorf("refused runs sent %d requests", got-sent)
	}
}
