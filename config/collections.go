package config

import (
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// toCollectionFunc is toset, tolist or tomap (kind is cty.Set, cty.List or
// cty.Map) with a fast path for the common case of a tuple or object whose
// elements all have one type, such as toset([for o in rows : o.id]).
//
// go-cty's conversion first unifies the element types, and its sortTypes
// compares every pair of them: 40,000 elements took 22 s, 100,000 more than
// 90 s. With one element type there is nothing to unify, so the fast path
// builds the collection directly, in linear time. Anything else (mixed
// types, unknown or marked values) takes the stdlib path unchanged.
func toCollectionFunc(kind func(cty.Type) cty.Type) function.Function {
	slow := stdlib.MakeToFunc(kind(cty.DynamicPseudoType))
	return function.New(&function.Spec{
		Description: slow.Description(),
		Params: []function.Parameter{{
			Name: "v", Type: cty.DynamicPseudoType,
			AllowNull: true, AllowUnknown: true, AllowDynamicType: true, AllowMarked: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) {
			if ety, ok := uniformElementType(args[0], kind); ok {
				return kind(ety), nil
			}
			return slow.ReturnType([]cty.Type{args[0].Type()})
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v := args[0]
			if _, ok := uniformElementType(v, kind); !ok {
				return slow.Call(args)
			}
			if kind(cty.String).IsMapType() {
				m := make(map[string]cty.Value, v.LengthInt())
				for it := v.ElementIterator(); it.Next(); {
					k, ev := it.Element()
					m[k.AsString()] = ev
				}
				return cty.MapVal(m), nil
			}
			vals := make([]cty.Value, 0, v.LengthInt())
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				vals = append(vals, ev)
			}
			if kind(cty.String).IsSetType() {
				return cty.SetVal(vals), nil
			}
			return cty.ListVal(vals), nil
		},
	})
}

// uniformElementType returns the one type of every element of v when v is
// a known, unmarked, non-null tuple (for a list or set) or object (for a
// map) whose element types are all equal, known and free of dynamic parts.
func uniformElementType(v cty.Value, kind func(cty.Type) cty.Type) (cty.Type, bool) {
	if !v.IsKnown() || v.IsNull() || v.IsMarked() || !v.IsWhollyKnown() || v.ContainsMarked() {
		return cty.NilType, false
	}
	ty := v.Type()
	var etys []cty.Type
	switch {
	case kind(cty.String).IsMapType() && ty.IsObjectType():
		for _, t := range ty.AttributeTypes() {
			etys = append(etys, t)
		}
	case !kind(cty.String).IsMapType() && ty.IsTupleType():
		etys = ty.TupleElementTypes()
	default:
		return cty.NilType, false
	}
	if len(etys) == 0 {
		return cty.NilType, false // stdlib decides the empty case
	}
	first := etys[0]
	if first.HasDynamicTypes() {
		return cty.NilType, false
	}
	for _, t := range etys[1:] {
		if !t.Equals(first) {
			return cty.NilType, false
		}
	}
	if kind(cty.String).IsSetType() && !setElementOK(first) {
		return cty.NilType, false
	}
	return first, true
}

// setElementOK reports whether values of ty may be set elements directly:
// go-cty refuses sets of some types (it cannot hash them reliably), and
// the stdlib path reports that with its own message.
func setElementOK(ty cty.Type) bool {
	return ty.IsPrimitiveType() || ty.IsObjectType() || ty.IsTupleType() || ty.IsListType() || ty.IsMapType() || ty.IsSetType()
}
