package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/plandoc"
)

// policyCampaign sends to 30 users without a rollout, and to 5 with one
// tagged notification, under the rollout policy with a small
// threshold.
func policyCampaign(threshold int) string {
	return fmt.Sprintf(`
notification "big" {
  user_ids    = %s
  title       = "Spring sale"
  body        = "20%% off"
  open_to_url = "https://shop.example.com/sale"
  tag         = "spring"
}

notification "small" {
  user_ids = ["g0100", "g0101"]
  title    = "Hello"
  body     = "Just you two"
  tag      = "hello"
}

policy "rollout_for_big_audiences" {
  for_each_change = true
  condition       = change.targets.send <= %d || change.rollout != null
  error_message   = "${change.address} reaches ${change.targets.send} people without a rollout"
  enforcement     = "deny"
}
`, guardUsers(30), threshold)
}

// TestPolicyDeny: a failed deny policy stops plan (exit 1 after the whole
// plan, --detailed-exitcode too, no plan saved) and apply (nothing sent);
// the same with --override-policy sends, and history shows the override
// with its reason.
func TestPolicyDeny(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, policyCampaign(20))

	r := w.mustRun(1, "plan")
	for _, want := range []string{
		"+ notification.big will be created", "+ notification.small will be created", // the whole plan
		"Policy rollout_for_big_audiences denies this plan (deny, main.hcl:",
		"\n  notification.big reaches 30 people without a rollout\n",
		"Reach: 32 users (32 new)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "notification.small reaches") || !strings.Contains(r.stderr, "deny policy rollout_for_big_audiences failed") {
		t.Errorf("plan:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	w.mustRun(1, "plan", "--detailed-exitcode")
	r = w.mustRun(1, "plan", "--out", "p.plan")
	if _, err := os.Stat(filepath.Join(w.dir, "p.plan")); !os.IsNotExist(err) || !strings.Contains(r.stderr, "no plan was saved to p.plan") {
		t.Errorf("plan --out saved a plan a deny policy stops (%v):\n%s", err, r.stderr)
	}
	r = w.mustRun(1, "plan", "--json")
	testutil.ValidatePlanJSON(t, []byte(r.stdout))
	var doc plandoc.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Policies) != 1 || doc.Policies[0].Result != plandoc.Deny || doc.Policies[0].Checked != 2 ||
		*doc.Policies[0].Failures[0].Address != "notification.big" || doc.Summary.Reach == nil || doc.Summary.Reach.Users != 32 {
		t.Errorf("plan --json policies %+v, reach %+v", doc.Policies, doc.Summary.Reach)
	}

	r = w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stdout, "notification.big reaches 30 people") || !strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("apply:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("apply sent %d requests under a failed deny policy", st.SendRequests)
	}

	// An override is named and reasoned; a typo is refused.
	if r := w.mustRun(1, "plan", "--override-policy", "rollout_for_big_audience", "--override-reason", "x"); !strings.Contains(r.stderr, "names no policy") {
		t.Errorf("a misspelt override:\n%s", r.stderr)
	}
	if r := w.mustRun(1, "plan", "--override-policy", "rollout_for_big_audiences"); !strings.Contains(r.stderr, "needs --override-reason") {
		t.Errorf("an override without a reason:\n%s", r.stderr)
	}
	if r := w.mustRun(1, "plan", "--override-policy", "rollout_for_big_audiences", "--override-reason", "approved, key "+testKey); !strings.Contains(r.stderr, "--override-reason holds a secret") {
		t.Errorf("a reason holding the API key:\n%s", r.stderr)
	}
	const reason = "the spring sale was approved by marketing"
	r = w.mustRun(0, "plan", "--out", "p.plan", "--override-policy", "rollout_for_big_audiences", "--override-reason", reason)
	if !strings.Contains(r.stdout, "Policy rollout_for_big_audiences is overridden") {
		t.Errorf("plan with the override:\n%s", r.stdout)
	}
	md := w.mustRun(0, "show", "p.plan", "--markdown").stdout
	if !strings.Contains(md, "| `rollout_for_big_audiences` | ↷ overridden | notification.big reaches 30 people without a rollout — overridden: "+reason+" |") {
		t.Errorf("the comment's policy table:\n%s", md)
	}
	if r := w.mustRun(1, "apply", "p.plan", "--override-policy", "rollout_for_big_audiences", "--override-reason", "y"); !strings.Contains(r.stderr, "Can't set --override-policy when applying a saved plan") {
		t.Errorf("apply PLANFILE --override-policy:\n%s", r.stderr)
	}
	w.mustRun(0, "apply", "p.plan")
	if st := sb.stats(); st.Targets != 32 {
		t.Fatalf("the overridden plan sent %d targets, want 32", st.Targets)
	}
	h := w.mustRun(0, "history", "notification.big").stdout
	if !strings.Contains(h, "Deny policies overridden to send under it:") || !strings.Contains(h, `rollout_for_big_audiences: "`+reason+`"`) {
		t.Errorf("history notification.big:\n%s", h)
	}
	if h := w.mustRun(0, "history", "notification.small").stdout; strings.Contains(h, "overridden") {
		t.Errorf("history of an address the policy passed names the override:\n%s", h)
	}

	// An apply without a plan file takes the override too; --scheduled
	// never does.
	w.write(strings.Replace(policyCampaign(20), `"20% off"`, `"25% off"`, 1), sb)
	if r := w.mustRun(1, "apply", "--scheduled", "--override-policy", "rollout_for_big_audiences", "--override-reason", "r"); !strings.Contains(r.stderr, "Can't use --override-policy with --scheduled") {
		t.Errorf("apply --scheduled --override-policy:\n%s", r.stderr)
	}
	w.mustRun(0, "apply", "--auto-approve", "--override-policy", "rollout_for_big_audiences", "--override-reason", "second wave")
	var hj struct {
		Overrides []struct{ Policy, Reason string } `json:"overrides"`
	}
	if err := json.Unmarshal([]byte(w.mustRun(0, "history", "notification.big", "--json").stdout), &hj); err != nil {
		t.Fatal(err)
	}
	if len(hj.Overrides) != 2 || hj.Overrides[0].Reason != reason || hj.Overrides[1].Reason != "second wave" {
		t.Errorf("history --json overrides: %+v", hj.Overrides)
	}
}

// TestPolicyWarnAndDirectories: a warn policy only warns; policies from
// --policy-dir and PUSHFORM_POLICY_DIRS apply, a policy directory's files
// hold only policy blocks, and validate checks them.
func TestPolicyWarnAndDirectories(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, strings.Replace(policyCampaign(20), `enforcement     = "deny"`, `enforcement     = "warn"`, 1))
	org := t.TempDir()
	testutil.WriteFile(t, org, "https.policy.hcl", `policy "https_only" {
  for_each_change = true
  condition       = change.content.open_to_url == null ? true : startswith(change.content.open_to_url, "https://")
  error_message   = "${change.address} opens ${coalesce(change.content.open_to_url, "")}"
}
`)
	testutil.WriteFile(t, org, "README.md", "Organisation policies.\n")

	// A failed warn is shown; plan succeeds (2: changes).
	r := w.run("plan", "--detailed-exitcode", "--policy-dir", org)
	if r.code != 2 || !strings.Contains(r.stdout, "Policy rollout_for_big_audiences warns (warn, main.hcl:") ||
		!strings.Contains(r.stdout, "Policies: 1 warned, 1 passed.") {
		t.Errorf("plan with a failed warn: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	w.mustRun(0, "validate", "--policy-dir", org)

	// The organisation's policy applies from --policy-dir and from the
	// environment; an http:// link is denied.
	w.write(strings.Replace(strings.Replace(policyCampaign(20), `enforcement     = "deny"`, `enforcement     = "warn"`, 1), "https://shop", "http://shop", 1), sb)
	r = w.mustRun(1, "plan", "--policy-dir", org)
	if !strings.Contains(r.stdout, "Policy https_only denies this plan (deny, ") || !strings.Contains(r.stdout, "https.policy.hcl:1)") ||
		!strings.Contains(r.stdout, "\n  notification.big opens http://shop.example.com/sale\n") {
		t.Errorf("plan --policy-dir:\n%s", r.stdout)
	}
	env := w.env
	w.env = append(env, "PUSHFORM_POLICY_DIRS="+t.TempDir()+string(os.PathListSeparator)+org)
	w.mustRun(1, "apply", "--auto-approve")
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("apply sent under a policy of PUSHFORM_POLICY_DIRS: %+v", st)
	}
	w.env = env
	// Without the organisation's policy, only the warning: apply sends.
	r = w.apply()
	if !strings.Contains(r.stdout, "Policy rollout_for_big_audiences warns") {
		t.Errorf("apply with a failed warn:\n%s", r.stdout)
	}
	if st := sb.stats(); st.Targets != 32 {
		t.Errorf("apply under a warn sent %d targets, want 32", st.Targets)
	}

	// A policy directory holds policy blocks only, checked by validate.
	testutil.WriteFile(t, org, "bad.policy.hcl", "topic \"deals\" {}\n\npolicy \"typo\" {\n  for_each_change = true\n  condition       = change.target.send < 10\n  error_message   = \"x\"\n}\n")
	r = w.mustRun(1, "validate", "--policy-dir", org)
	if !strings.Contains(r.stderr, `Blocks of type "topic" are not expected here`) || !strings.Contains(r.stderr, "Unsupported attribute") ||
		!strings.Contains(r.stderr, "bad.policy.hcl line 5") {
		t.Errorf("validate of a bad policy directory:\n%s", r.stderr)
	}
}

// TestPlanExpires: a saved plan records the real time it was made (not
// --now); apply refuses one older than max_plan_age, naming its age,
// before anything is sent; plan --out at a --now further ahead than
// max_plan_age is refused.
func TestPlanExpires(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(`
notification "sale" {
  user_ids = %s
  title    = "Spring sale"
  body     = "20%% off"
  tag      = "spring"
}
`, guardUsers(5)))
	// max_plan_age in the service block.
	src, err := os.ReadFile(filepath.Join(w.dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, w.dir, "main.hcl", strings.Replace(string(src), `environment = "test"`, "environment  = \"test\"\n  max_plan_age = \"30m\"", 1))

	// Ahead of the clock by more than max_plan_age: refused, nothing saved.
	r := w.mustRun(1, "plan", "--out", "p.plan", "--now", time.Now().UTC().Add(2*time.Hour).Format(time.RFC3339))
	if !strings.Contains(r.stderr, "ahead of the clock, more than max_plan_age (30m0s)") {
		t.Errorf("plan --out --now 2h ahead:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "p.plan")); !os.IsNotExist(err) {
		t.Fatalf("the refused plan was saved: %v", err)
	}

	// Made for an hour ago, at the real time: its age is the real one.
	w.mustRun(0, "plan", "--out", "p.plan", "--now", time.Now().UTC().Add(-time.Hour).Format(time.RFC3339))
	plan := readPlanMap(t, w, "p.plan")
	made, err := time.Parse(time.RFC3339Nano, plan["made_at"].(string))
	if err != nil || time.Since(made) > time.Minute {
		t.Fatalf("made_at %v (%v), want the real time the plan was made", plan["made_at"], err)
	}
	// The same plan, aged: made two hours ago.
	plan["made_at"] = made.Add(-2 * time.Hour).Format(time.RFC3339Nano)
	writePlanMap(t, w, "old.plan", plan)
	r = w.mustRun(1, "apply", "old.plan")
	if !strings.Contains(r.stderr, "old.plan was made 2h0m") || !strings.Contains(r.stderr, "longer ago than max_plan_age (30m0s)") ||
		!strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("apply of a plan older than max_plan_age:\n%s", r.stderr)
	}
	delete(plan, "made_at")
	writePlanMap(t, w, "unknown.plan", plan)
	if r := w.mustRun(1, "apply", "unknown.plan"); !strings.Contains(r.stderr, "does not record when it was made") {
		t.Errorf("apply of a plan without made_at:\n%s", r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("refused plans sent %d requests", st.SendRequests)
	}
	w.mustRun(0, "apply", "p.plan")
	if st := sb.stats(); st.Targets != 5 {
		t.Errorf("the fresh plan sent %d targets, want 5", st.Targets)
	}
}

// TestRequireTestSend: require_test_send refuses an apply until the exact
// content has a delivered test send; the plan names the command; after the
// test send, apply sends.
func TestRequireTestSend(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	camp := fmt.Sprintf(`
campaign "spring" {
  require_test_send = true
  test_devices      = ["gd0900"]

  notification "sale" {
    user_ids = %s
    title    = "Spring sale"
    body     = "20%% off"
    tag      = "spring"
  }
}

notification "other" {
  user_ids = ["g0100"]
  title    = "Not in the campaign"
  body     = "No test send needed"
}
`, guardUsers(5))
	w := newWorkspace(t, sb, camp)
	r := w.mustRun(0, "plan")
	if !strings.Contains(r.stdout, "needs a test send (require_test_send): pushform test-send campaign.spring.notification.sale") {
		t.Errorf("plan:\n%s", r.stdout)
	}
	var doc plandoc.Document
	if err := json.Unmarshal([]byte(w.mustRun(0, "plan", "--json").stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Changes {
		if c.NeedsTestSend != (c.Address == "campaign.spring.notification.sale") {
			t.Errorf("%s: needs_test_send %v", c.Address, c.NeedsTestSend)
		}
	}
	r = w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "require_test_send") || !strings.Contains(r.stderr, "campaign.spring.notification.sale: pushform test-send campaign.spring.notification.sale") ||
		!strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("apply before a test send:\n%s", r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("apply sent %d requests before a test send", st.SendRequests)
	}
	// A test send to a device the service does not know is not delivered:
	// still refused.
	w.mustRun(1, "test-send", "campaign.spring.notification.sale", "--device", "no-such-phone")
	w.mustRun(1, "apply", "--auto-approve")
	w.mustRun(0, "test-send", "campaign.spring.notification.sale")
	if d := sb.device("gd0900"); d.Received != 1 {
		t.Fatalf("the test device: %+v", d)
	}
	w.mustRun(0, "plan", "--out", "p.plan")
	w.mustRun(0, "apply", "p.plan")
	if st := sb.stats(); st.Targets != 1+1+5+1 { // two test sends, the campaign, the other
		t.Errorf("targets %d, want the test sends, 5 and 1", st.Targets)
	}
	// An edit needs a test send of its own.
	w.write(strings.Replace(camp, `"20% off"`, `"25% off"`, 1), sb)
	w.mustRun(1, "apply", "--auto-approve")
}

// readPlanMap reads a saved plan as JSON.
func readPlanMap(t *testing.T, w *workspace, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writePlanMap writes a saved plan back, as plan --out does (owner only).
func writePlanMap(t *testing.T, w *workspace, name string, m map[string]any) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
