// Package policy evaluates a configuration's policy blocks on a plan: the
// guardrails a team writes once, checked on every plan and by apply before
// anything is sent. Data in (the policies, the plan document, the
// overrides), results out (plandoc.Policy, one per policy); nothing here
// prints.
package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"pushform/config"
	"pushform/plandoc"
)

// Evaluate checks every policy against the plan document d and returns one
// result per policy, in order. A policy with for_each_change is checked
// once per change that sends (plandoc.Change.Sends), with change set; any
// other once, on plan. d's Policies are left out of the plan object (nil:
// null). overrides let failed deny policies through, by name.
func Evaluate(policies []*config.Policy, d *plandoc.Document, overrides []plandoc.Override) []plandoc.Policy {
	results := make([]plandoc.Policy, 0, len(policies))
	if len(policies) == 0 {
		return results
	}
	doc := *d
	doc.Policies = nil
	plan := doc.Value()
	var changes []cty.Value // plan.changes, split once
	for _, p := range policies {
		r := plandoc.Policy{Name: p.Name, Enforcement: p.Enforcement, File: p.Pos.Filename, Line: p.Pos.Line,
			ForEachChange: p.ForEachChange, Failures: []plandoc.Failure{}}
		if !p.ForEachChange {
			r.Checked = 1
			if msg, ok := check(p, plan, cty.NilVal); !ok {
				r.Failures = append(r.Failures, plandoc.Failure{Message: msg})
			}
		} else {
			if changes == nil {
				changes = plan.GetAttr("changes").AsValueSlice()
			}
			for i, c := range doc.Changes {
				if !c.Sends {
					continue
				}
				r.Checked++
				if msg, ok := check(p, plan, changes[i]); !ok {
					addr := c.Address
					r.Failures = append(r.Failures, plandoc.Failure{Address: &addr, Message: msg})
				}
			}
		}
		r.Result, r.Override = outcome(p, len(r.Failures) > 0, overrides)
		results = append(results, r)
	}
	return results
}

// outcome is the Result of policy p, failed or not, and the override
// that lets it through when one does.
func outcome(p *config.Policy, failed bool, overrides []plandoc.Override) (string, *plandoc.Override) {
	switch {
	case !failed:
		return plandoc.Pass, nil
	case p.Enforcement == config.PolicyWarn:
		return plandoc.Warn, nil
	}
	if i := slices.IndexFunc(overrides, func(o plandoc.Override) bool { return o.Policy == p.Name }); i >= 0 {
		o := overrides[i]
		return plandoc.Overridden, &o
	}
	return plandoc.Deny, nil
}

// check evaluates p's condition with plan (and change, when not NilVal):
// ok, or the failure's message.
func check(p *config.Policy, plan, change cty.Value) (msg string, ok bool) {
	ctx := p.Scope.NewChild()
	ctx.Variables = map[string]cty.Value{"plan": plan}
	if change != cty.NilVal {
		ctx.Variables["change"] = change
	}
	v, diags := p.Condition.Value(ctx)
	if diags.HasErrors() {
		return "the condition could not be evaluated: " + diags.Error(), false
	}
	v, err := convert.Convert(v, cty.Bool)
	switch {
	case err != nil:
		return fmt.Sprintf("the condition is not a bool: %v", err), false
	case v.IsNull():
		return "the condition is null", false
	case !v.IsKnown():
		return "the condition is not known", false
	case v.True():
		return "", true
	}
	m, diags := p.ErrorMessage.Value(ctx)
	if diags.HasErrors() {
		return "the condition failed, and the error_message could not be evaluated: " + diags.Error(), false
	}
	m, err = convert.Convert(m, cty.String)
	if err != nil || m.IsNull() || !m.IsKnown() {
		return "the condition failed, and the error_message is not a string", false
	}
	return m.AsString(), false
}

// Reviewed holds the overrides of a saved plan to what its reviewer saw:
// an overridden result with a failure that the saved plan's results
// (reviewed) do not show for the same policy, overridden, is a deny again,
// with no override. A policy or a configuration changed between plan and
// apply finds failures nobody approved; the override names the policy, but
// it was granted for those failures. It returns the results and the names
// of the policies it denied again.
func Reviewed(results, reviewed []plandoc.Policy) (out []plandoc.Policy, unreviewed []string) {
	out = slices.Clone(results)
	for i, r := range out {
		if r.Result != plandoc.Overridden {
			continue
		}
		j := slices.IndexFunc(reviewed, func(s plandoc.Policy) bool { return s.Name == r.Name && s.Result == plandoc.Overridden })
		if j >= 0 && !slices.ContainsFunc(r.Failures, func(f plandoc.Failure) bool {
			return !slices.ContainsFunc(reviewed[j].Failures, func(s plandoc.Failure) bool { return sameFailure(f, s) })
		}) {
			continue
		}
		out[i].Result, out[i].Override = plandoc.Deny, nil
		unreviewed = append(unreviewed, r.Name)
	}
	return out, unreviewed
}

// sameFailure reports whether a and b are the same failure: the same
// change (or both of the whole plan) and the same message.
func sameFailure(a, b plandoc.Failure) bool {
	return a.Message == b.Message && (a.Address == nil) == (b.Address == nil) && (a.Address == nil || *a.Address == *b.Address)
}

// Denied returns the results that stop a plan or an apply: failed deny
// policies that no override let through.
func Denied(results []plandoc.Policy) []plandoc.Policy { return having(results, plandoc.Deny) }

// Overridden returns the results of failed deny policies an override let
// through: what apply records in the state's history.
func Overridden(results []plandoc.Policy) []plandoc.Policy {
	return having(results, plandoc.Overridden)
}

// having returns the results whose Result is result.
func having(results []plandoc.Policy, result string) []plandoc.Policy {
	var out []plandoc.Policy
	for _, r := range results {
		if r.Result == result {
			out = append(out, r)
		}
	}
	return out
}

// CheckOverrides refuses overrides that name no policy of policies, or a
// warn policy (a warning needs no override), so a typo never looks like
// a granted override.
func CheckOverrides(policies []*config.Policy, overrides []plandoc.Override) error {
	for _, o := range overrides {
		i := slices.IndexFunc(policies, func(p *config.Policy) bool { return p.Name == o.Policy })
		switch {
		case i < 0:
			var names []string
			for _, p := range policies {
				names = append(names, p.Name)
			}
			known := "there are none"
			if len(names) > 0 {
				known = "the policies are " + strings.Join(names, ", ")
			}
			return fmt.Errorf("--override-policy %s names no policy (%s); nothing was sent", o.Policy, known)
		case policies[i].Enforcement == config.PolicyWarn:
			return fmt.Errorf("--override-policy %s names a warn policy, which stops nothing: only a deny policy is overridden; nothing was sent", o.Policy)
		}
	}
	return nil
}

// DeniedError is a plan or an apply a deny policy stopped: nothing was
// sent.
type DeniedError struct {
	Denied []plandoc.Policy
	// Apply says an apply was stopped (Saved: of a saved plan), not a
	// plan.
	Apply, Saved bool
	// Unreviewed names the denied policies that the saved plan overrides
	// for other failures than these (see Reviewed).
	Unreviewed []string
}

func (e *DeniedError) Error() string {
	names := make([]string, 0, len(e.Denied))
	for _, r := range e.Denied {
		names = append(names, r.Name)
	}
	var b strings.Builder
	if len(names) == 1 {
		fmt.Fprintf(&b, "deny policy %s failed", names[0])
	} else {
		fmt.Fprintf(&b, "deny policies %s failed", strings.Join(names, ", "))
	}
	if e.Apply {
		b.WriteString(": nothing was sent. ")
		for _, name := range e.Unreviewed {
			fmt.Fprintf(&b, "The saved plan's override of %s covers the failures its plan showed, not those apply found checking the policies again (the policy or the configuration changed since the plan was made). ", name)
		}
	} else {
		b.WriteString(": apply would send nothing. ")
	}
	flags := "--override-policy " + strings.Join(names, " --override-policy ") + " --override-reason TEXT"
	switch {
	case e.Saved:
		fmt.Fprintf(&b, "Fix what it names and plan again, or, when it must go out as it is, make the plan with %s and apply that", flags)
	case e.Apply:
		fmt.Fprintf(&b, "Fix what it names, or, when it must go out as it is, apply with %s", flags)
	default:
		fmt.Fprintf(&b, "Fix what it names and plan again, or, when it must go out as it is, plan with %s --out FILE and apply that plan", flags)
	}
	return b.String()
}
