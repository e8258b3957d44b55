package config

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"pushform/secret"
)

// The secret promise: a value that holds a secret would be printed in the
// plan, stored in the state and sent to devices: `title = var.k` with
// PUSHFORM_VAR_k set to the API key. One walk over the evaluated
// configuration (evaluated.go) checks every string of every attribute of
// every block and nested block, in lists, maps and objects, for the known
// secrets; Load reports each one found as an error, before anything is
// sent, naming the attribute and never the value. The walk reads no list
// of attributes: whatever the language adds is checked.

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

// leaks collects what the walk of the evaluated configuration found
// (evaluated.go): each attribute of each block whose value holds a known
// secret, anywhere in it (a list, a map's keys and values, an object),
// once per block and attribute however many for_each instances share it.
// Safe for concurrent use.
type leaks struct {
	known []knownSecret
	mu    sync.Mutex
	found map[string]bool // where and path
	diags hcl.Diagnostics
}

func newLeaks(known []knownSecret) *leaks {
	return &leaks{known: known, found: map[string]bool{}}
}

// check reports the attribute path of the block where (at rng) when v
// holds a known secret.
func (l *leaks) check(where, path string, rng hcl.Range, v cty.Value) {
	if len(l.known) == 0 {
		return
	}
	what := ""
	eachString(v, func(s string) bool {
		for _, k := range l.known {
			if k.red.Contains(s) {
				what = k.what
				return false
			}
		}
		return true
	})
	if what == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if key := where + "\x00" + path; !l.found[key] {
		l.found[key] = true
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s appears in %s", upperFirst(what), path),
			Detail: fmt.Sprintf("The value of %s in %s holds %s (in some form: as is, in another letter case, encoded or split by invisible characters). "+
				"It would be shown in plans, stored in the state and sent to devices, so nothing is sent: take the secret out of the value (check the variables it reads).", path, where, what),
			Subject: rng.Ptr(),
		})
	}
}

// checkLabels checks the labels of b and of every block nested in it: a
// label names an address (notification.NAME, its variant "NAME"), shown
// in plans and stored in the state as it is. where is the top-level
// block's type: its labels may be what holds the secret.
func (l *leaks) checkLabels(where string, b *hclsyntax.Block) {
	for i, label := range b.Labels {
		rng := b.DefRange()
		if i < len(b.LabelRanges) {
			rng = b.LabelRanges[i]
		}
		l.check("a "+where+" block", "the label of the "+b.Type+" block", rng, cty.StringVal(label))
	}
	for _, nb := range b.Body.Blocks {
		l.checkLabels(where, nb)
	}
	// A moved block names addresses by reference, not by a string: its
	// names are printed by plans and stored in the state too.
	for _, a := range b.Body.Attributes {
		for _, t := range a.Expr.Variables() {
			for _, step := range t {
				name := ""
				switch s := step.(type) {
				case hcl.TraverseRoot:
					name = s.Name
				case hcl.TraverseAttr:
					name = s.Name
				}
				if name != "" {
					l.check("a "+where+" block", a.Name, a.Expr.Range(), cty.StringVal(name))
				}
			}
		}
	}
}

// diagnostics returns what check reported.
func (l *leaks) diagnostics() hcl.Diagnostics {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.diags
}

// eachString calls f with every known string in v, map keys and object
// attribute names included, until f returns false.
func eachString(v cty.Value, f func(string) bool) bool {
	if v.IsMarked() { // no configuration value is marked
		v, _ = v.Unmark()
	}
	if !v.IsKnown() || v.IsNull() {
		return true
	}
	switch ty := v.Type(); {
	case ty == cty.String:
		return f(v.AsString())
	case ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if !f(k.AsString()) || !eachString(e, f) {
				return false
			}
		}
	case ty.IsCollectionType() || ty.IsTupleType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !eachString(e, f) {
				return false
			}
		}
	}
	return true
}

// checkDataSecrets checks, once the recipients are known (ctx has them),
// the attributes of message blocks that read a data source, which the
// walk of Load saw unknown (a bare data.recipients.NAME.user_ids aside:
// it holds the service's ids, not the configuration's).
func (e *evaluation) checkDataSecrets(ctx *hcl.EvalContext) hcl.Diagnostics {
	if len(e.known) == 0 {
		return nil
	}
	lk := newLeaks(e.known)
	for _, br := range e.blocks {
		body, ok := br.mb.block.Body.(*hclsyntax.Body)
		if !br.dataDependent || !ok {
			continue
		}
		var attrs []*walkAttr
		layout(body, "", nil).each(func(a *walkAttr) {
			if _, bare := recipientsRef(a.attr.Expr); !bare && refersToData(a.attr.Expr, e.dataLocals) {
				attrs = append(attrs, a)
			}
		})
		where := br.mb.address()
		for _, in := range br.instances {
			ictx := instanceContext(ctx, in)
			for _, a := range attrs {
				v, _ := evalWalk(a, ictx)
				lk.check(where, a.path, a.attr.Expr.Range(), v)
			}
		}
	}
	return lk.diagnostics()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
