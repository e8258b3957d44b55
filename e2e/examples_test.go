package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples applies every example twice, as the README tells users to:
// the first run sends, the second plans no changes. Examples can never rot.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*/main.hcl")
	if err != nil || len(dirs) < 3 {
		t.Fatalf("examples: %v %v", dirs, err)
	}
	for _, mainFile := range dirs {
		src := filepath.Dir(mainFile)
		t.Run(filepath.Base(src), func(t *testing.T) {
			w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1")}
			if err := os.CopyFS(w.dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			for _, leftover := range []string{"pushform.state", "pushform.sandbox.json", "pushform.state.backup", "pushform.state.journal"} {
				os.Remove(filepath.Join(w.dir, leftover))
			}
			w.env = append(w.env, pgExample(t, w.dir)...)
			w.mustRun(0, "validate")
			r := w.mustRun(0, "apply", "--auto-approve")
			if !strings.Contains(r.stdout, "Apply complete") {
				t.Fatalf("apply:\n%s", r.stdout)
			}
			r = w.mustRun(0, "plan", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "No changes.") {
				t.Fatalf("second plan:\n%s", r.stdout)
			}
		})
	}
}
