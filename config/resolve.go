package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Resolve completes cfg, the Config the last Load of l returned, with the
// recipients lists fetched for its data sources (by data source name), and
// returns the completed Config. It reads no file and parses nothing again:
//
//   - a message whose user_ids is exactly data.recipients.NAME.user_ids
//     gets the fetched slice itself (shared, not copied);
//   - a message block with any other attribute that reads a data source,
//     directly or through a local, is evaluated again, with the locals that
//     read data, for each of its for_each instances;
//   - everything else is shared with cfg, which is left unchanged.
//
// The diagnostics are only those Load did not report: the errors and
// warnings that the recipients lists bring.
func (l *Loader) Resolve(cfg *Config, recipients map[string][]string) (*Config, hcl.Diagnostics) {
	e := l.last
	if e == nil || cfg != e.cfg {
		return nil, hcl.Diagnostics{errDiag("Configuration not loaded",
			"Resolve completes the Config returned by the same Loader's last Load; load the configuration again.", nil)}
	}
	if recipients == nil {
		return cfg, nil
	}
	l.budget.unlimited()
	out := *cfg
	out.Messages = make([]*Message, len(cfg.Messages))
	replaced := map[*Message]*Message{}
	var diags hcl.Diagnostics

	var ctx *hcl.EvalContext
	sc := *e.blockScope
	sc.recipients = recipients
	for _, br := range e.blocks {
		if br.mb.duplicate {
			continue
		}
		if !br.dataDependent {
			for _, m := range br.messages {
				if m.Targets.Recipients == "" {
					continue
				}
				if ids, ok := recipients[m.Targets.Recipients]; ok {
					c := *m
					c.Targets.IDs = ids // shared, not copied: the list may be huge
					c.Targets.Unknown = false
					replaced[m] = &c
				}
			}
			continue
		}
		if ctx == nil {
			var d hcl.Diagnostics
			ctx, d = e.dataContext(recipients)
			diags = append(diags, d...)
		}
		msgs, d := expandMessage(br, br.instances, ctx, &sc, nil)
		diags = append(diags, d...)
		for i, m := range br.messages {
			if m != nil && msgs[i] != nil {
				msgs[i].Shape = m.Shape // as Load walked it: with the data sources unknown
			}
			replaced[m] = msgs[i]
		}
	}
	if ctx != nil {
		diags = append(diags, e.checkDataSecrets(ctx)...)
	}
	for i, m := range cfg.Messages {
		if r, ok := replaced[m]; ok {
			m = r
		}
		out.Messages[i] = m
	}
	e.resolved, e.scope = recipients, ctx

	diags = append(diags, e.checkAudience(&out, func(m *Message) *Message {
		if r, ok := replaced[m]; ok {
			return r
		}
		return m
	})...)

	var fresh hcl.Diagnostics
	if len(diags) > 0 {
		diags = dedupe(l.redaction().diags(diags))
	}
	for _, d := range diags {
		if !e.reported[keyOf(d)] {
			fresh = append(fresh, d)
		}
	}
	return &out, sortDiags(fresh)
}

// ResolvesByReference reports whether Resolve would complete cfg (the
// Config of this Loader's last Load) only by giving each message that
// waits for recipients the fetched list itself: no block reads a data
// source other than through a bare data.recipients.NAME.user_ids. A plan
// can then be made while the list is still arriving.
func (l *Loader) ResolvesByReference(cfg *Config) bool {
	e := l.last
	if e == nil || cfg != e.cfg {
		return false
	}
	for _, br := range e.blocks {
		if br.dataDependent && !br.mb.duplicate {
			return false
		}
	}
	return true
}

// resolvedScope is the root scope with the recipients the last Resolve was
// given: the locals that read them known. Resolve reported what
// evaluating them found.
func (e *evaluation) resolvedScope() *hcl.EvalContext {
	if e.scope == nil {
		e.scope, _ = e.dataContext(e.resolved)
	}
	return e.scope
}

// ResolvedPolicies returns the policies of cfg (the Config of this
// Loader's last Load) with the configuration's own reading the recipients:
// a condition over a local of the list sees the list, as the messages
// Resolve completes do (a policy directory's reads no local). Without
// recipients, or a data source, they are cfg's, and so is a policy that
// reads no data source.
func (l *Loader) ResolvedPolicies(cfg *Config, recipients map[string][]string) []*Policy {
	e := l.last
	if e == nil || cfg != e.cfg || recipients == nil || len(cfg.DataSources) == 0 {
		return cfg.Policies
	}
	var scope *hcl.EvalContext
	out := make([]*Policy, len(cfg.Policies))
	for i, p := range cfg.Policies {
		// Only a policy that reads the list gets it: a list of millions
		// is not made into a value for the others.
		if p.Scope == e.root && (refersToData(p.Condition, e.dataLocals) || refersToData(p.ErrorMessage, e.dataLocals)) {
			if scope == nil {
				scope, _ = e.dataContext(recipients) // what the list makes of the locals, Resolve reports
			}
			c := *p
			c.Scope = scope
			p = &c
		}
		out[i] = p
	}
	return out
}

// dataContext is the evaluation context with the recipients supplied: the
// locals that read data are evaluated again, the others kept.
func (e *evaluation) dataContext(recipients map[string][]string) (*hcl.EvalContext, hcl.Diagnostics) {
	rv := recipientsValue(e.mod, recipients)
	var diags hcl.Diagnostics
	locals := e.locals
	if len(e.dataLocals) > 0 {
		keep := func(name string) (cty.Value, bool) {
			if e.dataLocals[name] {
				return cty.NilVal, false
			}
			v, ok := e.locals[name]
			return v, ok
		}
		locals, diags = evalLocals(e.mod.locals, e.context(rv, nil), keep)
	}
	return e.context(rv, locals), diags
}
