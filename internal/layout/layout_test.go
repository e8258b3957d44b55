package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The limits of a non-test Go file and of a non-test function, in lines.
const (
	maxFileLines = 900
	maxFuncLines = 120
)

// sizeAllowed are the directories that may exceed the limits for now, and
// why. An entry whose directory no longer needs it fails the test: the
// list only shrinks.
var sizeAllowed = map[string]string{}

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", dir, err)
	}
	return dir
}

// goFile is a parsed non-test Go file, by its slash path from the root.
type goFile struct {
	path string
	fset *token.FileSet
	file *ast.File
}

// sourceFiles parses every non-test Go file of the repository, generated
// ones left out, testdata and hidden directories skipped.
func sourceFiles(t *testing.T) []goFile {
	t.Helper()
	top := root(t)
	var files []goFile
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != top && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(top, p)
		files = append(files, goFile{path: filepath.ToSlash(rel), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	return files
}

// TestSizes: no non-test Go file over maxFileLines lines and no non-test
// function over maxFuncLines, outside generated code and sizeAllowed.
func TestSizes(t *testing.T) {
	needed := map[string]bool{}
	for _, f := range sourceFiles(t) {
		for _, v := range oversized(f) {
			if dir := allowedDir(f.path); dir != "" {
				needed[dir] = true
				continue
			}
			t.Errorf("%s; split it by concern (docs/architecture.md says where things go)", v)
		}
	}
	for dir, why := range sizeAllowed {
		if !needed[dir] {
			t.Errorf("%s is within the limits now: remove its entry from sizeAllowed (%s)", dir, why)
		}
	}
}

// oversized lists what in f is over the limits.
func oversized(f goFile) []string {
	var out []string
	if n := f.fset.File(f.file.Pos()).LineCount(); n > maxFileLines {
		out = append(out, fmt.Sprintf("%s has %d lines, more than %d", f.path, n, maxFileLines))
	}
	for _, d := range f.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := f.fset.Position(fn.Pos()), f.fset.Position(fn.End())
		if n := end.Line - start.Line + 1; n > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: %s has %d lines, more than %d", f.path, start.Line, funcName(fn), n, maxFuncLines))
		}
	}
	return out
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// allowedDir returns the sizeAllowed entry that covers path, or "".
func allowedDir(path string) string {
	for dir := range sizeAllowed {
		if strings.HasPrefix(path, dir) {
			return dir
		}
	}
	return ""
}

// TestOversized: the size check sees a function and a file over the
// limits, so TestSizes cannot pass by seeing nothing.
func TestOversized(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n\nfunc long() {\n")
	for range maxFuncLines {
		b.WriteString("\t_ = 0\n")
	}
	b.WriteString("}\n\nfunc short() {}\n")
	for range maxFileLines {
		b.WriteString("\n")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p/long.go", b.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := oversized(goFile{path: "p/long.go", fset: fset, file: f})
	want := []string{
		fmt.Sprintf("p/long.go has %d lines, more than %d", strings.Count(b.String(), "\n"), maxFileLines),
		fmt.Sprintf("p/long.go:3: long has %d lines, more than %d", maxFuncLines+2, maxFuncLines),
	}
	if !slices.Equal(got, want) {
		t.Errorf("oversized:\n got %q\nwant %q", got, want)
	}
}

// TestCommandCallsOperations: package command parses flags, calls an
// operation, picks a view and maps an exit code. Its non-test files
// import no state package (pushform/state or below) and open no backend
// (backend.Open, backend.OpenState, ...): package operation does that.
func TestCommandCallsOperations(t *testing.T) {
	checked := 0
	for _, f := range sourceFiles(t) {
		if !strings.HasPrefix(f.path, "command/") {
			continue
		}
		checked++
		for _, v := range commandViolations(f) {
			t.Error(v)
		}
	}
	if checked == 0 {
		t.Fatal("no file of package command found")
	}
}

// commandViolations lists f's imports of state packages and its calls
// that open a backend.
func commandViolations(f goFile) []string {
	var out []string
	backendName := ""
	for _, imp := range f.file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == "pushform/state" || strings.HasPrefix(p, "pushform/state/") {
			out = append(out, fmt.Sprintf("%s imports %s: call an operation (package operation) instead", f.path, p))
		}
		if p == "pushform/backend" {
			backendName = "backend"
			if imp.Name != nil {
				backendName = imp.Name.Name
			}
		}
	}
	if backendName == "" {
		return out
	}
	ast.Inspect(f.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == backendName && strings.HasPrefix(sel.Sel.Name, "Open") {
			out = append(out, fmt.Sprintf("%s:%d: %s.%s opens a backend: call an operation (package operation) instead",
				f.path, f.fset.Position(sel.Pos()).Line, backendName, sel.Sel.Name))
		}
		return true
	})
	return out
}

// TestCommandViolations: the import check sees a state import and a
// backend opened, so TestCommandCallsOperations cannot pass by seeing
// nothing.
func TestCommandViolations(t *testing.T) {
	src := `package command

import (
	"pushform/backend"
	"pushform/state/local"
)

func f() { backend.OpenState(nil, backend.StateOptions{}); _ = local.NewFile }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "command/x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := commandViolations(goFile{path: "command/x.go", fset: fset, file: f})
	if len(got) != 2 || !strings.Contains(got[0], "imports pushform/state/local") || !strings.Contains(got[1], "command/x.go:8: backend.OpenState") {
		t.Errorf("violations: %q", got)
	}
}
