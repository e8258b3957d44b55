package testrun

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/plandoc"
)

// TestObjectsDocumented: every key of every object a condition reads is
// named in docs/language/tests.md, whose reference would otherwise drift
// from the types that make the objects.
func TestObjectsDocumented(t *testing.T) {
	page, err := os.ReadFile("../docs/language/tests.md")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z_]+`).FindAllString(string(page), -1) {
		words[w] = true
	}
	var missing []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || ty == reflect.TypeFor[time.Time]() || seen[ty] {
			return
		}
		seen[ty] = true
		for f := range ty.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !words[name] {
				missing = append(missing, path+"."+name)
			}
			walk(f.Type, path+"."+name)
		}
	}
	for name, v := range map[string]any{"plan": plandoc.Document{}, "apply": Apply{}, "device": Device{}, "history_user": Delivery{}, "requests": Request{}} {
		walk(reflect.TypeOf(v), name)
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/language/tests.md does not name these keys:\n  %s", strings.Join(missing, "\n  "))
	}
}
