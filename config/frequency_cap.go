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
type frequencyCapBlock struct {
	block *hcl.Block
	attrs hcl.Attributes
}

func decodeFrequencyCapBlock(b *hcl.Block) (*frequencyCapBlock, hcl.Diagnostics) {
	content, diags := b.Body.Content(frequencyCapSchema)
	return &frequencyCapBlock{block: b, attrs: content.Attributes}, diags
}

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

// duplicateFrequencyCap reports a second frequency_cap where one is allowed.
func duplicateFrequencyCap(where string, first, this *hcl.Block) *hcl.Diagnostic {
	return errDiag("Duplicate frequency_cap block",
		fmt.Sprintf("%s has at most one frequency_cap; the first is at %s.", where, rangePos(first.DefRange)), this.DefRange.Ptr())
}
