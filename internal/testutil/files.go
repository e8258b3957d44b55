package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// ServiceTest is the smallest service block: environment "test", no
// server (tests that send point base_url at a sandbox of their own).
const ServiceTest = "service {\n  environment = \"test\"\n}\n"

// WriteFiles writes files (name -> content; names may hold slashes) into
// a new temporary directory, readable by everyone as a checkout is, and
// returns it.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		WriteFile(t, dir, name, src)
	}
	return dir
}

// WriteFile writes src to name under dir, creating the directories name
// holds.
func WriteFile(t testing.TB, dir, name, src string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Quickstart copies the quickstart example (a campaign and its embedded
// sandbox: no server needed) into a new temporary directory and returns
// it.
func Quickstart(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	dir := t.TempDir()
	for _, name := range []string{"main.hcl", "sandbox.hcl"} {
		src, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		WriteFile(t, dir, name, string(src))
	}
	return dir
}

// RepoRoot is the repository's root: the nearest directory holding go.mod
// from the test's package directory up.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
