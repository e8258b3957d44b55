package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/message"
	"pushform/plandoc"
	"pushform/planner"
)

// load loads a configuration of files (and the policy directory dirFiles,
// when given) with the policies' objects checked, as plan does.
func load(t *testing.T, files, dirFiles map[string]string) ([]*config.Policy, hcl.Diagnostics) {
	t.Helper()
	dir := testutil.WriteFiles(t, files)
	opts := config.Options{}
	if dirFiles != nil {
		opts.PolicyDirs = []string{testutil.WriteFiles(t, dirFiles)}
	}
	l := config.NewLoader()
	l.PolicyObjects = &config.PolicyObjects{Plan: plandoc.PlanType, Change: plandoc.ChangeType}
	cfg, diags := l.Load(dir, opts)
	return cfg.Policies, diags
}

// plan is a plan of three changes: a create to 60,000 users with an
// http:// link, a replace to 10 with a rollout, and a forget and a no-op
// (which no for_each_change policy checks).
func plan() *plandoc.Document {
	big := make([]string, 60000)
	return plandoc.New(&planner.Plan{FormatVersion: "1", Environment: "production", Changes: []*planner.Change{
		{Address: "notification.big", Action: planner.ActionCreate, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Content: message.Content{Title: "Sale", Body: "Now", OpenToURL: "http://shop.example.com"},
			Targets: planner.TargetCounts{Total: 60000, New: 60000, Send: 60000}, Send: big},
		{Address: "notification.gone", Action: planner.ActionForget, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Content: message.Content{Title: "x", Body: "y", OpenToURL: "http://old.example.com"}, Targets: planner.TargetCounts{Forget: 900000}},
		{Address: "notification.same", Action: planner.ActionNoOp, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Content: message.Content{Title: "x", Body: "y", OpenToURL: "http://old.example.com"}, Targets: planner.TargetCounts{Total: 70000, UpToDate: 70000}},
		{Address: "notification.staged", Action: planner.ActionReplace, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Content: message.Content{Title: "Hi", Body: "There"}, Targets: planner.TargetCounts{Total: 100000, Replace: 10, Send: 10},
			Rollout: &planner.RolloutStatus{State: planner.RolloutSending, Stages: []planner.StageStatus{{Percent: "1%", Size: 10, Send: 10}}}},
	}, Summary: planner.Summary{Targets: 60010, Create: 1, Replace: 1}})
}

const service = "service {\n  environment = \"production\"\n}\n"

// The policies of the issue, word for word.
const issuePolicies = `
policy "rollout_for_big_audiences" {
  for_each_change = true
  condition       = change.targets.send <= 50000 || change.rollout != null
  error_message   = "${change.address} reaches ${change.targets.send} people without a rollout"
  enforcement     = "deny"
}

policy "https_only" {
  for_each_change = true
  condition       = change.content.open_to_url == null ? true : startswith(change.content.open_to_url, "https://")
  error_message   = "${change.address} opens ${coalesce(change.content.open_to_url, "")}"
}

policy "daily_volume" {
  condition     = plan.summary.targets <= 2000000
  error_message = "this plan sends ${plan.summary.targets} pushes"
}
`

func TestEvaluate(t *testing.T) {
	type want struct {
		result  string
		checked int
		// failures are "address: message" ("" address for the plan).
		failures []string
	}
	for _, tc := range []struct {
		name      string
		policies  string
		overrides []plandoc.Override
		want      map[string]want
	}{
		{name: "the issue's policies", policies: issuePolicies, want: map[string]want{
			"rollout_for_big_audiences": {plandoc.Deny, 2, []string{"notification.big: notification.big reaches 60000 people without a rollout"}},
			"https_only":                {plandoc.Deny, 2, []string{"notification.big: notification.big opens http://shop.example.com"}},
			"daily_volume":              {plandoc.Pass, 1, nil},
		}},
		{name: "overridden by name", policies: issuePolicies, overrides: []plandoc.Override{{Policy: "https_only", Reason: "the shop has no TLS yet"}}, want: map[string]want{
			"rollout_for_big_audiences": {plandoc.Deny, 2, []string{"notification.big: notification.big reaches 60000 people without a rollout"}},
			"https_only":                {plandoc.Overridden, 2, []string{"notification.big: notification.big opens http://shop.example.com"}},
			"daily_volume":              {plandoc.Pass, 1, nil},
		}},
		{name: "warn", policies: `
policy "small" {
  condition     = plan.summary.targets < 100
  error_message = "sends ${plan.summary.targets}"
  enforcement   = "warn"
}`, want: map[string]want{"small": {plandoc.Warn, 1, []string{": sends 60010"}}}},
		{name: "variables and try", policies: `
variable "max" {
  type    = number
  default = 20
}
policy "max_per_change" {
  for_each_change = true
  condition       = change.targets.send <= var.max || try(change.rollout.stages[0].size <= var.max, false)
  error_message   = "too many"
}`, want: map[string]want{"max_per_change": {plandoc.Deny, 2, []string{"notification.big: too many"}}}},
		{name: "a condition that cannot be evaluated", policies: `
policy "stages" {
  for_each_change = true
  condition       = length(change.rollout.stages) > 0
  error_message   = "no stages"
}`, want: map[string]want{"stages": {plandoc.Deny, 2, []string{"notification.big: the condition could not be evaluated: main.hcl:7,42-49: Attempt to get attribute from null value; This value is null, so it does not have any attributes."}}}},
		{name: "can and endswith", policies: `
policy "titles" {
  for_each_change = true
  condition       = can(regex("^[A-Z]", change.content.title)) && !endswith(change.content.title, "!")
  error_message   = "title ${change.content.title}"
  enforcement     = "warn"
}`, want: map[string]want{"titles": {plandoc.Pass, 2, nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policies, diags := load(t, map[string]string{"main.hcl": service + tc.policies}, nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			results := Evaluate(policies, plan(), tc.overrides)
			if len(results) != len(tc.want) {
				t.Fatalf("%d results, want %d: %+v", len(results), len(tc.want), results)
			}
			for _, r := range results {
				w, ok := tc.want[r.Name]
				if !ok {
					t.Errorf("unexpected result %+v", r)
					continue
				}
				var got []string
				for _, f := range r.Failures {
					addr := ""
					if f.Address != nil {
						addr = *f.Address
					}
					got = append(got, addr+": "+f.Message)
				}
				if r.Result != w.result || r.Checked != w.checked || !slices.Equal(got, w.failures) {
					t.Errorf("%s: %s, %d checked, %q; want %s, %d checked, %q", r.Name, r.Result, r.Checked, got, w.result, w.checked, w.failures)
				}
				if r.File != "main.hcl" || r.Line == 0 {
					t.Errorf("%s at %s:%d, want its line in main.hcl", r.Name, r.File, r.Line)
				}
				if (r.Result == plandoc.Overridden) != (r.Override != nil) {
					t.Errorf("%s: result %s with override %+v", r.Name, r.Result, r.Override)
				}
			}
		})
	}
}

func TestDeniedAndOverridden(t *testing.T) {
	policies, diags := load(t, map[string]string{"main.hcl": service + issuePolicies}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	results := Evaluate(policies, plan(), []plandoc.Override{{Policy: "https_only", Reason: "r"}})
	if d := Denied(results); len(d) != 1 || d[0].Name != "rollout_for_big_audiences" {
		t.Errorf("Denied = %+v", d)
	}
	if o := Overridden(results); len(o) != 1 || o[0].Name != "https_only" || o[0].Override.Reason != "r" {
		t.Errorf("Overridden = %+v", o)
	}
	err := (&DeniedError{Denied: Denied(results)}).Error()
	if !strings.Contains(err, "apply would send nothing") || !strings.Contains(err, "--override-policy rollout_for_big_audiences --override-reason TEXT --out FILE") {
		t.Errorf("DeniedError: %s", err)
	}
}

// TestReviewed: a saved plan's override lets through the failures the
// plan recorded for its policy, and no other.
func TestReviewed(t *testing.T) {
	a, b := "notification.a", "notification.b"
	overridden := func(failures ...plandoc.Failure) plandoc.Policy {
		return plandoc.Policy{Name: "p", Enforcement: config.PolicyDeny, Result: plandoc.Overridden, Failures: failures,
			Override: &plandoc.Override{Policy: "p", Reason: "r"}}
	}
	fa, fb := plandoc.Failure{Address: &a, Message: "a fails"}, plandoc.Failure{Address: &b, Message: "b fails"}
	whole := plandoc.Failure{Message: "the plan fails"}
	for _, tc := range []struct {
		name     string
		now      plandoc.Policy
		reviewed []plandoc.Policy
		denied   bool
	}{
		{"the same failures", overridden(fa), []plandoc.Policy{overridden(fa)}, false},
		{"fewer failures", overridden(fa), []plandoc.Policy{overridden(fa, fb)}, false},
		{"the same failure of the plan", overridden(whole), []plandoc.Policy{overridden(whole)}, false},
		{"a new change fails", overridden(fa, fb), []plandoc.Policy{overridden(fa)}, true},
		{"another message", overridden(plandoc.Failure{Address: &a, Message: "a fails otherwise"}), []plandoc.Policy{overridden(fa)}, true},
		{"the plan instead of a change", overridden(plandoc.Failure{Message: "a fails"}), []plandoc.Policy{overridden(fa)}, true},
		{"another policy's failures", overridden(fa), []plandoc.Policy{func() plandoc.Policy { p := overridden(fa); p.Name = "q"; return p }()}, true},
		{"passed when planned", overridden(fa), []plandoc.Policy{{Name: "p", Result: plandoc.Pass, Failures: []plandoc.Failure{}}}, true},
		{"no results recorded", overridden(fa), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pass := plandoc.Policy{Name: "ok", Result: plandoc.Pass, Failures: []plandoc.Failure{}}
			in := []plandoc.Policy{pass, tc.now}
			out, unreviewed := Reviewed(in, tc.reviewed)
			got := out[1]
			if denied := got.Result == plandoc.Deny; denied != tc.denied || denied != (got.Override == nil) ||
				denied != slices.Equal(unreviewed, []string{"p"}) || out[0].Result != plandoc.Pass {
				t.Errorf("Reviewed = %+v, %v; want denied %v", out, unreviewed, tc.denied)
			}
			if in[1].Result != plandoc.Overridden {
				t.Error("Reviewed changed the results it was given")
			}
		})
	}
	err := (&DeniedError{Denied: []plandoc.Policy{overridden(fa)}, Apply: true, Saved: true, Unreviewed: []string{"p"}}).Error()
	if !strings.Contains(err, "The saved plan's override of p covers the failures its plan showed") {
		t.Errorf("DeniedError: %s", err)
	}
}

func TestCheckOverrides(t *testing.T) {
	policies, diags := load(t, map[string]string{"main.hcl": service + issuePolicies + `
policy "advice" {
  condition     = true
  error_message = "x"
  enforcement   = "warn"
}`}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name, err string
	}{
		{"https_only", ""},
		{"https-only", "names no policy (the policies are rollout_for_big_audiences, https_only, daily_volume, advice)"},
		{"advice", "names a warn policy"},
	} {
		err := CheckOverrides(policies, []plandoc.Override{{Policy: tc.name, Reason: "r"}})
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestLoadDiagnostics: what a policy would meet at plan time is reported
// when the configuration loads, at its line.
func TestLoadDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      string
		dirFiles map[string]string
		want     string
	}{
		{"misspelt attribute", `
policy "p" {
  for_each_change = true
  condition       = change.target.send < 10
  error_message   = "x"
}`, nil, "main.hcl:7,27-34: Unsupported attribute"},
		{"change without for_each_change", `
policy "p" {
  condition     = change.targets.send < 10
  error_message = "x"
}`, nil, "change without for_each_change"},
		{"not a bool", `
policy "p" {
  condition     = plan.summary
  error_message = "x"
}`, nil, "Incorrect attribute value type"},
		{"unknown enforcement", `
policy "p" {
  condition     = true
  error_message = "x"
  enforcement   = "block"
}`, nil, "Invalid enforcement"},
		{"unknown root", `
policy "p" {
  condition     = data.recipients.all.user_ids != null
  error_message = "x"
}`, nil, "Unknown name in a policy"},
		{"missing condition", `
policy "p" {
  error_message = "x"
}`, nil, `The argument "condition" is required`},
		{"duplicate across a policy directory", `
policy "p" {
  condition     = true
  error_message = "x"
}`, map[string]string{"org.policy.hcl": "policy \"p\" {\n  condition     = true\n  error_message = \"y\"\n}\n"}, "Duplicate policy block"},
		{"var in a policy directory", ``, map[string]string{"org.policy.hcl": "policy \"q\" {\n  condition     = var.x\n  error_message = \"y\"\n}\n"},
			"Configuration value in a policy directory"},
		{"other blocks in a policy directory", ``, map[string]string{"org.policy.hcl": "topic \"deals\" {}\n"}, `Blocks of type "topic" are not expected here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": service + tc.src}, tc.dirFiles)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("diagnostics %v, want %q", diags, tc.want)
			}
		})
	}
}

// TestPolicyDirectory: a policy directory's *.policy.hcl files add their
// policies after the configuration's, and nothing else of it is read.
func TestPolicyDirectory(t *testing.T) {
	policies, diags := load(t, map[string]string{"main.hcl": service + `
policy "local" {
  condition     = true
  error_message = "x"
}`}, map[string]string{
		"b.policy.hcl": "policy \"org_b\" {\n  condition     = plan.summary.targets < 10\n  error_message = file(\"note.txt\")\n}\n",
		"a.policy.hcl": "policy \"org_a\" {\n  for_each_change = true\n  condition       = startswith(change.address, \"campaign.\")\n  error_message   = \"${change.address} is not in a campaign\"\n  enforcement     = \"warn\"\n}\n",
		"note.txt":     "too many",
		"README.md":    "not read",
		"x.hcl":        "not read either {",
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var names []string
	for _, p := range policies {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"local", "org_a", "org_b"}) {
		t.Fatalf("policies %v", names)
	}
	if f := policies[1].Pos.Filename; !strings.HasSuffix(f, "a.policy.hcl") {
		t.Errorf("org_a is at %s", f)
	}
	results := Evaluate(policies, plan(), nil)
	if r := results[2]; r.Result != plandoc.Deny || r.Failures[0].Message != "too many" {
		t.Errorf("org_b: %+v (file() reads the policy directory)", r)
	}
	if r := results[1]; r.Result != plandoc.Warn || len(r.Failures) != 2 {
		t.Errorf("org_a: %+v", r)
	}
}

// TestPolicyIsNotInShapes: a policy checks plans and sends nothing, so
// adding or editing one leaves every message's reviewed shape as it was
// (apply --scheduled still releases what a reviewed apply accepted).
func TestPolicyIsNotInShapes(t *testing.T) {
	const msg = `
notification "n" {
  user_ids = ["a"]
  title    = "t"
  body     = "b"
}
`
	shape := func(policies string) string {
		t.Helper()
		dir := testutil.WriteFiles(t, map[string]string{"main.hcl": service + msg + policies})
		cfg, diags := config.NewLoader().Load(dir, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return cfg.Messages[0].Shape
	}
	before := shape("")
	if before == "" {
		t.Fatal("no shape")
	}
	for _, p := range []string{issuePolicies, strings.Replace(issuePolicies, "50000", "100", 1)} {
		if got := shape(p); got != before {
			t.Errorf("a policy changed the message's shape: %s, want %s", got, before)
		}
	}
}
