package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	fatal, errors []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestX" }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestGolden(t *testing.T) {
	if Updating() {
		t.Skip("-update rewrites golden files: this test checks comparing them")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "want.txt")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		path, got     string
		fatal, errors int
	}{
		{"equal", path, "same\n", 0, 0},
		{"different", path, "other\n", 0, 1},
		{"missing", filepath.Join(dir, "none.txt"), "x", 1, 1},
	}
	for _, tt := range tests {
		r := &recorder{TB: t}
		Golden(r, tt.path, []byte(tt.got))
		if len(r.fatal) != tt.fatal || len(r.errors) != tt.errors {
			t.Errorf("%s: fatal %q errors %q, want %d and %d", tt.name, r.fatal, r.errors, tt.fatal, tt.errors)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := WriteFiles(t, map[string]string{"main.hcl": "a", "vars/x.pfvars": "b"})
	for name, want := range map[string]string{"main.hcl": "a", "vars/x.pfvars": "b"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestQuickstart(t *testing.T) {
	dir := Quickstart(t)
	for _, name := range []string{"main.hcl", "sandbox.hcl"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(RepoRoot(t), "go.mod")); err != nil {
		t.Errorf("RepoRoot: %v", err)
	}
}
