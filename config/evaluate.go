package config

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// evaluate turns a decoded module into a Config, in Packer's order:
// variable values, then the context (topics, data), then locals, then
// every block that may use them.
func evaluate(mod *module, opts Options) (*Config, []varFile, hcl.Diagnostics) {
	cfg := &Config{Dir: mod.dir, Topics: map[string]Topic{}, Campaigns: map[string]Campaign{}}
	vars, varFiles, diags := variableValues(mod, opts)
	for name, tb := range mod.topics {
		cfg.Topics[name] = tb.topic
	}
	funcs := functions(mod.dir)
	recipients := recipientsValue(mod, opts.Recipients)
	locals, d := evalLocals(mod.locals, newEvalContext(funcs, vars, cfg.Topics, recipients, nil), nil)
	diags = append(diags, d...)
	ctx := newEvalContext(funcs, vars, cfg.Topics, recipients, locals)

	if mod.service != nil {
		cfg.Service, d = evalService(mod.service, ctx, mod.dir)
		diags = append(diags, d...)
	}
	for _, name := range mod.campaignNames {
		c, d := evalCampaign(mod.campaigns[name], ctx)
		diags = append(diags, d...)
		cfg.Campaigns[name] = c
	}
	sc := &scope{data: mod.data, topics: cfg.Topics, recipients: opts.Recipients}
	for _, mb := range mod.messages {
		msgs, d := expandMessage(mb, ctx, sc)
		diags = append(diags, d...)
		if !mb.duplicate {
			cfg.Messages = append(cfg.Messages, msgs...)
		}
	}

	for name := range mod.data {
		cfg.DataSources = append(cfg.DataSources, name)
	}
	sort.Strings(cfg.DataSources)
	sortMessages(cfg.Messages)
	return cfg, varFiles, diags
}

// expandMessage evaluates for_each and decodes every instance of mb.
func expandMessage(mb *messageBlock, ctx *hcl.EvalContext, sc *scope) ([]*Message, hcl.Diagnostics) {
	insts, ok, diags := forEachInstances(mb, ctx)
	if !ok {
		return nil, diags
	}
	msgs := make([]*Message, 0, len(insts))
	for _, in := range insts {
		m, d := decodeMessage(mb, in, instanceContext(ctx, in), sc)
		diags = append(diags, d...)
		msgs = append(msgs, m)
	}
	return msgs, diags
}

func sortMessages(ms []*Message) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Address < ms[j].Address })
}
