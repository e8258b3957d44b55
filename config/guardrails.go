package config

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// The guardrails of the service block and campaigns: how long a saved
// plan may wait for its apply (max_plan_age), and whether content must
// have reached a test device before it goes out (require_test_send).

// DefaultMaxPlanAge is max_plan_age when the service block sets none.
const DefaultMaxPlanAge = 24 * time.Hour

// evalServiceGuardrails evaluates the service block's max_plan_age and
// require_test_send into svc.
func evalServiceGuardrails(attrs hcl.Attributes, ctx *hcl.EvalContext, svc *Service) hcl.Diagnostics {
	var diags hcl.Diagnostics
	svc.MaxPlanAge = DefaultMaxPlanAge
	if a, ok := attrs["max_plan_age"]; ok {
		d, set, ds := evalDuration(a, ctx)
		diags = append(diags, ds...)
		switch {
		case !set:
		case d <= 0:
			diags = append(diags, errDiag("Invalid max_plan_age",
				fmt.Sprintf("max_plan_age is how long a saved plan may wait for its apply, such as \"24h\"; it must be positive, not %s.", d), a.Expr.Range().Ptr()))
		default:
			svc.MaxPlanAge = d
		}
	}
	var d hcl.Diagnostics
	svc.RequireTestSend, d = evalRequireTestSend(attrs, ctx)
	return append(diags, d...)
}

// evalRequireTestSend evaluates require_test_send, false when absent.
func evalRequireTestSend(attrs hcl.Attributes, ctx *hcl.EvalContext) (bool, hcl.Diagnostics) {
	a, ok := attrs["require_test_send"]
	if !ok {
		return false, nil
	}
	v, set, diags := evalKnown(a, ctx, cty.Bool)
	return set && v.True(), diags
}

// RequiresTestSend reports whether m's content must have a delivered test
// send before apply sends it: require_test_send in the service block or in
// m's campaign.
func (c *Config) RequiresTestSend(m *Message) bool {
	return c.Service.RequireTestSend || m.Campaign != "" && c.Campaigns[m.Campaign].RequireTestSend
}

// RequiresAnyTestSend reports whether any message of c requires a test
// send.
func (c *Config) RequiresAnyTestSend() bool {
	for _, m := range c.Messages {
		if c.RequiresTestSend(m) {
			return true
		}
	}
	return false
}
