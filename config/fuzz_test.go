package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds one file's bytes through the parser, decoder and
// evaluator: whatever the input, Load must return, never panic.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/*/*.hcl")
	golden, _ := filepath.Glob("testdata/golden/*/*.hcl")
	for _, p := range append(seeds, golden...) {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("service {\n  environment = \"test\"\n}\nnotification \"n\" {\n  for_each = { for i in range(3) : tostring(i) => i }\n  user_ids = [each.key]\n  badge_count = each.value\n}\n"))
	f.Add([]byte("locals { a = local.a }"))
	f.Add([]byte("${"))
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, diags := NewLoader().Load(dir, Options{})
		if !diags.HasErrors() && cfg == nil {
			t.Fatal("no errors and no config")
		}
	})
}
