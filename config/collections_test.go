package config

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The fast toset/tolist/tomap must agree with go-cty's on every input.
func TestToCollectionMatchesStdlib(t *testing.T) {
	fast := map[string]function.Function{"toset": toCollectionFunc(cty.Set), "tolist": toCollectionFunc(cty.List), "tomap": toCollectionFunc(cty.Map)}
	slow := map[string]function.Function{
		"toset":  stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":  stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	}
	vars := map[string]cty.Value{
		"unknown": cty.UnknownVal(cty.String),
		"rows": cty.ListVal([]cty.Value{
			cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("a"), "n": cty.NumberIntVal(1)}),
			cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("b"), "n": cty.NumberIntVal(2)}),
		}),
	}
	for _, src := range []string{
		`toset(["a", "b", "a"])`, `tolist(["a", "b"])`, `toset([])`, `tolist([])`, `tomap({})`,
		`toset(["a", 1])`, `tolist(["a", true])`, `toset([1, 2, 1])`,
		`toset([for r in rows : r.id])`, `toset([for r in rows : r])`, `tolist([for r in rows : r])`,
		`tomap({ for r in rows : r.id => r })`, `tomap({ a = "x", b = 1 })`, `tomap({ a = "x", b = "y" })`,
		`toset(["a", unknown])`, `tolist([["a"], ["b", "c"]])`, `toset([{ a = 1 }, { a = "x" }])`,
		`toset(null)`, `tolist(toset(["b", "a"]))`, `tomap({ a = ["x"], b = [] })`,
	} {
		t.Run(src, func(t *testing.T) {
			expr, d := hclsyntax.ParseExpression([]byte(src), "t.hcl", hcl.Pos{Line: 1, Column: 1})
			if d.HasErrors() {
				t.Fatal(d)
			}
			want, wd := expr.Value(&hcl.EvalContext{Variables: vars, Functions: slow})
			got, gd := expr.Value(&hcl.EvalContext{Variables: vars, Functions: fast})
			if wd.HasErrors() != gd.HasErrors() {
				t.Fatalf("errors differ: stdlib %v, fast %v", wd, gd)
			}
			if wd.HasErrors() {
				return
			}
			if !got.Type().Equals(want.Type()) || !got.RawEquals(want) {
				t.Fatalf("fast = %#v, stdlib = %#v", got, want)
			}
		})
	}
}

func BenchmarkToSet100k(b *testing.B) {
	vals := make([]cty.Value, 100_000)
	for i := range vals {
		vals[i] = cty.StringVal(fmt.Sprintf("order-%06d", i))
	}
	tuple := cty.TupleVal(vals)
	f := toCollectionFunc(cty.Set)
	for b.Loop() {
		if _, err := f.Call([]cty.Value{tuple}); err != nil {
			b.Fatal(err)
		}
	}
}
