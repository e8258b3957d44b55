package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// The canonical text of a template: what identifies a notification whose
// text is filled in per person (its ledger identity, its review shape,
// and what the plan shows of it). Every part that reads no person is
// evaluated, so an edited variable, local or each value is an edit; the
// parts that read user.* or device.* are written in one fixed form, so
// spacing, comments and parentheses make no difference:
//
//	title = "Hi ${ title( user.first_name ) }, ${var.greeting}"
//
// is `Hi ${title(user.first_name)}, welcome` with var.greeting
// "welcome". A string is written as a template, literal text with "${"
// and "%{" escaped as the language escapes them.

// personRefs returns the person roots expr reads (RootUser, RootDevice),
// sorted.
func personRefs(expr hcl.Expression) []string {
	var out []string
	for _, t := range expr.Variables() {
		if r := t.RootName(); personRoots[r] != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// personReads are the person roots every attribute of a configuration's
// files reads, found once per attribute: the decoders ask for each
// instance of a for_each, and personRefs walks the whole expression.
type personReads map[hcl.Expression][]string

// add finds the person roots of every attribute of b and its nested
// blocks.
func (r personReads) add(b *hclsyntax.Body) {
	for _, a := range b.Attributes {
		r[a.Expr] = personRefs(a.Expr)
	}
	for _, c := range b.Blocks {
		r.add(c.Body)
	}
}

// of returns the person roots expr reads (see personRefs).
func (r personReads) of(expr hcl.Expression) []string {
	if refs, ok := r[expr]; ok {
		return refs
	}
	return personRefs(expr)
}

// canonicalTemplate returns the canonical text of expr, evaluated in ctx
// but for the person roots, as a template (unquoted).
func canonicalTemplate(expr hcl.Expression, ctx *hcl.EvalContext) (string, hcl.Diagnostics) {
	p := &canonPrinter{ctx: ctx, bound: map[string]int{}}
	for r := range personRoots {
		p.bound[r]++
	}
	e := unwrapExpr(expr)
	if e == nil {
		return "", hcl.Diagnostics{errDiag("Unsupported template", "This expression cannot be a per-person template.", expr.Range().Ptr())}
	}
	p.template(e, false)
	return p.b.String(), p.diags
}

// canonPrinter writes the canonical text of expressions. bound counts the
// names that have no value here: the person roots, and the variables of
// the for expressions being written.
type canonPrinter struct {
	ctx   *hcl.EvalContext
	b     strings.Builder
	bound map[string]int
	// anon counts the splats whose element is being written.
	anon  int
	diags hcl.Diagnostics
}

// free reports whether e reads none of the bound names, nor the element
// of a splat being written: it is evaluated.
func (p *canonPrinter) free(e hclsyntax.Expression) bool {
	for _, t := range hclsyntax.Variables(e) {
		if p.bound[t.RootName()] > 0 {
			return false
		}
	}
	if p.anon == 0 {
		return true
	}
	anon := false
	hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if _, ok := n.(*hclsyntax.AnonSymbolExpr); ok {
			anon = true
		}
		return nil
	})
	return !anon
}

func (p *canonPrinter) eval(e hclsyntax.Expression) cty.Value {
	v, diags := e.Value(p.ctx)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return cty.DynamicVal
	}
	return v
}

// template writes e as a template's text: literal parts as text,
// interpolations as ${...}; quoted when it stands in an expression.
func (p *canonPrinter) template(e hclsyntax.Expression, quoted bool) {
	if quoted {
		p.b.WriteByte('"')
		defer p.b.WriteByte('"')
	}
	var parts []hclsyntax.Expression
	switch t := e.(type) {
	case *hclsyntax.TemplateExpr:
		for _, part := range t.Parts {
			parts = append(parts, unwrapExpr(part))
		}
	case *hclsyntax.TemplateWrapExpr:
		parts = []hclsyntax.Expression{unwrapExpr(t.Wrapped)}
	default:
		parts = []hclsyntax.Expression{e}
	}
	for _, part := range parts {
		if part == nil {
			continue
		}
		if p.free(part) {
			v := p.eval(part)
			if s, ok := templateString(v); ok {
				writeTemplateText(&p.b, s, quoted)
				continue
			}
		}
		p.b.WriteString("${")
		p.expr(part)
		p.b.WriteString("}")
	}
}

// templateString is v as a template writes it, when it is known.
func templateString(v cty.Value) (string, bool) {
	v, _ = v.Unmark()
	if !v.IsWhollyKnown() || v.IsNull() {
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", false
	}
	return s.AsString(), true
}

// writeTemplateText writes s as the literal text of a template: "${" and
// "%{" escaped, and, quoted, what a quoted string escapes.
func writeTemplateText(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{' {
			b.WriteByte(c)
			b.WriteByte(c)
			continue
		}
		if !quoted {
			b.WriteByte(c)
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
}

// value writes v as a literal of the language.
func (p *canonPrinter) value(v cty.Value) {
	v, _ = v.Unmark()
	ty := v.Type()
	switch {
	case !v.IsKnown():
		p.b.WriteString("(known at plan time)")
	case v.IsNull():
		p.b.WriteString("null")
	case ty == cty.String:
		p.b.WriteByte('"')
		writeTemplateText(&p.b, v.AsString(), true)
		p.b.WriteByte('"')
	case ty == cty.Number:
		p.b.WriteString(v.AsBigFloat().Text('g', -1))
	case ty == cty.Bool:
		if v.True() {
			p.b.WriteString("true")
		} else {
			p.b.WriteString("false")
		}
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		if ty.IsSetType() {
			p.b.WriteString("toset(")
		}
		p.b.WriteByte('[')
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.value(ev)
		}
		p.b.WriteByte(']')
		if ty.IsSetType() {
			p.b.WriteByte(')')
		}
	case ty.IsMapType() || ty.IsObjectType():
		p.b.WriteByte('{')
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ { // by key, in order
			k, ev := it.Element()
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.value(k)
			p.b.WriteString(" = ")
			p.value(ev)
		}
		p.b.WriteByte('}')
	default:
		p.b.WriteString(ty.FriendlyName())
	}
}

// ops are the operators' symbols, as templates and shapes write them.
var ops = map[*hclsyntax.Operation]string{
	hclsyntax.OpLogicalOr: "||", hclsyntax.OpLogicalAnd: "&&", hclsyntax.OpLogicalNot: "!",
	hclsyntax.OpEqual: "==", hclsyntax.OpNotEqual: "!=",
	hclsyntax.OpGreaterThan: ">", hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan: "<", hclsyntax.OpLessThanOrEqual: "<=",
	hclsyntax.OpAdd: "+", hclsyntax.OpSubtract: "-", hclsyntax.OpMultiply: "*",
	hclsyntax.OpDivide: "/", hclsyntax.OpModulo: "%", hclsyntax.OpNegate: "-",
}

// expr writes e as an expression.
func (p *canonPrinter) expr(e hclsyntax.Expression) {
	e = unwrapExpr(e)
	if e == nil {
		return
	}
	if p.free(e) {
		p.value(p.eval(e))
		return
	}
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		p.b.WriteString(e.Traversal.RootName())
		p.traversal(e.Traversal[1:])
	case *hclsyntax.RelativeTraversalExpr:
		p.operand(e.Source)
		p.traversal(e.Traversal)
	case *hclsyntax.FunctionCallExpr:
		p.b.WriteString(e.Name)
		p.b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.expr(a)
		}
		if e.ExpandFinal {
			p.b.WriteString("...")
		}
		p.b.WriteByte(')')
	case *hclsyntax.ConditionalExpr:
		for i, part := range []hclsyntax.Expression{e.Condition, e.TrueResult, e.FalseResult} {
			if i > 0 {
				p.b.WriteString([]string{"", " ? ", " : "}[i])
			}
			if _, nested := unwrapExpr(part).(*hclsyntax.ConditionalExpr); nested {
				p.operand(part)
			} else {
				p.expr(part)
			}
		}
	case *hclsyntax.BinaryOpExpr:
		p.operand(e.LHS)
		p.b.WriteString(" " + ops[e.Op] + " ")
		p.operand(e.RHS)
	case *hclsyntax.UnaryOpExpr:
		p.b.WriteString(ops[e.Op])
		p.operand(e.Val)
	case *hclsyntax.IndexExpr:
		p.operand(e.Collection)
		p.b.WriteByte('[')
		p.expr(e.Key)
		p.b.WriteByte(']')
	case *hclsyntax.TupleConsExpr:
		p.b.WriteByte('[')
		for i, x := range e.Exprs {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.expr(x)
		}
		p.b.WriteByte(']')
	case *hclsyntax.ObjectConsExpr:
		p.b.WriteByte('{')
		for i, it := range e.Items {
			if i > 0 {
				p.b.WriteString(", ")
			}
			if k, ok := it.KeyExpr.(*hclsyntax.ObjectConsKeyExpr); ok && !k.ForceNonLiteral {
				if name := hcl.ExprAsKeyword(k.Wrapped); name != "" {
					p.value(cty.StringVal(name))
				} else {
					p.expr(k.Wrapped)
				}
			} else {
				p.expr(it.KeyExpr)
			}
			p.b.WriteString(" = ")
			p.expr(it.ValueExpr)
		}
		p.b.WriteByte('}')
	case *hclsyntax.ObjectConsKeyExpr:
		p.expr(e.Wrapped)
	case *hclsyntax.ForExpr:
		p.forExpr(e)
	case *hclsyntax.SplatExpr:
		p.operand(e.Source)
		p.b.WriteString("[*]")
		p.anon++
		p.expr(e.Each)
		p.anon--
	case *hclsyntax.AnonSymbolExpr:
	case *hclsyntax.TemplateExpr, *hclsyntax.TemplateWrapExpr:
		p.template(e, true)
	case *hclsyntax.TemplateJoinExpr:
		p.b.WriteString("templatejoin(")
		p.expr(e.Tuple)
		p.b.WriteByte(')')
	default:
		p.diags = append(p.diags, errDiag("Unsupported template",
			fmt.Sprintf("This kind of expression (%T) cannot be part of a per-person template.", e), e.Range().Ptr()))
	}
}

// operand writes e as the operand of an operator (or the source of a
// traversal): in parentheses when it is an operation itself, so that the
// text is unambiguous whatever the operators' precedence.
func (p *canonPrinter) operand(e hclsyntax.Expression) {
	switch unwrapExpr(e).(type) {
	case *hclsyntax.BinaryOpExpr, *hclsyntax.UnaryOpExpr, *hclsyntax.ConditionalExpr:
		if !p.free(unwrapExpr(e)) {
			p.b.WriteByte('(')
			p.expr(e)
			p.b.WriteByte(')')
			return
		}
	}
	p.expr(e)
}

func (p *canonPrinter) forExpr(e *hclsyntax.ForExpr) {
	open, close := "[", "]"
	if e.KeyExpr != nil {
		open, close = "{", "}"
	}
	p.b.WriteString(open + "for ")
	if e.KeyVar != "" {
		p.b.WriteString(e.KeyVar + ", ")
	}
	p.b.WriteString(e.ValVar + " in ")
	p.expr(e.CollExpr)
	p.b.WriteString(" : ")
	for _, v := range []string{e.KeyVar, e.ValVar} {
		if v != "" {
			p.bound[v]++
			defer func() { p.bound[v]-- }()
		}
	}
	if e.KeyExpr != nil {
		p.expr(e.KeyExpr)
		p.b.WriteString(" => ")
	}
	p.expr(e.ValExpr)
	if e.Group {
		p.b.WriteString("...")
	}
	if e.CondExpr != nil {
		p.b.WriteString(" if ")
		p.expr(e.CondExpr)
	}
	p.b.WriteString(close)
}

// traversal writes the steps after a root or a source.
func (p *canonPrinter) traversal(t hcl.Traversal) {
	for _, s := range t {
		switch s := s.(type) {
		case hcl.TraverseAttr:
			p.b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			p.b.WriteByte('[')
			p.value(s.Key)
			p.b.WriteByte(']')
		case hcl.TraverseSplat:
			p.b.WriteString("[*]")
		}
	}
}
