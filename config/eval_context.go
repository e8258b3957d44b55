package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Every hcl.EvalContext of the package is made in this file: the root
// context of a configuration, the child a local value sees while locals are
// evaluated, the child of a for_each instance, and the context of a
// templatefile template.

// newEvalContext makes the root context: var, topic, data and local, with
// the function table. locals is nil while the locals themselves are being
// evaluated.
func newEvalContext(funcs map[string]function.Function, vars map[string]cty.Value, topics map[string]Topic, recipients cty.Value, locals map[string]cty.Value) *hcl.EvalContext {
	topicVals := make(map[string]cty.Value, len(topics))
	for name, t := range topics {
		topicVals[name] = cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(name), "description": cty.StringVal(t.Description)})
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   objectOrEmpty(vars),
			"topic": objectOrEmpty(topicVals),
			"data":  cty.ObjectVal(map[string]cty.Value{"recipients": recipients}),
			"local": objectOrEmpty(locals),
		},
		Functions: funcs,
	}
}

// localContext is what one local value sees: the root context with only
// the locals it refers to, already evaluated.
func localContext(root *hcl.EvalContext, deps map[string]cty.Value) *hcl.EvalContext {
	ctx := root.NewChild()
	ctx.Variables = map[string]cty.Value{"local": objectOrEmpty(deps)}
	return ctx
}

// instanceContext adds each.key and each.value for one for_each instance;
// without for_each it is the root context itself.
func instanceContext(root *hcl.EvalContext, in instance) *hcl.EvalContext {
	if !in.keyed {
		return root
	}
	ctx := root.NewChild()
	ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{
		"key":   cty.StringVal(in.key),
		"value": in.value,
	})}
	return ctx
}

// templateContext is what a templatefile template sees: its vars, by name,
// and the functions (without templatefile).
func templateContext(funcs map[string]function.Function, vars cty.Value) (*hcl.EvalContext, error) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: funcs}
	for it := vars.ElementIterator(); it.Next(); {
		k, v := it.Element()
		name := k.AsString()
		if !hclsyntax.ValidIdentifier(name) {
			return nil, fmt.Errorf("template variable %q is not a valid name", name)
		}
		ctx.Variables[name] = v
	}
	return ctx, nil
}

// recipientsValue gives each data source its user_ids: unknown until the
// list is supplied, and converted to cty only when an expression other than
// a bare target reference needs it (lists can hold millions of ids).
func recipientsValue(mod *module, recipients map[string][]string) cty.Value {
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
	for _, a := range mod.locals {
		note(a.Expr)
	}
	for _, m := range mod.messages {
		for name, a := range m.content.Attributes {
			if _, ok := recipientsRef(a.Expr); ok && name == string(TargetUsers) {
				continue
			}
			note(a.Expr)
		}
	}
	out := map[string]cty.Value{}
	for name := range mod.data {
		ids, known := recipients[name]
		var v cty.Value
		switch {
		case recipients == nil || !known:
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

func objectOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.EmptyObjectVal
	}
	return cty.ObjectVal(m)
}
