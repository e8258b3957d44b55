package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// decodeLocalsBlock returns the attributes of a locals block, by name.
func decodeLocalsBlock(b *hcl.Block) ([]*hcl.Attribute, hcl.Diagnostics) {
	attrs, diags := b.Body.JustAttributes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*hcl.Attribute, len(names))
	for i, n := range names {
		out[i] = attrs[n]
	}
	return out, diags
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

// evalLocals evaluates locals in dependency order (any order in the files);
// cycles and references to undeclared locals are errors. keep, when not
// nil, supplies values evaluated before: those locals are not evaluated
// again. A local that cannot be evaluated is cty.DynamicVal.
func evalLocals(locals map[string]*hcl.Attribute, root *hcl.EvalContext, keep func(name string) (cty.Value, bool)) (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vals := map[string]cty.Value{}
	names := make([]string, 0, len(locals))
	for n := range locals {
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
			diags = append(diags, errDiag("Cycle in local values",
				"Local values refer to each other in a loop: local."+strings.Join(cycle, " -> local.")+".",
				locals[n].NameRange.Ptr()))
			return
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, dep := range localDeps(locals[n].Expr) {
			if _, ok := locals[dep.name]; ok {
				visit(dep.name)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		if keep != nil {
			if v, ok := keep(n); ok {
				vals[n] = v
				return
			}
		}
		v, d := evalLocal(locals, n, inCycle[n], vals, root)
		diags = append(diags, d...)
		vals[n] = v
	}
	for _, n := range names {
		visit(n)
	}
	return vals, diags
}

// evalLocal evaluates local n with the values of its dependencies.
func evalLocal(locals map[string]*hcl.Attribute, n string, cyclic bool, vals map[string]cty.Value, root *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if cyclic {
		return cty.DynamicVal, nil
	}
	a := locals[n]
	var diags hcl.Diagnostics
	deps := map[string]cty.Value{}
	ok := true
	for _, dep := range localDeps(a.Expr) {
		v, declared := vals[dep.name]
		if !declared {
			if _, exists := locals[dep.name]; !exists {
				diags = append(diags, errDiag("Reference to undeclared local value",
					fmt.Sprintf("There is no local value named %q; declare it in a locals block.", dep.name), dep.rng.Ptr()))
			}
			ok = false
			continue
		}
		deps[dep.name] = v
	}
	if !ok {
		return cty.DynamicVal, diags
	}
	v, d := a.Expr.Value(localContext(root, deps))
	diags = append(diags, d...)
	if d.HasErrors() {
		return cty.DynamicVal, diags
	}
	return v, diags
}

// dataLocals finds the locals whose value depends on a data source,
// directly or through other locals.
func dataLocals(locals map[string]*hcl.Attribute) map[string]bool {
	out := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for n, a := range locals {
			if !out[n] && refersToData(a.Expr, out) {
				out[n] = true
				changed = true
			}
		}
	}
	return out
}

// refersToData reports whether expr reads a data source directly or
// through one of the given locals.
func refersToData(expr hcl.Expression, viaLocals map[string]bool) bool {
	for _, t := range expr.Variables() {
		switch t.RootName() {
		case "data":
			return true
		case "local":
			if len(t) >= 2 {
				if a, ok := t[1].(hcl.TraverseAttr); ok && viaLocals[a.Name] {
					return true
				}
			}
		}
	}
	return false
}
