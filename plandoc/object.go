package plandoc

import (
	"reflect"

	"github.com/zclconf/go-cty/cty"

	"pushform/message"
)

// ObjectValue is the cty value of v (a struct, a pointer to one, or a
// slice of them), made the way the plan object is: attributes named by
// their JSON names, a nil pointer or slice null. pushform test's other
// objects (apply, device, the histories, requests) are made with it, so
// they follow the plan's rules and its documentation's.
func ObjectValue(v any) cty.Value { return valueOf(reflect.ValueOf(v)) }

// ContentOf is the document of a content, its unset fields null, as a
// change shows it.
func ContentOf(c message.Content) Content { return content(c) }
