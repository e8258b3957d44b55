package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	tests := []struct {
		name    string
		content string
		fail    error
		want    string
	}{
		{"create", "one", nil, "one"},
		{"replace", "two", nil, "two"},
		{"failed write keeps the old file", "three", errors.New("boom"), "two"},
	}
	for _, tt := range tests {
		err := Write(path, 0o600, func(w io.Writer) error {
			if _, err := io.WriteString(w, tt.content); err != nil {
				return err
			}
			return tt.fail
		})
		if !errors.Is(err, tt.fail) {
			t.Fatalf("%s: err = %v", tt.name, err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != tt.want {
			t.Errorf("%s: content %q, want %q", tt.name, got, tt.want)
		}
		fi, _ := os.Stat(path)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", tt.name, fi.Mode().Perm())
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("%s: %d files left in the directory", tt.name, len(entries))
		}
	}
}
