package plandoc

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// The cty side of the document: the plan and change objects of HCL
// expressions. Their types come from the Go types above, by their JSON
// names, so the object a condition reads and the document plan --json
// prints cannot differ: a key added to a struct is in both.

// PlanType is the type of the plan object; ChangeType of a change.
var (
	PlanType   = typeOf(reflect.TypeFor[Document]())
	ChangeType = typeOf(reflect.TypeFor[Change]())
)

// Value is the plan object of d, as conditions read it.
func (d *Document) Value() cty.Value {
	return valueOf(reflect.ValueOf(d).Elem())
}

// Value is the change object of c.
func (c *Change) Value() cty.Value {
	return valueOf(reflect.ValueOf(c).Elem())
}

var (
	timeType = reflect.TypeFor[time.Time]()
	types    sync.Map // reflect.Type -> cty.Type
	structs  sync.Map // reflect.Type -> []field
)

// typeOf is the cty type of values of Go type t: an object per struct
// (attributes named by their json tags), a list per slice, a map per map
// of strings, a string per time, nullable through pointers.
func typeOf(t reflect.Type) cty.Type {
	if ct, ok := types.Load(t); ok {
		return ct.(cty.Type)
	}
	var ct cty.Type
	switch {
	case t == timeType:
		ct = cty.String
	case t.Kind() == reflect.Pointer:
		ct = typeOf(t.Elem())
	case t.Kind() == reflect.String:
		ct = cty.String
	case t.Kind() == reflect.Bool:
		ct = cty.Bool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		ct = cty.Number
	case t.Kind() == reflect.Slice:
		ct = cty.List(typeOf(t.Elem()))
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		ct = cty.Map(typeOf(t.Elem()))
	case t.Kind() == reflect.Struct:
		attrs := map[string]cty.Type{}
		for _, f := range fields(t) {
			attrs[f.name] = typeOf(t.Field(f.index).Type)
		}
		ct = cty.Object(attrs)
	default:
		panic(fmt.Sprintf("plandoc: no cty type for %s", t))
	}
	types.Store(t, ct)
	return ct
}

// field is a struct field by its JSON name.
type field struct {
	name  string
	index int
}

// fields lists t's fields with their JSON names.
func fields(t reflect.Type) []field {
	if fs, ok := structs.Load(t); ok {
		return fs.([]field)
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			panic(fmt.Sprintf("plandoc: field %s.%s has no JSON name", t, f.Name))
		}
		out = append(out, field{name, i})
	}
	structs.Store(t, out)
	return out
}

// valueOf converts v to the cty value of typeOf(v.Type()).
func valueOf(v reflect.Value) cty.Value {
	t := v.Type()
	switch {
	case t == timeType:
		return cty.StringVal(v.Interface().(time.Time).Format(time.RFC3339Nano))
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			return cty.NullVal(typeOf(t))
		}
		return valueOf(v.Elem())
	case t.Kind() == reflect.String:
		return cty.StringVal(v.String())
	case t.Kind() == reflect.Bool:
		return cty.BoolVal(v.Bool())
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return cty.NumberIntVal(v.Int())
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return cty.NumberUIntVal(v.Uint())
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return cty.NumberFloatVal(v.Float())
	case t.Kind() == reflect.Slice:
		if v.IsNil() { // as in JSON: New makes every list but Policies
			return cty.NullVal(typeOf(t))
		}
		if v.Len() == 0 {
			return cty.ListValEmpty(typeOf(t.Elem()))
		}
		elems := make([]cty.Value, v.Len())
		for i := range elems {
			elems[i] = valueOf(v.Index(i))
		}
		return cty.ListVal(elems)
	case t.Kind() == reflect.Map:
		if v.IsNil() {
			return cty.NullVal(typeOf(t))
		}
		if v.Len() == 0 {
			return cty.MapValEmpty(typeOf(t.Elem()))
		}
		elems := make(map[string]cty.Value, v.Len())
		for it := v.MapRange(); it.Next(); {
			elems[it.Key().String()] = valueOf(it.Value())
		}
		return cty.MapVal(elems)
	case t.Kind() == reflect.Struct:
		fs := fields(t)
		attrs := make(map[string]cty.Value, len(fs))
		for _, f := range fs {
			attrs[f.name] = valueOf(v.Field(f.index))
		}
		return cty.ObjectVal(attrs)
	}
	panic(fmt.Sprintf("plandoc: no cty value for %s", t))
}
