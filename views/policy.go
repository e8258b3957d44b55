package views

import (
	"fmt"
	"io"
	"strings"

	"pushform/plandoc"
	"pushform/termtext"
)

// The results of policies (package policy) as every view shows them: in
// the human plan and apply after the summary, in the plan comment as a
// table at the top, in plan --json under policies, and as an apply
// --json event.

// failuresShown is how many failures of one policy the human views list;
// the rest are counted.
const failuresShown = 10

// policyTally counts the results: "1 denied, 1 warned, 2 passed".
func policyTally(results []plandoc.Policy) string {
	n := map[string]int{}
	for _, r := range results {
		n[r.Result]++
	}
	var parts []string
	for _, c := range []struct{ result, word string }{
		{plandoc.Deny, "denied"}, {plandoc.Overridden, "overridden"}, {plandoc.Warn, "warned"}, {plandoc.Pass, "passed"},
	} {
		if n[c.result] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[c.result], c.word))
		}
	}
	return strings.Join(parts, ", ")
}

// failureText is one failure as people read it: "ADDRESS: message", or
// the message alone when it names the address (error_message usually
// does) or is a policy's on the plan.
func failureText(f plandoc.Failure) string {
	if f.Address == nil || strings.Contains(f.Message, *f.Address) {
		return f.Message
	}
	return *f.Address + ": " + f.Message
}

// writePolicies writes the human policy section: each policy that did not
// pass with where it is and its failures, then the tally.
func writePolicies(b *strings.Builder, results []plandoc.Policy, pal palette) {
	if len(results) == 0 {
		return
	}
	b.WriteString("\n")
	for _, r := range results {
		name := termtext.Clean(r.Name)
		var head string
		switch r.Result {
		case plandoc.Pass:
			continue
		case plandoc.Deny:
			head = pal.red("Policy " + name + " denies this plan")
		case plandoc.Warn:
			head = pal.yellow("Policy " + name + " warns")
		case plandoc.Overridden:
			head = pal.yellow("Policy "+name+" is overridden") + ", --override-reason " + termtext.Clean(fmt.Sprintf("%q", r.Override.Reason))
		}
		fmt.Fprintf(b, "%s (%s, %s:%d):\n", head, r.Enforcement, termtext.Clean(r.File), r.Line)
		for i, f := range r.Failures {
			if i == failuresShown {
				fmt.Fprintf(b, "  … and %s more\n", Count(len(r.Failures)-i))
				break
			}
			fmt.Fprintf(b, "  %s\n", termtext.Clean(failureText(f)))
		}
	}
	fmt.Fprintf(b, "%s %s.\n", pal.bold("Policies:"), policyTally(results))
}

// policyResultWords name the results in the plan comment.
var policyResultWords = map[string]string{
	plandoc.Pass:       "✓ pass",
	plandoc.Warn:       "⚠️ warn",
	plandoc.Deny:       "✗ deny",
	plandoc.Overridden: "↷ overridden",
}

// writePolicyTable writes the plan comment's policy table: name, result
// and message of each policy, the first failure's message (and how many
// more), an override's reason.
func writePolicyTable(b *strings.Builder, results []plandoc.Policy) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(b, "**Policies:** %s\n\n| Policy | Result | Message |\n|---|---|---|\n", policyTally(results))
	for _, r := range results {
		msg := ""
		if len(r.Failures) > 0 {
			msg = md(truncateRunes(failureText(r.Failures[0]), 300))
			if n := len(r.Failures) - 1; n > 0 {
				msg += fmt.Sprintf(" (and %s more)", plural(n, "change", "changes"))
			}
		}
		if r.Override != nil {
			msg += " — overridden: " + md(truncateRunes(r.Override.Reason, 300))
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCode(r.Name), policyResultWords[r.Result], strings.TrimSpace(msg))
	}
	b.WriteString("\n")
}

// truncateRunes cuts s to n characters, marking the cut.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Policies shows the policy section, as the human plan does.
func (v *ApplyHuman) Policies(results []plandoc.Policy) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	writePolicies(&b, results, v.plan.pal)
	io.WriteString(v.w, b.String())
}

// Policies writes one line of type "policies" with the results, as plan
// --json lists them.
func (v *ApplyJSON) Policies(results []plandoc.Policy) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enc.Encode(struct {
		Type     string           `json:"type"`
		Policies []plandoc.Policy `json:"policies"`
	}{"policies", results})
	v.flushLocked()
}
