package e2e

import (
	"strings"
	"testing"

	"pushform/state/pg/pgtest"
)

// TestPullRequestJobReadOnly runs the example workflow's pull-request job
// as it is set up: no API key in the environment and a PostgreSQL role
// that may only read the state. plan --refresh=false, show --markdown,
// history and state list succeed without a lock or a request to the
// service; apply with that role is refused before anything is sent.
func TestPullRequestJobReadOnly(t *testing.T) {
	p := newPGState(t)
	t.Parallel()
	sb := startSandbox(t, seed, "--quiet")
	const merged = `
data "recipients" "all" {}

notification "hello" {
  user_ids = data.recipients.all.user_ids
  title    = "Hello"
  body     = "hi"
  tag      = "hello"
}
`
	team := newPGWorkspace(t, sb, merged, p)
	team.apply()

	pr := newPGWorkspace(t, sb, merged+`
notification "from_pr" {
  user_ids = ["alice"]
  title    = "PR"
  body     = "from a pull request"
}
`, p)
	var env []string
	for _, kv := range pr.env {
		if !strings.HasPrefix(kv, "PF_KEY=") && !strings.HasPrefix(kv, "PUSHFORM_PG_CONN_STR=") {
			env = append(env, kv)
		}
	}
	pr.env = append(env, "PUSHFORM_PG_CONN_STR="+pgtest.ReadOnlyRole(t, p.schema))
	before := sb.stats()

	r := pr.mustRun(2, "plan", "--refresh=false", "--detailed-exitcode", "--out", "pr.plan")
	if !strings.Contains(r.stdout, "notification.from_pr will be created") || !strings.Contains(r.stdout, "Planned from the recipients list recorded in the state") {
		t.Errorf("plan with the read-only role and no key:\n%s", r.stdout)
	}
	if md := pr.mustRun(0, "show", "--markdown", "pr.plan"); !strings.Contains(md.stdout, "`notification.from_pr` **create**") {
		t.Errorf("show --markdown:\n%s", md.stdout)
	}
	if h := pr.mustRun(0, "history", "--user", "alice"); !strings.Contains(h.stdout, "notification.hello") {
		t.Errorf("history --user alice:\n%s", h.stdout)
	}
	pr.mustRun(0, "state", "list")
	if _, _, found := p.lockRow(); found {
		t.Error("a read-only command left a lock row")
	}
	for _, args := range [][]string{{"apply", "pr.plan"}, {"apply", "--auto-approve", "--refresh=false"}} {
		r := pr.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "can only read this state") {
			t.Errorf("%s with the read-only role: exit %d; want 1 with the refusal:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if after := sb.stats(); after != before {
		t.Errorf("the pull request's commands sent something: %+v -> %+v", before, after)
	}
}
