package config

import (
	"fmt"
	"regexp"
	"strconv"
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
// (11 s), format("%0999999999d", 1) a gigabyte. Load caps each, with an
// error naming the expression, so a mistyped or hostile file cannot stall
// validate, plan or a CI job (FuzzLoad found these).

// MaxIterations is how many elements the for expressions of a
// configuration may walk in all, for_each instances included, when it is
// loaded (about 1.5 s of work): more than a for over the largest CSV file
// file() reads (16 MiB, some 600,000 rows). Walking the recipients list
// once it is fetched is not counted.
const MaxIterations = 1_000_000

// MaxSetProduct is the most elements setproduct may make.
const MaxSetProduct = 100_000

// MaxWidth is the largest width or precision format, formatlist and
// indent accept.
const MaxWidth = 10_000

// budget counts the elements for expressions walk; a limit of 0 is no
// limit. Safe for concurrent use (instances are evaluated in parallel).
type budget struct {
	used  atomic.Int64
	limit atomic.Int64
	// over is the collection whose walk went over the limit first: every
	// later refusal names it too, so the error is reported once (the
	// refusals of one nested for would be one per inner collection).
	over atomic.Pointer[hcl.Range]
}

func newBudget(limit int64) *budget {
	b := &budget{}
	b.limit.Store(limit)
	return b
}

// spend takes n elements from b and reports whether they were there.
func (b *budget) spend(n int) bool {
	used := b.used.Add(int64(n))
	limit := b.limit.Load()
	return limit == 0 || used <= limit
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
// template) spend from b the elements of the collection it walks, each
// time it is evaluated.
func meterForExprs(node hclsyntax.Node, b *budget) {
	var fors []*hclsyntax.ForExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if fe, ok := n.(*hclsyntax.ForExpr); ok {
			fors = append(fors, fe)
		}
		return nil
	})
	for _, fe := range fors { // after the walk, which must see the expressions as parsed
		if _, done := fe.CollExpr.(*meteredCollection); !done {
			// Through parentheses, whose child the walkers of hclsyntax
			// visit: Variables() still finds local.x in "for x in local.x"
			// (a wrapper is not a node of theirs; only its children are).
			paren := &hclsyntax.ParenthesesExpr{Expression: fe.CollExpr, SrcRange: fe.CollExpr.Range()}
			fe.CollExpr = &meteredCollection{Expression: paren, b: b}
		}
	}
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

// cappedFunctions wraps the functions whose cost an argument sets.
func cappedFunctions(fs map[string]function.Function) {
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
	fs["format"] = capped(stdlib.FormatFunc, checkFormat)
	fs["formatlist"] = capped(stdlib.FormatListFunc, checkFormat)
	fs["indent"] = capped(stdlib.IndentFunc, func(args []cty.Value) error {
		if len(args) > 0 && args[0].IsKnown() && !args[0].IsNull() && args[0].Type() == cty.Number {
			if bf := args[0].AsBigFloat(); bf.IsInf() || bf.Cmp(bigWidth) > 0 {
				return fmt.Errorf("indent takes at most %s spaces", group(MaxWidth))
			}
		}
		return nil
	})
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
