package config

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExamples loads every directory under examples/: examples never rot.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			l := NewLoader()
			cfg, diags := l.Load(dir, Options{})
			if len(diags) > 0 {
				var buf bytes.Buffer
				l.WriteDiagnostics(&buf, diags, 0, false)
				t.Fatalf("diagnostics:\n%s", buf.String())
			}
			if len(cfg.Messages) == 0 {
				t.Fatal("no messages")
			}
			// An example runs against the embedded sandbox, or is a
			// production configuration with a seed to rehearse it against
			// `pushform sandbox` (examples/github-actions).
			_, rehearsal := os.Stat(filepath.Join(dir, "sandbox", "seed.hcl"))
			switch {
			case cfg.Service.Sandbox == "sandbox.hcl" && cfg.Service.Environment == "test":
			case cfg.Service.BaseURL != "" && cfg.Service.Environment == "production" && rehearsal == nil:
			default:
				t.Errorf("service = %+v", cfg.Service)
			}
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Errorf("no README.md: %v", err)
			}
			for _, m := range cfg.Messages {
				t.Logf("%s %+v %+v", m.Address, m.Targets, m.Content)
			}
		})
	}
	if n < 3 {
		t.Fatalf("found %d examples, want at least 3", n)
	}
}
