package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

var frequencyCapSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max", Required: true},
		{Name: "per", Required: true},
	},
}

// frequencyCapBlock is a decoded frequency_cap block, at top level or in a
// campaign; max and per may use variables and locals.
type frequencyCapBlock = attrBlock

// evalFrequencyCap evaluates max and per; nil when either is unusable.
func evalFrequencyCap(fb *frequencyCapBlock, ctx *hcl.EvalContext) (*FrequencyCap, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	fc := &FrequencyCap{Pos: posOf(fb.block.DefRange)}
	ok := true
	if a, has := fb.attrs["max"]; has {
		n, set, d := evalCount(a, ctx)
		diags = append(diags, d...)
		fc.Max, ok = n, ok && set
	}
	if a, has := fb.attrs["per"]; has {
		per, set, d := evalDuration(a, ctx)
		diags = append(diags, d...)
		fc.Per, ok = per, ok && set
	}
	if !ok || fc.Max == 0 || fc.Per == 0 {
		return nil, diags
	}
	return fc, diags
}

// duplicateSingle reports this, a second block of its type where one is
// allowed: where is "A configuration" or "A campaign", noun what the
// detail calls the block ("frequency_cap", "time_zones block").
func duplicateSingle(where, noun string, first, this *hcl.Block) *hcl.Diagnostic {
	return errDiag("Duplicate "+this.Type+" block",
		fmt.Sprintf("%s has at most one %s; the first is at %s.", where, noun, rangePos(first.DefRange)), this.DefRange.Ptr())
}
