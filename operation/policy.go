package operation

import (
	"time"

	"pushform/plandoc"
	"pushform/planner"
	"pushform/policy"
	"pushform/state"
)

// Policies evaluates the configuration's policies on p with overrides
// (see package policy): one result per policy, an empty list when there
// are none. An override that names no deny policy is an error.
func (r *Run) Policies(p *planner.Plan, overrides []plandoc.Override) ([]plandoc.Policy, error) {
	// With the recipients the plan was made with: a condition over a
	// local of the list sees it, at plan and at apply of the saved plan.
	cfg := r.Session.Config
	policies := r.Loader.ResolvedPolicies(cfg, recipientsByName(cfg, p.Recipients))
	if err := policy.CheckOverrides(policies, overrides); err != nil {
		return nil, err
	}
	if len(policies) == 0 {
		return []plandoc.Policy{}, nil // no plan document to build
	}
	return policy.Evaluate(policies, plandoc.New(p), overrides), nil
}

// overrideEntry is the journal entry of the overrides results holds, at
// time now; ok is false when there are none. An override of a policy on
// the whole plan is recorded under every address the plan sends to.
func overrideEntry(results []plandoc.Policy, p *planner.Plan, now time.Time) (e state.Entry, ok bool) {
	var overrides []state.Override
	for _, r := range policy.Overridden(results) {
		o := state.Override{Time: now, Policy: r.Name, Reason: r.Override.Reason}
		for _, f := range r.Failures {
			if f.Address != nil {
				o.Addresses = append(o.Addresses, *f.Address)
			}
		}
		if !r.ForEachChange {
			for _, c := range p.Changes {
				if planner.SendsNow(c.Action) {
					o.Addresses = append(o.Addresses, c.Address)
				}
			}
		}
		overrides = append(overrides, o)
	}
	if len(overrides) == 0 {
		return state.Entry{}, false
	}
	return state.OverrideEntry(now, overrides), true
}
