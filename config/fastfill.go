package config

import (
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Filling a million texts in with the language's evaluator costs about
// ten microseconds a person: an object of the person's attributes, a
// child context, the template's nodes and the functions' type checks. The
// templates people write are mostly literal text, user.NAME, a few string
// functions, try() and a comparison with a string. Those are compiled
// here into a tree that reads a CSV row's cells directly, and gives the
// very text the evaluator gives (the functions are the configuration's
// own, called on the same values; strings are normalised as cty
// normalises them). Anything else, a table that is not a CSV file, and
// any person whose text fails (so that the reason is the evaluator's),
// are filled in by the evaluator.

// fastNode is a compiled part of a template: eval returns its text, or
// false when the evaluator must decide (an attribute missing, a function
// failing).
type fastNode interface {
	eval(p *fastPerson) (string, bool)
}

// fastPerson is one person as the compiled template reads them: a row of
// a CSV table (row < 0 for a person it does not list).
type fastPerson struct {
	t      *csvTable
	cols   []int // by compiled attribute, its column (-1: none)
	row    int
	id     string
	locale string
}

type fastLit string

func (l fastLit) eval(*fastPerson) (string, bool) { return string(l), true }

// fastAttr is user.NAME: id and locale are the person's own, the others
// the row's cells (an attribute's place in fastPerson.cols).
type fastAttr struct {
	name string
	slot int
}

func (a fastAttr) eval(p *fastPerson) (string, bool) {
	if a.name == "id" {
		return cty.NormalizeString(p.id), true
	}
	c := p.cols[a.slot]
	if p.row < 0 || c < 0 {
		return "", false
	}
	return cty.NormalizeString(p.t.cell(p.row, c)), true
}

type fastConcat []fastNode

func (c fastConcat) eval(p *fastPerson) (string, bool) {
	var b strings.Builder
	for _, n := range c {
		s, ok := n.eval(p)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return cty.NormalizeString(b.String()), true
}

// fastCall is a function of one string argument (title, upper, ...),
// the configuration's own; direct is its Go body, for the stdlib
// functions whose body is one call (a call through cty costs a
// microsecond: its type checks and values).
type fastCall struct {
	fn     function.Function
	direct func(string) string
	arg    fastNode
}

// directFunctions are the Go bodies of stdlib functions: cty's title is
// strings.Title, upper strings.ToUpper, and so on, each result a
// normalised string.
var directFunctions = []struct {
	fn   function.Function
	body func(string) string
}{
	{stdlib.TitleFunc, strings.Title}, //nolint:staticcheck // what cty's title does
	{stdlib.UpperFunc, strings.ToUpper},
	{stdlib.LowerFunc, strings.ToLower},
	{stdlib.TrimSpaceFunc, strings.TrimSpace},
}

func (c fastCall) eval(p *fastPerson) (string, bool) {
	s, ok := c.arg.eval(p)
	if !ok {
		return "", false
	}
	if c.direct != nil {
		return cty.NormalizeString(c.direct(s)), true
	}
	v, err := c.fn.Call([]cty.Value{cty.StringVal(s)})
	if err != nil || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// fastTry is try(A, B, ...): the first that can be filled in.
type fastTry []fastNode

func (t fastTry) eval(p *fastPerson) (string, bool) {
	for _, n := range t {
		if s, ok := n.eval(p); ok {
			return s, true
		}
	}
	return "", false
}

// fastCond is A == B ? T : F (or !=), of strings.
type fastCond struct {
	l, r, t, f fastNode
	eq         bool
}

func (c fastCond) eval(p *fastPerson) (string, bool) {
	l, ok := c.l.eval(p)
	if !ok {
		return "", false
	}
	r, ok := c.r.eval(p)
	if !ok {
		return "", false
	}
	if (l == r) == c.eq {
		return c.t.eval(p)
	}
	return c.f.eval(p)
}

// fastFunctions are the functions of one string a compiled template may
// call.
var fastFunctions = map[string]bool{"title": true, "upper": true, "lower": true, "trimspace": true, "chomp": true, "strrev": true}

// fastCompiler compiles the fields of one template.
type fastCompiler struct {
	root  string
	ctx   *hcl.EvalContext
	attrs []string // the attributes read, by slot
}

// compileAll compiles each of xs; ok is false when one of them is only
// the evaluator's.
func (fc *fastCompiler) compileAll(xs []hclsyntax.Expression) ([]fastNode, bool) {
	nodes := make([]fastNode, len(xs))
	for i, x := range xs {
		n, ok := fc.compile(x)
		if !ok {
			return nil, false
		}
		nodes[i] = n
	}
	return nodes, true
}

// compile returns e compiled; ok is false for what only the evaluator
// does.
func (fc *fastCompiler) compile(e hcl.Expression) (fastNode, bool) {
	x := unwrapExpr(e)
	if x == nil {
		return nil, false
	}
	if len(personRefs(x)) == 0 {
		// Evaluated once, as the evaluator would for every person.
		v, diags := x.Value(fc.ctx)
		if s, ok := templateString(v); ok && !diags.HasErrors() && v.Type() == cty.String {
			return fastLit(s), true
		}
		return nil, false
	}
	switch x := x.(type) {
	case *hclsyntax.TemplateExpr:
		parts, ok := fc.compileAll(x.Parts)
		return fastConcat(parts), ok
	case *hclsyntax.TemplateWrapExpr:
		n, ok := fc.compile(x.Wrapped)
		return fastConcat{n}, ok
	case *hclsyntax.ScopeTraversalExpr:
		if len(x.Traversal) != 2 || x.Traversal.RootName() != fc.root {
			return nil, false
		}
		a, ok := x.Traversal[1].(hcl.TraverseAttr)
		if !ok || a.Name == "locale" { // null for a person without one: the evaluator's
			return nil, false
		}
		slot := slices.Index(fc.attrs, a.Name)
		if slot < 0 {
			slot = len(fc.attrs)
			fc.attrs = append(fc.attrs, a.Name)
		}
		return fastAttr{name: a.Name, slot: slot}, true
	case *hclsyntax.FunctionCallExpr:
		if x.ExpandFinal || len(x.Args) == 0 {
			return nil, false
		}
		if x.Name == "try" && functionOf(fc.ctx, "try") != nil {
			alts, ok := fc.compileAll(x.Args)
			return fastTry(alts), ok
		}
		fn := functionOf(fc.ctx, x.Name)
		if !fastFunctions[x.Name] || fn == nil || len(x.Args) != 1 {
			return nil, false
		}
		arg, ok := fc.compile(x.Args[0])
		c := fastCall{fn: *fn, arg: arg}
		for _, d := range directFunctions {
			if d.fn == *fn {
				c.direct = d.body
			}
		}
		return c, ok
	case *hclsyntax.ConditionalExpr:
		cmp, ok := unwrapExpr(x.Condition).(*hclsyntax.BinaryOpExpr)
		if !ok || cmp.Op != hclsyntax.OpEqual && cmp.Op != hclsyntax.OpNotEqual {
			return nil, false
		}
		var c fastCond
		c.eq = cmp.Op == hclsyntax.OpEqual
		for _, part := range []struct {
			dst *fastNode
			e   hcl.Expression
		}{{&c.l, cmp.LHS}, {&c.r, cmp.RHS}, {&c.t, x.TrueResult}, {&c.f, x.FalseResult}} {
			n, ok := fc.compile(part.e)
			if !ok {
				return nil, false
			}
			*part.dst = n
		}
		return c, true
	}
	return nil, false
}

// functionOf returns the function name of ctx (or a parent); nil when
// there is none.
func functionOf(ctx *hcl.EvalContext, name string) *function.Function {
	for ; ctx != nil; ctx = ctx.Parent() {
		if f, ok := ctx.Functions[name]; ok {
			return &f
		}
	}
	return nil
}

// fastTemplate is a template compiled: every field of its own text and
// of its translations. Nil when any of them is not compilable.
type fastTemplate struct {
	attrs []string
	nodes map[hcl.Expression]fastNode
	// cols are the column of each attribute in the template's table, and
	// localeCol that of the locale (-1: none), found once.
	once      sync.Once
	cols      []int
	localeCol int
}

// compileTemplate compiles t's fields; nil when one is not compilable.
func compileTemplate(t *Template) *fastTemplate {
	fc := &fastCompiler{root: t.Root, ctx: t.ctx}
	ft := &fastTemplate{nodes: map[hcl.Expression]fastNode{}}
	add := func(f textField) bool {
		if f.expr == nil {
			return true
		}
		n, ok := fc.compile(f.expr)
		ft.nodes[f.expr] = n
		return ok
	}
	for _, f := range t.own {
		if !add(f) {
			return nil
		}
	}
	for _, lv := range t.levels {
		for _, tr := range lv {
			for _, f := range tr.fields {
				if !add(f) {
					return nil
				}
			}
		}
	}
	ft.attrs = fc.attrs
	return ft
}

// columns finds, once, the column of each compiled attribute in table tb
// (the template's: a template reads one table) and of the locale.
func (ft *fastTemplate) columns(tb *csvTable, localeAttr string) {
	ft.once.Do(func() {
		ft.cols = make([]int, len(ft.attrs))
		for i, a := range ft.attrs {
			ft.cols[i] = slices.Index(tb.columns, a)
		}
		ft.localeCol = -1
		if localeAttr != "" {
			ft.localeCol = slices.Index(tb.columns, localeAttr)
		}
	})
}

// localeCache normalises the locales a table's cells hold, each once.
type localeCache struct {
	m sync.Map // raw -> normalised ("" for none)
}

func (lc *localeCache) normalize(raw string) string {
	if v, ok := lc.m.Load(raw); ok {
		return v.(string)
	}
	n, _ := NormalizeLocale(cty.NormalizeString(raw))
	lc.m.Store(raw, n)
	return n
}

// translationCache keeps, per locale, the fields a person of it gets.
type translationCache struct {
	m sync.Map // locale -> *translated
}

type translated struct {
	fields [4]textField
	used   string
}

func (t *Template) translated(l string) *translated {
	if v, ok := t.trCache.m.Load(l); ok {
		return v.(*translated)
	}
	tr := &translated{fields: t.own}
	tr.used = t.translate(l, &tr.fields)
	t.trCache.m.Store(l, tr)
	return tr
}

// renderFast fills t in for person id from a CSV table, as render does;
// ok is false when the evaluator must (see fastNode).
func (t *Template) renderFast(id string) (r Rendering, ok bool) {
	tb, ft := t.Data.table.csv, t.fast
	ft.columns(tb, t.Data.LocaleAttr)
	p := fastPerson{t: tb, row: -1, id: id, cols: ft.cols}
	if row, found := tb.find(id); found {
		p.row = row
		if ft.localeCol >= 0 {
			p.locale = t.locales.normalize(tb.cell(row, ft.localeCol))
		}
	}
	r.Locale = p.locale
	tr := t.translated(p.locale)
	r.Translation = tr.used
	c := t.base
	dst := [4]*string{&c.Title, &c.Body, &c.OpenToURL, &c.Tag}
	for i, f := range tr.fields {
		if !f.set {
			continue
		}
		s := f.static
		if f.expr != nil {
			var filled bool
			if s, filled = t.fast.nodes[f.expr].eval(&p); !filled {
				return r, false
			}
		}
		if checkRendered(textFields[i], s) != "" {
			return r, false // the evaluator says why
		}
		*dst[i] = s
	}
	r.Content = c
	return r, true
}
