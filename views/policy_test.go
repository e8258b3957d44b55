package views

import (
	"bytes"
	"strings"
	"testing"

	"pushform/plandoc"
	"pushform/planner"
)

// policyResults are one of each result, with text a hostile
// configuration could hold (markup, a terminal escape, a pipe).
func policyResults() []plandoc.Policy {
	addr := `notification.order["A|1"]`
	return []plandoc.Policy{
		{Name: "rollout", Enforcement: "deny", Result: plandoc.Deny, File: "main.hcl", Line: 12, ForEachChange: true, Checked: 2,
			Failures: []plandoc.Failure{{Address: &addr, Message: "reaches 60000 people \x1b[31mwithout\x1b[0m a *rollout*"}}},
		{Name: "https_only", Enforcement: "deny", Result: plandoc.Overridden, File: "../org/web.policy.hcl", Line: 1, ForEachChange: true, Checked: 2,
			Failures: []plandoc.Failure{{Address: &addr, Message: addr + " opens http://x"}}, Override: &plandoc.Override{Policy: "https_only", Reason: "no TLS | yet"}},
		{Name: "volume", Enforcement: "warn", Result: plandoc.Warn, File: "main.hcl", Line: 20, Checked: 1,
			Failures: []plandoc.Failure{{Message: "this plan sends 60010 pushes"}}},
		{Name: "quiet", Enforcement: "deny", Result: plandoc.Pass, File: "main.hcl", Line: 30, Checked: 1, Failures: []plandoc.Failure{}},
	}
}

func TestPolicyViews(t *testing.T) {
	var human strings.Builder
	writePolicies(&human, policyResults(), palette(false))
	want := `
Policy rollout denies this plan (deny, main.hcl:12):
  notification.order["A|1"]: reaches 60000 people \x1b[31mwithout\x1b[0m a *rollout*
Policy https_only is overridden, --override-reason "no TLS | yet" (deny, ../org/web.policy.hcl:1):
  notification.order["A|1"] opens http://x
Policy volume warns (warn, main.hcl:20):
  this plan sends 60010 pushes
Policies: 1 denied, 1 overridden, 1 warned, 1 passed.
`
	if human.String() != want {
		t.Errorf("human:\n%s\nwant:\n%s", human.String(), want)
	}

	var md strings.Builder
	writePolicyTable(&md, policyResults())
	for _, line := range []string{
		"**Policies:** 1 denied, 1 overridden, 1 warned, 1 passed",
		"| Policy | Result | Message |",
		"| `rollout` | ✗ deny | notification.order\\[\"A\\|1\"\\]: reaches 60000 people \\\\x1b\\[31mwithout\\\\x1b\\[0m a \\*rollout\\* |",
		"| `https_only` | ↷ overridden | notification.order\\[\"A\\|1\"\\] opens http://x — overridden: no TLS \\| yet |",
		"| `volume` | ⚠️ warn | this plan sends 60010 pushes |",
		"| `quiet` | ✓ pass |  |",
	} {
		if !strings.Contains(md.String(), line+"\n") {
			t.Errorf("the table has no line %q:\n%s", line, md.String())
		}
	}
	if strings.Contains(human.String()+md.String(), "\x1b") {
		t.Error("a terminal escape reached the output raw")
	}

	var none strings.Builder
	writePolicies(&none, nil, palette(false))
	writePolicyTable(&none, nil)
	if none.Len() != 0 {
		t.Errorf("no policies: %q", none.String())
	}

	var events bytes.Buffer
	v := NewApplyJSON(&events)
	v.Policies(policyResults()[2:3])
	if got := strings.Split(events.String(), "\n")[1]; got != `{"type":"policies","policies":[{"name":"volume","enforcement":"warn","result":"warn","file":"main.hcl","line":20,"for_each_change":false,"checked":1,"failures":[{"address":null,"message":"this plan sends 60010 pushes"}],"override":null}]}` {
		t.Errorf("apply --json policies line: %s", got)
	}
}

func TestReachLine(t *testing.T) {
	for _, tc := range []struct {
		reach *planner.Reach
		want  string
	}{
		{nil, ""},
		{&planner.Reach{}, ""},
		{&planner.Reach{Users: 12480, NewUsers: 1204, Devices: 18300, Topics: 2, AlreadyHad: 30},
			"Reach: 12,480 users (1,204 new), about 18,300 devices (as last reported), 2 topics; 30 targets already had this content."},
		{&planner.Reach{Devices: 1}, "Reach: about 1 device (as last reported)."},
	} {
		p := &planner.Plan{Summary: planner.Summary{Reach: tc.reach}}
		if got := ReachLine(p); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.reach, got, tc.want)
		}
	}
}
