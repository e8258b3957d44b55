package config

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

func TestAggregateFunctions(t *testing.T) {
	funcs := Functions(t.TempDir())
	tests := []struct {
		expr string
		want cty.Value // cty.NilVal: an error
	}{
		{`sum([1, 2, 3.5])`, cty.NumberFloatVal(6.5)},
		{`sum([for i in range(3) : i])`, cty.NumberIntVal(3)},
		{`sum([])`, cty.NilVal},
		{`alltrue([true, true])`, cty.True},
		{`alltrue([true, false])`, cty.False},
		{`alltrue([])`, cty.True},
		{`anytrue([false, true])`, cty.True},
		{`anytrue([])`, cty.False},
		{`alltrue([true, null])`, cty.NilVal},
		{`one(["a"])`, cty.StringVal("a")},
		{`one([])`, cty.NullVal(cty.DynamicPseudoType)},
		{`one(tolist([]))`, cty.NullVal(cty.DynamicPseudoType)},
		{`one([for x in ["a", "b"] : x if x == "b"])`, cty.StringVal("b")},
		{`one(["a", "b"])`, cty.NilVal},
		{`one(tolist(["a", "b"]))`, cty.NilVal},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			e, diags := hclsyntax.ParseExpression([]byte(tt.expr), "x", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got, diags := e.Value(&hcl.EvalContext{Functions: funcs})
			switch {
			case tt.want == cty.NilVal:
				if !diags.HasErrors() {
					t.Fatalf("= %#v; want an error", got)
				}
			case diags.HasErrors():
				t.Fatal(diags)
			case !got.RawEquals(tt.want) && !(got.IsNull() && tt.want.IsNull()):
				t.Fatalf("= %#v; want %#v", got, tt.want)
			}
		})
	}
}
