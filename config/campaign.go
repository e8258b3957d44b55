package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var campaignSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "send_rate"},
		{Name: "max_targets"},
		{Name: "enabled"},
		{Name: "repeat_after"},
		{Name: "deliver_at_local"},
		{Name: "test_devices"},
		{Name: "require_test_send"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "notification", LabelNames: []string{"name"}},
		{Type: "badge", LabelNames: []string{"name"}},
		{Type: "frequency_cap"},
		{Type: "time_zones"},
		{Type: "quiet_hours"},
		{Type: "rollout"},
		{Type: "user_data"},
		{Type: "device_data"},
		{Type: "locales"},
		{Type: "translation", LabelNames: []string{"locale"}},
	},
}

// campaignBlock is a decoded campaign block; its attributes wait for the
// evaluation context.
type campaignBlock struct {
	name     string
	block    *hcl.Block
	attrs    hcl.Attributes
	messages []*messageBlock
	freqCap  *frequencyCapBlock
	local    localBlocks
	rollout  *rolloutBlock
	persons  personBlocks
	// translations are the campaign's translation blocks: those of its
	// notifications that have none of a locale.
	translations []*translationBlock
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
	cb.rollout, d = decodeRollouts(content.Blocks, "A campaign")
	diags = append(diags, d...)
	cb.translations, d = decodeTranslations(content.Blocks)
	diags = append(diags, d...)
	for _, mb := range content.Blocks {
		if isLocal, d := cb.local.add(mb, "A campaign"); isLocal {
			diags = append(diags, d...)
			continue
		}
		if isPerson, d := cb.persons.add(mb, "A campaign"); isPerson {
			diags = append(diags, d...)
			continue
		}
		if mb.Type == "rollout" || mb.Type == "translation" {
			continue
		}
		if mb.Type == "frequency_cap" {
			fb, d := decodeAttrBlock(mb, frequencyCapSchema)
			diags = append(diags, d...)
			if cb.freqCap != nil {
				diags = append(diags, duplicateSingle("A campaign", "frequency_cap", cb.freqCap.block, mb))
				continue
			}
			cb.freqCap = fb
			continue
		}
		m, d := decodeMessageBlock(mb, cb.name)
		diags = append(diags, d...)
		if m != nil {
			cb.messages = append(cb.messages, m)
		}
	}
	return cb, diags
}

// evalCampaign evaluates the campaign's own attributes; dir is the
// configuration directory.
func evalCampaign(cb *campaignBlock, ctx *hcl.EvalContext, dir string) (Campaign, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	c := Campaign{Name: cb.name, Pos: posOf(cb.block.DefRange)}
	if a, ok := cb.attrs["description"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			c.Description = v
		}
	}
	if a, ok := cb.attrs["send_rate"]; ok {
		r, d := evalRate(a, ctx)
		diags = append(diags, d...)
		c.SendRate, c.SendRatePos = r, posOf(a.NameRange)
	}
	if a, ok := cb.attrs["max_targets"]; ok {
		n, _, d := evalCount(a, ctx)
		diags = append(diags, d...)
		c.MaxTargets, c.MaxTargetsPos = n, posOf(a.NameRange)
	}
	if a, ok := cb.attrs["enabled"]; ok {
		v, set, d := evalKnown(a, ctx, cty.Bool)
		diags = append(diags, d...)
		c.Disabled = set && v.False()
	}
	if a, ok := cb.attrs["repeat_after"]; ok {
		r, _, d := evalDuration(a, ctx)
		diags = append(diags, d...)
		c.RepeatAfter = r
	}
	if a, ok := cb.attrs["deliver_at_local"]; ok {
		l, d := evalDeliverAtLocal(a, ctx)
		diags = append(diags, d...)
		c.DeliverAtLocal = l
	}
	z, q, d := cb.local.eval(ctx)
	diags = append(diags, d...)
	c.TimeZones, c.QuietHours = z, q
	if a, ok := cb.attrs["test_devices"]; ok {
		devs, d := evalTestDevices(a, ctx)
		diags = append(diags, d...)
		c.TestDevices = devs
	}
	c.RequireTestSend, d = evalRequireTestSend(cb.attrs, ctx)
	diags = append(diags, d...)
	if cb.rollout != nil {
		r, d := evalRollout(cb.rollout, ctx)
		diags = append(diags, d...)
		c.Rollout = r
	}
	if cb.freqCap != nil {
		fc, d := evalFrequencyCap(cb.freqCap, ctx)
		diags = append(diags, d...)
		c.FrequencyCap = fc
	}
	ps, d := cb.persons.eval(ctx, dir)
	diags = append(diags, d...)
	c.UserData, c.DeviceData, c.Locales = ps.user, ps.device, ps.locales
	return c, diags
}
