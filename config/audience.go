package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// checkAudience reports a block or a campaign whose targets, all known,
// are more than its max_targets. Targets count per message: a user two
// notifications reach counts twice. Targets still unknown (recipients not
// fetched) are checked when Resolve knows them. current maps a message as
// Load evaluated it to the one of cfg; nil means itself.
func (e *evaluation) checkAudience(cfg *Config, current func(*Message) *Message) hcl.Diagnostics {
	if current == nil {
		current = func(m *Message) *Message { return m }
	}
	var diags hcl.Diagnostics
	for _, br := range e.blocks {
		if br.mb.duplicate || br.settings.maxTargets == 0 {
			continue
		}
		n, known := 0, true
		for _, m := range br.messages {
			m = current(m)
			known = known && !m.Targets.Unknown
			n += len(m.Targets.IDs)
		}
		if known && n > br.settings.maxTargets {
			what := fmt.Sprintf("%s reaches %d targets", br.mb.address(), n)
			if _, ok := br.mb.content.Attributes["for_each"]; ok {
				what += fmt.Sprintf(" over its %d instance%s", len(br.messages), plural(len(br.messages)))
			}
			diags = append(diags, audienceDiag(what, br.settings.maxTargets, br.mb.content.Attributes["max_targets"]))
		}
	}
	for _, name := range e.mod.campaignNames {
		c := cfg.Campaigns[name]
		if c.MaxTargets == 0 {
			continue
		}
		n, msgs, known := 0, 0, true
		for _, m := range cfg.Messages {
			if m.Campaign == name {
				known = known && !m.Targets.Unknown
				n += len(m.Targets.IDs)
				msgs++
			}
		}
		if known && n > c.MaxTargets {
			what := fmt.Sprintf("campaign.%s reaches %d targets over its %d message%s", name, n, msgs, plural(msgs))
			diags = append(diags, audienceDiag(what, c.MaxTargets, e.mod.campaigns[name].attrs["max_targets"]))
		}
	}
	return diags
}

func audienceDiag(what string, max int, a *hcl.Attribute) *hcl.Diagnostic {
	return errDiag("Audience over max_targets",
		fmt.Sprintf("%s; max_targets is %d. Check the recipients source and for_each, or raise max_targets.", what, max),
		a.Expr.Range().Ptr())
}
