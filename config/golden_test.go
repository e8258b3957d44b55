package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"pushform/backend"
	"pushform/config"
	"pushform/internal/testutil"
)

// TestGoldenDiagnostics renders the diagnostics of each directory under
// testdata/golden/ with source snippets and compares with NAME.txt.
func TestGoldenDiagnostics(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			l := config.NewLoader()
			l.Backends = backend.Builtins() // the backend blocks' own schemas
			_, diags := l.Load(dir, config.Options{})
			if len(diags) == 0 {
				t.Fatal("no diagnostics")
			}
			var buf bytes.Buffer
			if err := l.WriteDiagnostics(&buf, diags, 0, false); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, dir+".txt", buf.Bytes())
		})
	}
}
