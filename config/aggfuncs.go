package config

import (
	"errors"
	"math/big"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Terraform's functions over a whole collection, which conditions (tests,
// policies) need most: sum, alltrue, anytrue and one.

// sumFunc is sum(list): the total of a list of numbers; an empty list is
// an error, as in Terraform.
var sumFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Number)}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		l := args[0]
		if l.LengthInt() == 0 {
			return cty.NilVal, function.NewArgErrorf(0, "cannot sum an empty list")
		}
		total := new(big.Float)
		for _, v := range l.AsValueSlice() {
			if v.IsNull() {
				return cty.NilVal, function.NewArgErrorf(0, "cannot sum a list with a null element")
			}
			total.Add(total, v.AsBigFloat())
		}
		return cty.NumberVal(total), nil
	},
})

// allTrueFunc is alltrue(list): whether every element is true (an empty
// list: true); anyTrueFunc is anytrue(list): whether one is (empty: false).
var (
	allTrueFunc = boolsFunc(true)
	anyTrueFunc = boolsFunc(false)
)

func boolsFunc(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for _, v := range args[0].AsValueSlice() {
				if v.IsNull() {
					return cty.NilVal, function.NewArgErrorf(0, "the list has a null element")
				}
				if v.True() != all {
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}

// oneFunc is one(collection): null for an empty list, set or tuple, its
// element for one, an error for more.
var oneFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty.IsListType() || ty.IsSetType():
			return ty.ElementType(), nil
		case ty.IsTupleType():
			switch elems := ty.TupleElementTypes(); len(elems) {
			case 0:
				return cty.DynamicPseudoType, nil
			case 1:
				return elems[0], nil
			default:
				return cty.NilType, function.NewArgErrorf(0, "must be a list, set or tuple of at most one element")
			}
		}
		return cty.NilType, function.NewArgErrorf(0, "must be a list, set or tuple, not %s", ty.FriendlyName())
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		v := args[0]
		if !v.IsKnown() {
			return cty.UnknownVal(retType), nil
		}
		if v.IsNull() {
			return cty.NilVal, errors.New("argument must not be null")
		}
		switch n := v.LengthInt(); n {
		case 0:
			return cty.NullVal(retType), nil
		case 1:
			return v.AsValueSlice()[0], nil
		default:
			return cty.NilVal, function.NewArgErrorf(0, "must have at most one element, not %d", n)
		}
	},
})
