package config

import (
	"fmt"
	"os"
	"path/filepath"
	"pushform/secret"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// DefaultAPIKeyEnv is the variable holding the API key when the service
// block does not name one.
const DefaultAPIKeyEnv = "PUSHFORM_API_KEY"

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// buildContext is the one place the evaluation context is made: var, data,
// topic and (after evalLocals) local, with the function table.
func (s *loadState) buildContext() {
	topics := map[string]cty.Value{}
	for name, b := range s.topics {
		desc := ""
		content, d := b.Body.Content(topicSchema)
		s.diags = append(s.diags, d...)
		if a, ok := content.Attributes["description"]; ok {
			if v, ok := s.literal(a, cty.String); ok && !v.IsNull() {
				desc = v.AsString()
			}
		}
		s.cfg.Topics[name] = Topic{Name: name, Description: desc, Pos: posOf(b.DefRange)}
		topics[name] = cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(name), "description": cty.StringVal(desc)})
	}
	s.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   objectOrEmpty(s.vars),
			"topic": objectOrEmpty(topics),
			"data":  cty.ObjectVal(map[string]cty.Value{"recipients": s.recipientsValue()}),
			"local": cty.EmptyObjectVal,
		},
		Functions: functions(s.dir),
	}
}

// recipientsValue gives each data source its user_ids: unknown until the
// list is supplied, and converted to cty only when an expression other than
// a bare target reference needs it (lists can hold millions of ids).
func (s *loadState) recipientsValue() cty.Value {
	needed := map[string]bool{}
	all := false
	note := func(expr hcl.Expression) {
		for _, t := range expr.Variables() {
			if t.RootName() != "data" {
				continue
			}
			if len(t) < 3 {
				all = true
				continue
			}
			if a, ok := t[2].(hcl.TraverseAttr); ok {
				needed[a.Name] = true
			} else {
				all = true
			}
		}
	}
	for _, a := range s.locals {
		note(a.Expr)
	}
	for _, m := range s.messages {
		for name, a := range m.content.Attributes {
			if _, ok := recipientsRef(a.Expr); ok && name == string(TargetUsers) {
				continue
			}
			note(a.Expr)
		}
	}
	out := map[string]cty.Value{}
	for name := range s.data {
		ids, known := s.opts.Recipients[name]
		var v cty.Value
		switch {
		case s.opts.Recipients == nil || !known:
			v = cty.UnknownVal(cty.List(cty.String))
		case !all && !needed[name]:
			v = cty.UnknownVal(cty.List(cty.String)) // never read
		case len(ids) == 0:
			v = cty.ListValEmpty(cty.String)
		default:
			vals := make([]cty.Value, len(ids))
			for i, id := range ids {
				vals[i] = cty.StringVal(id)
			}
			v = cty.ListVal(vals)
		}
		out[name] = cty.ObjectVal(map[string]cty.Value{"user_ids": v})
	}
	return objectOrEmpty(out)
}

// recipientsRef reports whether expr is exactly data.recipients.NAME.user_ids.
func recipientsRef(expr hcl.Expression) (string, bool) {
	t, d := hcl.AbsTraversalForExpr(expr)
	if d.HasErrors() || len(t) != 4 || t.RootName() != "data" {
		return "", false
	}
	a1, ok1 := t[1].(hcl.TraverseAttr)
	a2, ok2 := t[2].(hcl.TraverseAttr)
	a3, ok3 := t[3].(hcl.TraverseAttr)
	if !ok1 || !ok2 || !ok3 || a1.Name != "recipients" || a3.Name != "user_ids" {
		return "", false
	}
	return a2.Name, true
}

func dependsOnData(expr hcl.Expression) bool {
	for _, t := range expr.Variables() {
		if t.RootName() == "data" {
			return true
		}
	}
	return false
}

func objectOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.EmptyObjectVal
	}
	return cty.ObjectVal(m)
}

// evalLocals evaluates locals in dependency order (any order in the files);
// cycles and references to undeclared locals are errors.
func (s *loadState) evalLocals() {
	s.localVal = map[string]cty.Value{}
	names := make([]string, 0, len(s.locals))
	for n := range s.locals {
		names = append(names, n)
	}
	sort.Strings(names)
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	inCycle := map[string]bool{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		switch state[n] {
		case done:
			return
		case visiting:
			i := len(stack) - 1
			for stack[i] != n {
				i--
			}
			cycle := append(append([]string{}, stack[i:]...), n)
			for _, c := range stack[i:] {
				inCycle[c] = true
			}
			s.diags = append(s.diags, errDiag("Cycle in local values",
				"Local values refer to each other in a loop: local."+strings.Join(cycle, " -> local.")+".",
				s.locals[n].NameRange.Ptr()))
			return
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, dep := range localDeps(s.locals[n].Expr) {
			if _, ok := s.locals[dep.name]; ok {
				visit(dep.name)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		s.evalLocal(n, inCycle[n])
	}
	for _, n := range names {
		visit(n)
	}
	s.ctx.Variables["local"] = objectOrEmpty(s.localVal)
}

type localRef struct {
	name string
	rng  hcl.Range
}

func localDeps(expr hcl.Expression) []localRef {
	var out []localRef
	for _, t := range expr.Variables() {
		if t.RootName() != "local" || len(t) < 2 {
			continue
		}
		if a, ok := t[1].(hcl.TraverseAttr); ok {
			out = append(out, localRef{a.Name, t.SourceRange()})
		}
	}
	return out
}

func (s *loadState) evalLocal(n string, cyclic bool) {
	a := s.locals[n]
	s.localVal[n] = cty.DynamicVal
	if cyclic {
		return
	}
	deps := map[string]cty.Value{}
	ok := true
	for _, dep := range localDeps(a.Expr) {
		v, declared := s.localVal[dep.name]
		if !declared {
			if _, exists := s.locals[dep.name]; !exists {
				s.diags = append(s.diags, errDiag("Reference to undeclared local value",
					fmt.Sprintf("There is no local value named %q; declare it in a locals block.", dep.name), dep.rng.Ptr()))
			}
			ok = false
			continue
		}
		deps[dep.name] = v
	}
	if !ok {
		return
	}
	ctx := s.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{"local": objectOrEmpty(deps)}
	v, d := a.Expr.Value(ctx)
	s.diags = append(s.diags, d...)
	if !d.HasErrors() {
		s.localVal[n] = v
	}
}

// evalAttr evaluates a with the full context and converts it to ty. ok is
// false after an error; the value may be null or unknown.
func (s *loadState) evalAttr(a *hcl.Attribute, ctx *hcl.EvalContext, ty cty.Type) (cty.Value, bool) {
	v, d := a.Expr.Value(ctx)
	s.diags = append(s.diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	conv, err := convert.Convert(v, ty)
	if err != nil {
		s.diags = append(s.diags, typeDiag(a, err, ctx))
		return cty.NilVal, false
	}
	return conv, true
}

// evalKnownString evaluates a string attribute that must be known now.
// set is false when the attribute is null or could not be evaluated.
func (s *loadState) evalKnownString(a *hcl.Attribute) (val string, set bool) {
	v, ok := s.evalAttr(a, s.ctx, cty.String)
	if !ok || v.IsNull() {
		return "", false
	}
	if !v.IsKnown() {
		if dependsOnData(a.Expr) {
			s.diags = append(s.diags, errDiag("Value depends on a data source",
				fmt.Sprintf("%s must be known before recipients are fetched; it cannot use data sources.", a.Name), a.Expr.Range().Ptr()))
		}
		return "", false
	}
	return v.AsString(), true
}

func (s *loadState) decodeService() {
	if len(s.services) == 0 {
		return
	}
	b := s.services[0]
	content, d := b.Body.Content(serviceSchema)
	s.diags = append(s.diags, d...)
	svc := Service{APIKeyEnv: DefaultAPIKeyEnv, Pos: posOf(b.DefRange)}
	attrs := content.Attributes
	if a, ok := attrs["api_key"]; ok {
		s.diags = append(s.diags, errDiag("API key in configuration",
			`Configuration files are kept in git, so they must not hold API keys. Put the key in an environment variable and name that variable instead: api_key_env = "PUSHFORM_API_KEY".`,
			a.NameRange.Ptr()))
	}
	if a, ok := attrs["api_key_env"]; ok {
		if v, set := s.evalKnownString(a); set {
			switch {
			case secret.LooksLikeKey(v):
				s.diags = append(s.diags, errDiag("API key in configuration",
					`api_key_env takes the NAME of the environment variable that holds the key, and this value looks like a key itself. Remove it from the file (and rotate it if it was committed), put it in the environment, and name the variable: api_key_env = "PUSHFORM_API_KEY".`,
					a.Expr.Range().Ptr()))
			case !envNameRE.MatchString(v):
				s.diags = append(s.diags, errDiag("Invalid api_key_env",
					fmt.Sprintf("api_key_env must name an environment variable (letters, digits and underscores, not starting with a digit), such as \"PUSHFORM_API_KEY\"; got %q.", v),
					a.Expr.Range().Ptr()))
			default:
				svc.APIKeyEnv = v
			}
		}
	}
	if a, ok := attrs["environment"]; ok {
		if v, set := s.evalKnownString(a); set {
			if v != "test" && v != "production" {
				s.diags = append(s.diags, errDiag("Invalid environment",
					fmt.Sprintf("environment must be \"test\" or \"production\", got %q.", v), a.Expr.Range().Ptr()))
			} else {
				svc.Environment = v
			}
		}
	} else {
		s.diags = append(s.diags, errDiag("Missing environment",
			`The service block must say which environment this configuration is for: environment = "test" or "production". There is no default, because assuming "test" would be unsafe for a production configuration.`,
			b.DefRange.Ptr()))
	}
	if a, ok := attrs["base_url"]; ok {
		if v, set := s.evalKnownString(a); set {
			if base, err := secret.CheckBaseURL(v); err != nil {
				s.diags = append(s.diags, errDiag("Invalid base_url", err.Error()+".", a.Expr.Range().Ptr()))
			} else {
				svc.BaseURL = base
			}
		}
	}
	if a, ok := attrs["sandbox"]; ok {
		if v, ok := s.literal(a, cty.String); ok && !v.IsNull() {
			if err := s.checkSandbox(v.AsString()); err != nil {
				s.diags = append(s.diags, errDiag("Invalid sandbox seed file", err.Error(), a.Expr.Range().Ptr()))
			} else {
				svc.Sandbox = v.AsString()
			}
		}
		if _, both := attrs["base_url"]; both {
			s.diags = append(s.diags, errDiag("Conflicting service settings",
				"sandbox runs an embedded local service, so base_url would be ignored; set one or the other.", a.NameRange.Ptr()))
		}
	}
	s.cfg.Service = svc
}

func (s *loadState) checkSandbox(p string) error {
	if p == "" {
		return fmt.Errorf("sandbox names the seed file of the embedded sandbox, such as \"sandbox.hcl\"")
	}
	if filepath.IsAbs(p) || !within(s.dir, filepath.Join(s.dir, p)) {
		return fmt.Errorf("the seed file %q must be inside the configuration directory", p)
	}
	if _, err := os.Stat(filepath.Join(s.dir, p)); err != nil {
		return fmt.Errorf("the seed file %q does not exist in the configuration directory", p)
	}
	return nil
}

func (s *loadState) decodeTopicsAndCampaigns() {
	for name, b := range s.campaigns {
		c := Campaign{Name: name, Pos: posOf(b.DefRange)}
		if a, ok := s.campaignAttrs[name]["description"]; ok {
			if v, set := s.evalKnownString(a); set {
				c.Description = v
			}
		}
		s.cfg.Campaigns[name] = c
	}
}
