package local

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pushform/state/statetest"
)

var errNoLinks = errors.New("operation not supported")

// TestBackupCopiesWithoutHardLinks: where the file system has no hard
// links, the backup is a copy of the previous snapshot, mode 0600, and a
// later snapshot does not change it.
func TestBackupCopiesWithoutHardLinks(t *testing.T) {
	f := NewFile(filepath.Join(t.TempDir(), "pushform.state"))
	links := 0
	f.link = func(string, string) error { links++; return errNoLinks }
	s := statetest.Sample()
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Persist(s); err != nil {
		t.Fatalf("Persist without hard links: %v", err)
	}
	if links != 1 {
		t.Fatalf("%d link attempts, want 1 (the first Persist has nothing to back up)", links)
	}
	backup, err := os.ReadFile(f.BackupPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(backup, first) {
		t.Fatal("the copied backup is not the previous snapshot")
	}
	fi, err := os.Stat(f.BackupPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
	}
	// A copy, not the same file: the next snapshot leaves it as it was.
	second, _ := os.ReadFile(f.Path())
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
	if backup, _ := os.ReadFile(f.BackupPath()); !bytes.Equal(backup, second) {
		t.Fatal("the backup is not the snapshot before the last one")
	}
	if _, err := os.Stat(f.BackupPath() + ".tmp"); err == nil {
		t.Error("the backup's temp file was left")
	}
}

// TestBackupFailureKeepsSnapshot: when the backup can be neither linked
// nor copied, Persist fails saying so and the snapshot on disk is the
// previous one, whole.
func TestBackupFailureKeepsSnapshot(t *testing.T) {
	f := NewFile(filepath.Join(t.TempDir(), "pushform.state"))
	s := statetest.Sample()
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(f.Path())
	f.link = func(string, string) error { return errNoLinks }
	// A directory where the copy must go: it cannot be removed or written.
	if err := os.MkdirAll(filepath.Join(f.BackupPath()+".tmp", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	serial := s.Serial
	err := f.Persist(s)
	if err == nil || !strings.Contains(err.Error(), "backing up state") {
		t.Fatalf("Persist = %v; want a backup error", err)
	}
	if s.Serial != serial {
		t.Errorf("serial moved to %d on a failed Persist", s.Serial)
	}
	if after, _ := os.ReadFile(f.Path()); !bytes.Equal(after, before) {
		t.Fatal("a failed Persist changed the snapshot")
	}
	if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(f.Path()), ".pushform.state.tmp-*")); len(tmps) > 0 {
		t.Errorf("a failed Persist left its temp file: %v", tmps)
	}
}
