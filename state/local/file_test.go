package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
)

func newFile(t *testing.T) *local.File {
	return local.NewFile(filepath.Join(t.TempDir(), "pushform.state"))
}

func TestFileManager(t *testing.T) {
	statetest.TestManager(t, func(t *testing.T) state.Manager { return newFile(t) })
}

func TestFileShared(t *testing.T) {
	statetest.TestShared(t, func(t *testing.T) statetest.Storage {
		path := filepath.Join(t.TempDir(), "pushform.state")
		return statetest.Storage{
			Open: func(*testing.T) statetest.Backend { return local.NewFile(path) },
			Kill: func(_ *testing.T, m statetest.Backend) { local.Kill(m.(*local.File)) },
		}
	})
}

func intent(addr string, targets ...string) state.Entry {
	return state.Entry{Type: state.EntryIntent, Batch: 1, Time: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		Items: []state.Item{{Address: addr, Kind: "notification", Fingerprint: "fp", Targets: targets}}}
}

func mustPersist(t *testing.T, f *local.File, s *state.State) {
	t.Helper()
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
}

func TestFileModes(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	mustPersist(t, f, s)
	if err := f.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	for _, p := range []string{f.Path(), f.BackupPath(), f.JournalPath(), f.LockPath(), f.LockInfoPath()} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o; want 600", filepath.Base(p), mode)
		}
	}
	// No temp files are left behind.
	ents, _ := os.ReadDir(filepath.Dir(f.Path()))
	for _, e := range ents {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestFileBackupIsPreviousSnapshot(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	if _, err := os.Stat(f.BackupPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("backup after the first write: %v; want none", err)
	}
	first, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	delete(s.Messages, "campaign.c.badge.reset")
	mustPersist(t, f, s)
	backup, err := os.ReadFile(f.BackupPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(backup, first) {
		t.Error("backup is not the previous snapshot")
	}
	second, _ := os.ReadFile(f.Path())
	if bytes.Equal(second, first) {
		t.Error("snapshot did not change")
	}
}

func TestFileTornJournalLine(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	if err := f.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(f.JournalPath())
	for name, tail := range map[string]string{
		"no newline": `1234abcd {"type":"intent","items":[{"addr`,
		"zeros":      "\x00\x00\x00\x00\x00\x00",
		// A complete last line with a bad checksum is not torn: see
		// TestCorruptLastCompleteLineRefused in recovery_test.go.
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(f.JournalPath(), append(append([]byte{}, good...), tail...), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := f.Read()
			if err != nil {
				t.Fatalf("Read with a torn last line: %v", err)
			}
			if s.Messages["notification.a"].Targets["u1"].Outcome != state.Unknown {
				t.Fatal("entry before the torn line lost")
			}
			// A new File appends after cutting the torn line off.
			g := local.NewFile(f.Path())
			if err := g.Append(intent("notification.b", "u2")); err != nil {
				t.Fatal(err)
			}
			s, err = g.Read()
			if err != nil {
				t.Fatalf("Read after appending past a torn line: %v", err)
			}
			if s.Messages["notification.a"] == nil || s.Messages["notification.b"] == nil {
				t.Fatalf("messages after append = %v; want a and b", s.Addresses())
			}
		})
	}
}

func TestFileCorruptJournalMiddleLine(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	if err := f.Append(intent("notification.a", "u1"), intent("notification.b", "u2")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	i := bytes.Index(data, []byte("notification.a"))
	data[i] = 'N'
	os.WriteFile(f.JournalPath(), data, 0o600)
	_, err := f.Read()
	if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), f.JournalPath()) {
		t.Fatalf("Read with a corrupt middle line: err = %v; want a corrupt-journal error naming the file", err)
	}
	if err := local.NewFile(f.Path()).Append(intent("x", "y")); err == nil {
		t.Fatal("Append to a journal with a corrupt middle line succeeded")
	}
}

func TestFileStaleJournalIgnored(t *testing.T) {
	// A crash after the snapshot rename but before the journal removal
	// leaves a journal that is already part of the snapshot.
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	forget := state.Entry{Type: state.EntryForget, Items: []state.Item{{Address: "campaign.c.badge.reset"}}}
	if err := f.Append(forget); err != nil {
		t.Fatal(err)
	}
	journal, _ := os.ReadFile(f.JournalPath())
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	s.Messages["campaign.c.badge.reset"] = statetest.Sample().Messages["campaign.c.badge.reset"] // re-created later in the run
	mustPersist(t, f, s)
	os.WriteFile(f.JournalPath(), journal, 0o600)
	got, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages["campaign.c.badge.reset"] == nil {
		t.Fatal("a journal older than the snapshot was replayed")
	}
}

func TestFileJournalOfAnotherLineage(t *testing.T) {
	f := newFile(t)
	other := local.NewFile(filepath.Join(t.TempDir(), "other.state"))
	o := statetest.Sample()
	o.Lineage = "other"
	mustPersist(t, other, o)
	if err := other.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	mustPersist(t, f, statetest.Sample())
	data, _ := os.ReadFile(other.JournalPath())
	os.WriteFile(f.JournalPath(), data, 0o600)
	if _, err := f.Read(); err == nil || !strings.Contains(err.Error(), "lineage") {
		t.Fatalf("Read with a journal of another lineage: err = %v; want a lineage error", err)
	}
}

func TestFileCorruptSnapshotNamesBackup(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	mustPersist(t, f, s)
	data, _ := os.ReadFile(f.Path())
	os.WriteFile(f.Path(), data[:len(data)/2], 0o600) // truncated
	_, err := f.Read()
	if err == nil {
		t.Fatal("Read of a truncated snapshot succeeded")
	}
	want := fmt.Sprintf("state file %s is corrupt: ", f.Path())
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; the previous state is in "+f.BackupPath()) {
		t.Fatalf("error = %q; want it to name the file and the backup", err)
	}
	if err := f.Persist(s); err == nil {
		t.Fatal("Persist over a corrupt snapshot succeeded")
	}
}

func TestFileNewerVersionRefused(t *testing.T) {
	f := newFile(t)
	os.WriteFile(f.Path(), []byte(`{"version":99,"lineage":"x","serial":1,"messages":{}}`), 0o600)
	if _, err := f.Read(); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("Read of a newer format: err = %v; want an upgrade hint", err)
	}
}

func TestFileLockAcrossFiles(t *testing.T) {
	a := newFile(t)
	b := local.NewFile(a.Path())
	id, err := a.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(context.Background(), state.NewLockInfo("state rm"))
	var le *state.LockError
	if !errors.As(err, &le) || le.Info.ID != id {
		t.Fatalf("Lock through another File: err = %v; want a *LockError naming %s", err, id)
	}
	want := fmt.Sprintf("state is locked by %s (apply, pid %d, since ", le.Info.Who, os.Getpid())
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), ", lock id "+id+")") {
		t.Errorf("message = %q", err)
	}
	if _, err := b.ForceUnlock(id); !errors.As(err, &le) {
		t.Errorf("ForceUnlock of a live lock: err = %v; want a refusal with a *LockError", err)
	}
	if err := a.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.LockInfoPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock info left after Unlock: %v", err)
	}
	id2, err := b.Lock(context.Background(), state.NewLockInfo("state rm"))
	if err != nil {
		t.Fatal(err)
	}
	b.Unlock(id2)
}

const lockChildEnv = "PUSHFORM_STATE_TEST_LOCK_CHILD"

// TestLockChildProcess is the child of TestFileLockReleasedOnKill: it takes
// the lock, says so, and waits to be killed.
func TestLockChildProcess(t *testing.T) {
	path := os.Getenv(lockChildEnv)
	if path == "" {
		t.Skip("helper process for TestFileLockReleasedOnKill")
	}
	statetest.HoldLock(func() (string, error) {
		return local.NewFile(path).Lock(context.Background(), state.NewLockInfo("apply"))
	})
}

func TestFileLockReleasedOnKill(t *testing.T) {
	f := newFile(t)
	h := statetest.StartLockHolder(t, "TestLockChildProcess", lockChildEnv+"="+f.Path())
	childID := h.ID
	h.CheckRefused(t, f)
	h.Kill(t)

	// The child's lock info outlives it; force-unlock clears it.
	if _, err := f.ForceUnlock("not-" + childID); err == nil {
		t.Error("ForceUnlock with a wrong id succeeded")
	}
	info, err := f.ForceUnlock(childID)
	if err != nil {
		t.Fatalf("ForceUnlock of a dead holder's lock: %v", err)
	}
	if info.Pid != h.Cmd.Process.Pid {
		t.Errorf("ForceUnlock returned info %+v; want the child's", info)
	}
	if _, err := f.ForceUnlock(childID); err == nil {
		t.Error("second ForceUnlock succeeded")
	}

	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	if err := f.Unlock(id); err != nil {
		t.Fatal(err)
	}
}

// TestFileLockIgnoresStaleInfo: lock info left by a holder that ended
// without unlocking does not block Lock; Lock reports it (StaleLock),
// replaces it with its own and leaves no trace after Unlock.
func TestFileLockIgnoresStaleInfo(t *testing.T) {
	f := newFile(t)
	stale := state.LockInfo{ID: "old", Who: "x@y", Operation: "apply", Created: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Pid: 1}
	data, _ := json.Marshal(stale)
	if err := os.WriteFile(f.LockInfoPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.StaleLock(); ok {
		t.Fatal("StaleLock before any Lock")
	}
	id, err := f.Lock(context.Background(), state.NewLockInfo("plan"))
	if err != nil {
		t.Fatalf("Lock with a dead holder's info left: %v", err)
	}
	if id == stale.ID {
		t.Fatal("Lock reused the dead holder's id")
	}
	if got, ok := f.StaleLock(); !ok || got != stale {
		t.Errorf("StaleLock = %+v, %v; want the dead holder's info %+v", got, ok, stale)
	}
	// The info on disk is now this holder's: another File is refused
	// naming it, not the dead one.
	var mine state.LockInfo
	if b, err := os.ReadFile(f.LockInfoPath()); err != nil || json.Unmarshal(b, &mine) != nil {
		t.Fatalf("lock info after Lock: %v", err)
	}
	if mine.ID != id || mine.Operation != "plan" || mine.Pid != os.Getpid() {
		t.Errorf("lock info on disk %+v; want this holder's (id %s, plan, pid %d)", mine, id, os.Getpid())
	}
	var le *state.LockError
	if _, err := local.NewFile(f.Path()).Lock(context.Background(), state.NewLockInfo("apply")); !errors.As(err, &le) || le.Info.ID != id {
		t.Errorf("a second Lock: %v; want a *LockError naming %s", err, id)
	}
	if err := f.Unlock(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.LockInfoPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock info left after Unlock: %v", err)
	}
	// A clean release leaves nothing to report.
	g := local.NewFile(f.Path())
	id, err = g.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Unlock(id)
	if info, ok := g.StaleLock(); ok {
		t.Errorf("StaleLock after a clean Unlock = %+v", info)
	}
}

// TestFileLockStaleUnreadableInfo: a half-written info file (its holder
// killed while writing it) is not a holder: Lock proceeds and reports
// nothing it cannot name.
func TestFileLockStaleUnreadableInfo(t *testing.T) {
	f := newFile(t)
	if err := os.WriteFile(f.LockInfoPath(), []byte(`{"id":"ab`), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	if info, ok := f.StaleLock(); ok {
		t.Errorf("StaleLock = %+v for an unreadable info file", info)
	}
}

// TestFileLockRemovesDeadTemps: the temp files of a snapshot or lock info
// whose writer was killed are removed by the next holder of the lock, and
// nothing else is.
func TestFileLockRemovesDeadTemps(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	dir := filepath.Dir(f.Path())
	dead := []string{".pushform.state.tmp-123456", ".pushform.state.lock.info.tmp-99"}
	kept := []string{".other.state.tmp-1", "pushform.state.tmp-not-hidden", "notes.txt"}
	for _, n := range append(append([]string{}, dead...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	for _, n := range dead {
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after Lock: %v", n, err)
		}
	}
	for _, n := range append(kept, filepath.Base(f.Path())) {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed by Lock: %v", n, err)
		}
	}
}

// TestFileJournalNewerThanSnapshot: a journal that extends a later serial
// than the snapshot's (an older snapshot restored over a newer one) is
// refused with the way out, not replayed over the wrong snapshot.
func TestFileJournalNewerThanSnapshot(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	older, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	mustPersist(t, f, s)
	if err := f.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path(), older, 0o600); err != nil { // the restore
		t.Fatal(err)
	}
	_, err = local.NewFile(f.Path()).Read()
	want := fmt.Sprintf("state journal %s extends serial %d, but %s has serial %d (was an older snapshot restored?)", f.JournalPath(), s.Serial, f.Path(), s.Serial-1)
	if err == nil || err.Error() != want {
		t.Fatalf("Read = %v; want %q", err, want)
	}
}
