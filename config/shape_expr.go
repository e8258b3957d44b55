package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// An attribute that reads a data source is unknown in shapeContext, so its
// value cannot be in the shape. What is in it instead is how the value is
// computed: exprShape writes the expression's structure, with every part
// that reads no data source written as its value (a literal, a variable,
// each.value, a local, a file read) and every data source by name. So
// only what the data source holds may change unreviewed: an audience may
// grow, while a literal beside it (`cond ? "7d" : "1h"`, a static id in a
// concat) is reviewed as any other.

// opName is how a shape writes an operator: as a template does, but for
// negation, which the shapes already recorded write "neg".
func opName(op *hclsyntax.Operation) string {
	if op == hclsyntax.OpNegate {
		return "neg"
	}
	return ops[op]
}

// exprShape writes how expr is computed in ctx (see above). locals are
// the data-reading locals already written on this path: a local that
// refers to itself is an error reported elsewhere.
func (e *evaluation) exprShape(w *shapeWriter, expr hclsyntax.Expression, ctx *hcl.EvalContext, locals map[string]bool) {
	if !refersToData(expr, e.dataLocals) {
		if v, diags := expr.Value(ctx); !diags.HasErrors() {
			w.tag('=')
			w.value(v)
			return
		}
		// A part that cannot be evaluated alone (it uses a for
		// expression's variable) is written by its structure.
	}
	sub := func(xs ...hclsyntax.Expression) {
		w.uvarint(uint64(len(xs)))
		for _, x := range xs {
			if x == nil {
				w.tag('0')
				continue
			}
			e.exprShape(w, x, ctx, locals)
		}
	}
	switch x := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		w.tag('t')
		traversalShape(w, x.Traversal)
		if name, ok := localName(x.Traversal); ok && e.dataLocals[name] && !locals[name] {
			if a, ok := e.mod.locals[name]; ok {
				if le, ok := a.Expr.(hclsyntax.Expression); ok {
					locals[name] = true
					e.exprShape(w, le, ctx, locals)
					delete(locals, name)
				}
			}
		}
	case *hclsyntax.RelativeTraversalExpr:
		w.tag('r')
		traversalShape(w, x.Traversal)
		sub(x.Source)
	case *hclsyntax.FunctionCallExpr:
		w.tag('f')
		w.str(x.Name)
		if x.ExpandFinal {
			w.tag('.')
		}
		sub(x.Args...)
		if x.Name == "templatefile" && len(x.Args) > 0 {
			// The template is read at run time: its text is part of
			// how the value is computed.
			if p, diags := x.Args[0].Value(ctx); !diags.HasErrors() && p.Type() == cty.String && p.IsKnown() && !p.IsNull() {
				if f, ok := ctx.Functions["file"]; ok {
					if text, err := f.Call([]cty.Value{p}); err == nil {
						w.value(text)
					}
				}
			}
		}
	case *hclsyntax.ConditionalExpr:
		w.tag('?')
		sub(x.Condition, x.TrueResult, x.FalseResult)
	case *hclsyntax.BinaryOpExpr:
		w.tag('b')
		w.str(opName(x.Op))
		sub(x.LHS, x.RHS)
	case *hclsyntax.UnaryOpExpr:
		w.tag('u')
		w.str(opName(x.Op))
		sub(x.Val)
	case *hclsyntax.TemplateExpr:
		w.tag('T')
		sub(x.Parts...)
	case *hclsyntax.TemplateWrapExpr:
		w.tag('W')
		sub(x.Wrapped)
	case *hclsyntax.TemplateJoinExpr:
		w.tag('J')
		sub(x.Tuple)
	case *hclsyntax.TupleConsExpr:
		w.tag('[')
		sub(x.Exprs...)
	case *hclsyntax.ObjectConsExpr:
		w.tag('{')
		w.uvarint(uint64(len(x.Items)))
		for _, it := range x.Items {
			sub(it.KeyExpr, it.ValueExpr)
		}
	case *hclsyntax.ObjectConsKeyExpr:
		w.tag('k')
		if x.ForceNonLiteral {
			w.tag('!')
		} else if k := hcl.ExprAsKeyword(x.Wrapped); k != "" {
			w.str(k) // a bare key is its name, not a variable
			return
		}
		sub(x.Wrapped)
	case *hclsyntax.ForExpr:
		w.tag('F')
		w.str(x.KeyVar)
		w.str(x.ValVar)
		if x.Group {
			w.tag('.')
		}
		sub(x.CollExpr, x.KeyExpr, x.ValExpr, x.CondExpr)
	case *hclsyntax.IndexExpr:
		w.tag('i')
		sub(x.Collection, x.Key)
	case *hclsyntax.SplatExpr:
		w.tag('*')
		sub(x.Source, x.Each)
	case *hclsyntax.AnonSymbolExpr:
		w.tag('@')
	case *hclsyntax.ParenthesesExpr:
		sub(x.Expression)
	default:
		// A kind of expression this walk does not know: its source
		// range stands for it, so a change anywhere in it is seen.
		w.tag('x')
		r := expr.Range()
		w.uvarint(uint64(r.Start.Byte))
		w.uvarint(uint64(r.End.Byte))
	}
}

// traversalShape writes a traversal step by step.
func traversalShape(w *shapeWriter, t hcl.Traversal) {
	w.uvarint(uint64(len(t)))
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			w.str(s.Name)
		case hcl.TraverseAttr:
			w.tag('.')
			w.str(s.Name)
		case hcl.TraverseIndex:
			w.tag('[')
			w.value(s.Key)
		case hcl.TraverseSplat:
			w.tag('*')
		}
	}
}

// localName returns NAME of a traversal local.NAME....
func localName(t hcl.Traversal) (string, bool) {
	if len(t) < 2 || t.RootName() != "local" {
		return "", false
	}
	a, ok := t[1].(hcl.TraverseAttr)
	return a.Name, ok
}

// attrDigest is the digest of one attribute's part of a shape: its value
// in ctx (template: see walkValue), and, for one that reads a data
// source, how it is computed.
func (e *evaluation) attrDigest(a *walkAttr, v cty.Value, template bool, ctx *hcl.EvalContext) [digestSize]byte {
	var w shapeWriter
	w.walkValue(v, template)
	if _, bare := recipientsRef(a.attr.Expr); !bare && len(a.sources) > 0 && !v.IsWhollyKnown() {
		// A bare data.recipients.NAME.user_ids is its source's name
		// alone, as the node writes it.
		w.tag('e')
		e.exprShape(&w, a.attr.Expr, ctx, map[string]bool{})
	}
	return w.sum()
}
