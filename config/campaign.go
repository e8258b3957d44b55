package config

import "github.com/hashicorp/hcl/v2"

var campaignSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "notification", LabelNames: []string{"name"}},
		{Type: "badge", LabelNames: []string{"name"}},
	},
}

// campaignBlock is a decoded campaign block; its attributes wait for the
// evaluation context.
type campaignBlock struct {
	name     string
	block    *hcl.Block
	attrs    hcl.Attributes
	messages []*messageBlock
}

// decodeCampaignBlock decodes a campaign block and the message blocks in
// it; nil when its name is invalid.
func decodeCampaignBlock(b *hcl.Block) (*campaignBlock, hcl.Diagnostics) {
	diags := checkLabel(b, "campaign")
	if diags.HasErrors() {
		return nil, diags
	}
	content, d := b.Body.Content(campaignSchema)
	diags = append(diags, d...)
	cb := &campaignBlock{name: b.Labels[0], block: b, attrs: content.Attributes}
	for _, mb := range content.Blocks {
		m, d := decodeMessageBlock(mb, cb.name)
		diags = append(diags, d...)
		if m != nil {
			cb.messages = append(cb.messages, m)
		}
	}
	return cb, diags
}

// evalCampaign evaluates the campaign's own attributes.
func evalCampaign(cb *campaignBlock, ctx *hcl.EvalContext) (Campaign, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	c := Campaign{Name: cb.name, Pos: posOf(cb.block.DefRange)}
	if a, ok := cb.attrs["description"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			c.Description = v
		}
	}
	return c, diags
}
