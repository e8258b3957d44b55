package config_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"pushform/backend"
	"pushform/config"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

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
			golden := dir + ".txt"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("diagnostics differ from %s (run go test -update to accept):\n%s", golden, buf.String())
			}
		})
	}
}
