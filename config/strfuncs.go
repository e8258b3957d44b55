package config

import (
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// startsWithFunc is Terraform's startswith(string, prefix): whether the
// string begins with the prefix.
var startsWithFunc = affixFunc("prefix", strings.HasPrefix)

// endsWithFunc is Terraform's endswith(string, suffix).
var endsWithFunc = affixFunc("suffix", strings.HasSuffix)

func affixFunc(name string, test func(s, affix string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "str", Type: cty.String},
			{Name: name, Type: cty.String},
		},
		Type:         function.StaticReturnType(cty.Bool),
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(test(args[0].AsString(), args[1].AsString())), nil
		},
	})
}
