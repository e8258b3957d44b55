package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Evaluating a configuration costs what its expressions make it cost:
// three for expressions nested over range(200) walk eight million
// elements (47 s), setproduct of three lists of 100 makes a million sets
// (11 s), format("%0999999999d", 1) a gigabyte, and locals doubling each
// other terabytes. Load caps each, with an error at the expression, so a
// mistyped or hostile file cannot stall validate, plan or a CI job, or
// exhaust its memory (FuzzLoad found the first three).

// MaxIterations is how many elements the for expressions of a
// configuration may walk in all, for_each instances included, when it is
// loaded (about 1.5 s of work): more than a for over the largest CSV file
// file() reads (16 MiB, some 500,000 rows). Walking the recipients list
// once it is fetched is not counted.
const MaxIterations = 1_000_000

// MaxBytes is how much text the templates ("${a}${b}", %{ for }) and the
// functions that multiply text (join, format, formatlist, replace, indent,
// jsonencode) of a configuration may make in all when it is loaded: 32
// times the largest file file() reads. Without it, 35 lines of locals each
// doubling the one before ("${local.a}${local.a}") exhaust the memory.
const MaxBytes = 512 << 20

// MaxSetProduct is the most elements setproduct may make.
const MaxSetProduct = 100_000

// MaxWidth is the largest width or precision format, formatlist and
// indent accept.
const MaxWidth = 10_000

// budget counts the elements for expressions walk and the text templates
// and text functions make; a limit of 0 is no limit. Safe for concurrent
// use (instances are evaluated in parallel).
type budget struct {
	used  atomic.Int64
	limit atomic.Int64
	// over is the collection whose walk went over the limit first: every
	// later refusal names it too, so the error is reported once (the
	// refusals of one nested for would be one per inner collection).
	over atomic.Pointer[hcl.Range]
	// bytes and byteLimit count the text made against MaxBytes the same
	// way; overBytes is the template part that went over first.
	bytes, byteLimit atomic.Int64
	overBytes        atomic.Pointer[hcl.Range]
}

func newBudget(limit, byteLimit int64) *budget {
	b := &budget{}
	b.limit.Store(limit)
	b.byteLimit.Store(byteLimit)
	return b
}

// unlimited lifts both limits: walking the recipients lists once they are
// fetched is the real work.
func (b *budget) unlimited() {
	b.limit.Store(0)
	b.byteLimit.Store(0)
}

// spendBytes takes n bytes of text from b and reports whether they were
// there.
func (b *budget) spendBytes(n int) bool {
	used := b.bytes.Add(int64(n))
	limit := b.byteLimit.Load()
	return limit == 0 || used <= limit
}

// bytesSpent reports whether b has gone over its limit of text.
func (b *budget) bytesSpent() bool {
	limit := b.byteLimit.Load()
	return limit != 0 && b.bytes.Load() > limit
}

// errTooMuchText is the error of a function whose text would go over the
// limit.
func (b *budget) errTooMuchText() error {
	return fmt.Errorf("the configuration's templates and text functions would make more than %s of text, the most a configuration may", mib(b.byteLimit.Load()))
}

// textRefusal is the error of a template part over b's limit of text, at
// the part that went over first (reported once, as refusal).
func (b *budget) textRefusal() *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Configuration too costly to evaluate",
		Detail: fmt.Sprintf("The templates and text functions (join, format, replace, ...) of this configuration make more than %s of text in all, the most a configuration may: "+
			"locals that repeat each other multiply. Make smaller values.", mib(b.byteLimit.Load())),
		Subject: b.overBytes.Load(),
	}
}

// mib writes a size in MiB, or in bytes under 1 MiB (tests).
func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%s bytes", group(int(n)))
}

// spend takes n elements from b and reports whether they were there.
func (b *budget) spend(n int) bool {
	used := b.used.Add(int64(n))
	limit := b.limit.Load()
	return limit == 0 || used <= limit
}

// budgetCounts is what a budget has spent, kept aside (see swap).
type budgetCounts struct{ used, bytes int64 }

// swap exchanges what b has spent with c. The walk of the evaluated
// configuration (evaluated.go) evaluates what the decoders evaluated once
// more, with counts of its own and the same limits, so it neither takes
// their allowance nor is refused where they were not. Nothing may
// evaluate while it swaps.
func (b *budget) swap(c *budgetCounts) {
	c.used = b.used.Swap(c.used)
	c.bytes = b.bytes.Swap(c.bytes)
}

// spent reports whether b has gone over its limit.
func (b *budget) spent() bool {
	limit := b.limit.Load()
	return limit != 0 && b.used.Load() > limit
}

// refusal is the error of an evaluation over b's limit, at the collection
// that went over first: the same for every refusal, so it is reported once.
func (b *budget) refusal() *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Configuration too costly to evaluate",
		Detail: fmt.Sprintf("The for expressions of this configuration walk more than %s elements in all (for_each instances included), the most a configuration may: "+
			"nested for expressions multiply. Walk smaller collections, or read the data from a file once.", group(int(b.limit.Load()))),
		Subject: b.over.Load(),
	}
}

// meterForExprs makes every for expression of node (a file's body, a
// template) spend from b the elements of the collection it walks, and
// every template the text of its parts, each time they are evaluated.
func meterForExprs(node hclsyntax.Node, b *budget) {
	var fors []*hclsyntax.ForExpr
	var templates []*hclsyntax.TemplateExpr
	var joins []*hclsyntax.TemplateJoinExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.ForExpr:
			fors = append(fors, n)
		case *hclsyntax.TemplateExpr:
			templates = append(templates, n)
		case *hclsyntax.TemplateJoinExpr:
			joins = append(joins, n)
		}
		return nil
	})
	// After the walk, which must see the expressions as parsed. Each
	// wrapper holds the expression through parentheses, whose child the
	// walkers of hclsyntax visit: Variables() still finds local.x in
	// "for x in local.x" (a wrapper is not a node of theirs; only its
	// children are).
	paren := func(e hclsyntax.Expression) *hclsyntax.ParenthesesExpr {
		return &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}
	}
	for _, fe := range fors {
		if _, done := fe.CollExpr.(*meteredCollection); !done {
			fe.CollExpr = &meteredCollection{Expression: paren(fe.CollExpr), b: b}
		}
	}
	for _, te := range templates {
		for i, part := range te.Parts {
			switch part.(type) {
			case *hclsyntax.LiteralValueExpr, *meteredText:
				// The file's own text costs nothing more, and keeps
				// IsStringLiteral true for a template of one literal.
			default:
				te.Parts[i] = &meteredText{Expression: paren(part), b: b}
			}
		}
	}
	for _, je := range joins {
		if _, done := je.Tuple.(*meteredText); !done {
			je.Tuple = &meteredText{Expression: paren(je.Tuple), b: b}
		}
	}
}

// meteredText is a part of a template, or the parts a template's for
// directive makes, which spend their text from a budget before the
// template joins them.
type meteredText struct {
	hclsyntax.Expression
	b *budget
}

func (m *meteredText) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if m.b.bytesSpent() {
		return cty.DynamicVal, hcl.Diagnostics{m.b.textRefusal()}
	}
	v, diags := m.Expression.Value(ctx)
	if !m.b.spendBytes(textSize(v, m.b)) {
		m.b.overBytes.CompareAndSwap(nil, m.Range().Ptr())
		return cty.DynamicVal, append(diags, m.b.textRefusal())
	}
	return v, diags
}

// textSize is the bytes of text in v (its strings, deeply; a number or a
// bool as a few), counted until it is more than what b has left.
func textSize(v cty.Value, b *budget) int {
	left := int64(1 << 62)
	if limit := b.byteLimit.Load(); limit != 0 {
		left = limit - b.bytes.Load() + 1
	}
	n := int64(0)
	var walk func(v cty.Value)
	walk = func(v cty.Value) {
		if n > left || !v.IsKnown() || v.IsNull() {
			return
		}
		v, _ = v.Unmark()
		ty := v.Type()
		switch {
		case ty == cty.String:
			n += int64(len(v.AsString()))
		case ty.IsPrimitiveType():
			n += 8
		case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next() && n <= left; {
				_, e := it.Element()
				walk(e)
			}
		}
	}
	walk(v)
	return int(min(n, left))
}

// meteredCollection is the collection of a for expression, which spends
// its length from a budget when evaluated.
type meteredCollection struct {
	hclsyntax.Expression
	b *budget
}

func (m *meteredCollection) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if m.b.spent() {
		// HCL's for goes on after an error in an element: its inner
		// collections are refused without being made again.
		return cty.DynamicVal, hcl.Diagnostics{m.b.refusal()}
	}
	v, diags := m.Expression.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return v, diags
	}
	n := 0
	switch ty := v.Type(); {
	case ty.IsObjectType():
		n = len(ty.AttributeTypes())
	case ty.IsCollectionType() || ty.IsTupleType():
		n = v.LengthInt()
	}
	if !m.b.spend(n) {
		m.b.over.CompareAndSwap(nil, m.Range().Ptr())
		return cty.DynamicVal, append(diags, m.b.refusal())
	}
	return v, diags
}

// group writes n with thousands separators.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cappedFunctions wraps the functions whose cost an argument sets: the
// elements or widths they would make are capped, and the text they would
// make is spent from b before they make it.
func cappedFunctions(fs map[string]function.Function, b *budget) {
	fs["setproduct"] = capped(stdlib.SetProductFunc, func(args []cty.Value) error {
		total := 1
		for _, a := range args {
			if !a.IsKnown() || a.IsNull() || !(a.Type().IsCollectionType() || a.Type().IsTupleType()) {
				return nil // the function itself reports it
			}
			if total *= a.LengthInt(); total > MaxSetProduct {
				return fmt.Errorf("setproduct would make more than %s elements, the most it may", group(MaxSetProduct))
			}
		}
		return nil
	})
	checkFormat := func(args []cty.Value) error {
		if len(args) == 0 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
			return nil
		}
		for _, m := range formatNumbers.FindAllStringSubmatch(args[0].AsString(), -1) {
			for _, n := range m[1:] {
				if len(n) > 6 || n != "" && atoi(n) > MaxWidth {
					return fmt.Errorf("a width or precision in the format is more than %s, the most it may be", group(MaxWidth))
				}
			}
		}
		return nil
	}
	// text spends n bytes from b, or refuses.
	text := func(n int) error {
		if !b.spendBytes(n) {
			return b.errTooMuchText()
		}
		return nil
	}
	fs["format"] = capped(stdlib.FormatFunc, func(args []cty.Value) error {
		if err := checkFormat(args); err != nil {
			return err
		}
		return text(textSize(cty.TupleVal(args), b))
	})
	fs["formatlist"] = capped(stdlib.FormatListFunc, func(args []cty.Value) error {
		if err := checkFormat(args); err != nil {
			return err
		}
		// Each of the n strings holds the format and an element of each
		// list, or the whole of each other argument.
		n, lists, scalars := 1, 0, 0
		for _, a := range args {
			a, _ = a.Unmark()
			ty := a.Type()
			if a.IsKnown() && !a.IsNull() && (ty.IsListType() || ty.IsTupleType() || ty.IsSetType()) {
				n = max(n, a.LengthInt())
				lists += textSize(a, b)
			} else {
				scalars += textSize(a, b)
			}
		}
		return text(lists + n*scalars)
	})
	fs["indent"] = capped(stdlib.IndentFunc, func(args []cty.Value) error {
		if len(args) < 2 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.Number {
			return nil
		}
		if bf := args[0].AsBigFloat(); bf.IsInf() || bf.Cmp(bigWidth) > 0 {
			return fmt.Errorf("indent takes at most %s spaces", group(MaxWidth))
		}
		if s, ok := knownString(args[1]); ok {
			w, _ := args[0].AsBigFloat().Int64()
			return text(len(s) + max(int(w), 0)*strings.Count(s, "\n"))
		}
		return nil
	})
	fs["join"] = capped(stdlib.JoinFunc, func(args []cty.Value) error {
		n, sep := 0, textSize(args[0], b)
		for _, a := range args[1:] {
			a, _ = a.Unmark()
			if a.IsKnown() && !a.IsNull() && a.CanIterateElements() {
				n += a.LengthInt() * sep
			}
		}
		return text(n + textSize(cty.TupleVal(args[1:]), b))
	})
	fs["replace"] = capped(stdlib.ReplaceFunc, func(args []cty.Value) error {
		s, ok1 := knownString(args[0])
		old, ok2 := knownString(args[1])
		repl, ok3 := knownString(args[2])
		if !ok1 || !ok2 || !ok3 {
			return nil
		}
		return text(len(s) + strings.Count(s, old)*len(repl))
	})
	fs["jsonencode"] = capped(stdlib.JSONEncodeFunc, func(args []cty.Value) error {
		return text(textSize(cty.TupleVal(args), b))
	})
}

// knownString is v's string, when v is a known string.
func knownString(v cty.Value) (string, bool) {
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	v, _ = v.Unmark()
	return v.AsString(), true
}

// formatNumbers finds the width and precision of each verb of a format
// string (%%, with no digits, matches too and is harmless).
var formatNumbers = regexp.MustCompile(`%[-+# 0]*(?:\[\d+\])?(\d*)(?:\.(\d*))?`)

var bigWidth = cty.NumberIntVal(MaxWidth).AsBigFloat()

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// capped is f with check run on its arguments first.
func capped(f function.Function, check func([]cty.Value) error) function.Function {
	spec := &function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			return f.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if err := check(args); err != nil {
				return cty.DynamicVal, err
			}
			return f.Call(args)
		},
	}
	return function.New(spec)
}
