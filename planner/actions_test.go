package planner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestActionsListsEveryAction reads the package's source for constants of
// type Action, so a new action without a row in actionTable (and so
// missing from Actions and the views' tests) fails here.
func TestActionsListsEveryAction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var declared []Action
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Action" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: an Action constant that is not a string literal", fset.Position(v.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					declared = append(declared, Action(s))
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("found no Action constants: the test no longer reads the source")
	}
	listed := Actions()
	if len(listed) != len(declared) {
		t.Errorf("Actions() has %d actions, the source declares %d: %v", len(listed), len(declared), declared)
	}
	for _, a := range declared {
		if !slices.Contains(listed, a) {
			t.Errorf("action %q is declared but has no row in actionTable (planner/actions.go)", a)
		}
	}
	for i, a := range listed {
		if slices.Index(listed, a) != i {
			t.Errorf("actionTable has two rows for %q", a)
		}
	}
}
