package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// evalTestDevices evaluates test_devices: the device ids `pushform
// test-send` sends to when given none. They must be known at validate
// time and non-empty.
func evalTestDevices(a *hcl.Attribute, ctx *hcl.EvalContext) ([]string, hcl.Diagnostics) {
	v, set, diags := evalKnown(a, ctx, cty.List(cty.String))
	if !set {
		return nil, diags
	}
	var out []string
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		if ev.IsNull() || strings.TrimSpace(ev.AsString()) == "" {
			return nil, append(diags, errDiag("Invalid test_devices",
				fmt.Sprintf("test_devices lists device ids to send test sends to; element %d is empty.", i), a.Expr.Range().Ptr()))
		}
		out = append(out, ev.AsString())
	}
	if len(out) == 0 {
		return nil, append(diags, errDiag("Empty test_devices",
			"test_devices lists the device ids pushform test-send sends to by default; omit it rather than leave it empty.", a.Expr.Range().Ptr()))
	}
	return out, diags
}

// TestDevices returns the default targets of a test send of m: its
// campaign's test_devices, else the service block's.
func (c *Config) TestDevices(m *Message) []string {
	if camp, ok := c.Campaigns[m.Campaign]; ok && len(camp.TestDevices) > 0 {
		return camp.TestDevices
	}
	return c.Service.TestDevices
}
