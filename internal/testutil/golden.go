package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that compares golden
// files: go test ./views -update rewrites them with what the tests produce.
var update = flag.Bool("update", false, "rewrite golden files under testdata/ with what the tests produce")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Golden compares got with the golden file at path. With -update it
// writes got there first (creating its directory), so the comparison
// passes and the change shows in git diff.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run '%s' -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update accepts the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
