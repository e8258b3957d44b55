package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"pushform/secret"
)

// A value that holds a secret would be printed in the plan, stored in the
// state and sent to devices: `title = var.k` with PUSHFORM_VAR_k set to
// the API key. Load reports every such value as an error, before anything
// is sent, naming the attribute and never the value.

// knownSecret is a secret Load looks for in evaluated values.
type knownSecret struct {
	what   string // "the API key (PUSHFORM_API_KEY)"
	values []string
	red    *secret.Redactor
}

// BackendSecrets may be implemented by the BackendTypes of a Loader: the
// secrets a backend block reads from the environment (the password of the
// connection string a backend "pg" block names), which Load then looks
// for in evaluated values as it does for the API key.
type BackendSecrets interface {
	BackendSecrets(b *Backend, getenv func(string) string) []BackendSecret
}

// BackendSecret is one secret of a backend block.
type BackendSecret struct {
	// What names it in a diagnostic, without its value: "the database
	// password (PUSHFORM_PG_CONN_STR)".
	What string
	// Values are its spellings (a password as written and unescaped).
	Values []string
}

// knownSecrets are the secrets the configuration names: the value of the
// variable api_key_env names, and those of the backend block (through
// types, when it implements BackendSecrets).
func knownSecrets(cfg *Config, opts Options, types BackendTypes) []knownSecret {
	env := func(name string) string {
		for i := len(opts.Environ) - 1; i >= 0; i-- { // the last one wins, as in a shell
			if k, v, ok := strings.Cut(opts.Environ[i], "="); ok && k == name {
				return v
			}
		}
		return ""
	}
	var out []knownSecret
	add := func(what string, values ...string) {
		if r := secret.NewRedactor(values...); r.Active() {
			out = append(out, knownSecret{what, values, r})
		}
	}
	if name := cfg.Service.APIKeyEnv; name != "" {
		add(fmt.Sprintf("the API key (%s)", name), env(name))
	}
	if bs, ok := types.(BackendSecrets); ok && cfg.Backend != nil {
		for _, s := range bs.BackendSecrets(cfg.Backend, env) {
			add(s.What, s.Values...)
		}
	}
	return out
}

// redactorOf is one Redactor for every known secret, for diagnostics.
func redactorOf(known []knownSecret) *secret.Redactor {
	var all []string
	for _, k := range known {
		all = append(all, k.values...)
	}
	return secret.NewRedactor(all...)
}

// checkSecrets reports each attribute of each block whose evaluated value
// holds a known secret, once per block and attribute however many
// for_each instances share it.
func (e *evaluation) checkSecrets(known []knownSecret) hcl.Diagnostics {
	if len(known) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	report := func(what, attr, where string, rng *hcl.Range) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s appears in %s", upperFirst(what), attr),
			Detail: fmt.Sprintf("The value of %s in %s holds %s (in some form: as is, in another letter case, encoded or split by invisible characters). "+
				"It would be shown in plans, stored in the state and sent to devices, so nothing is sent: take the secret out of the value (check the variables it reads).", attr, where, what),
			Subject: rng,
		})
	}
	// holds returns the first known secret s holds.
	holds := func(s string) (string, bool) {
		for _, k := range known {
			if k.red.Contains(s) {
				return k.what, true
			}
		}
		return "", false
	}
	for _, br := range e.blocks {
		attrs := br.mb.content.Attributes
		rangeOf := func(name string) *hcl.Range {
			if a, ok := attrs[name]; ok {
				return a.Expr.Range().Ptr()
			}
			return br.mb.block.DefRange.Ptr()
		}
		done := map[string]bool{}
		check := func(attr, where, value string) {
			if done[attr] || value == "" {
				return
			}
			if what, ok := holds(value); ok {
				done[attr] = true
				report(what, attr, where, rangeOf(attr))
			}
		}
		for _, m := range br.messages {
			if m == nil {
				continue
			}
			where := br.mb.address() // never the instance key, which may be what holds it
			check("for_each", where, m.Key)
			check("title", where, m.Content.Title)
			check("body", where, m.Content.Body)
			check("open_to_url", where, m.Content.OpenToURL)
			check("tag", where, m.Content.Tag)
			for _, id := range m.Targets.IDs {
				if done[string(m.Targets.Kind)] {
					break
				}
				check(string(m.Targets.Kind), where, id)
			}
		}
	}
	for _, name := range e.mod.campaignNames {
		if what, ok := holds(e.cfg.Campaigns[name].Description); ok {
			rng := e.mod.campaigns[name].block.DefRange.Ptr()
			if a, ok := e.mod.campaigns[name].attrs["description"]; ok {
				rng = a.Expr.Range().Ptr()
			}
			report(what, "description", "campaign."+name, rng)
		}
	}
	for name, tb := range e.mod.topics {
		if what, ok := holds(tb.topic.Description); ok {
			report(what, "description", "topic."+name, tb.decl.Ptr())
		}
	}
	return diags
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
