package local_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// The failure paths of the file backend: each must fail with an error
// naming what went wrong, and leave what was on disk as it was. A path
// made a directory or a symlink loop stands in for an unreadable file
// (the tests may run as root, for whom permissions are no obstacle).

func loop(t *testing.T, path string) {
	t.Helper()
	if err := os.Symlink(filepath.Base(path), path); err != nil {
		t.Fatal(err)
	}
}

func dirAt(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err error, has ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded", what)
	}
	for _, h := range has {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("%s: %v; want it to mention %q", what, err, h)
		}
	}
}

func TestFileUnreadable(t *testing.T) {
	t.Run("snapshot", func(t *testing.T) {
		f := newFile(t)
		loop(t, f.Path())
		_, err := f.Read()
		wantErr(t, "Read", err, "reading state")
		wantErr(t, "Persist", f.Persist(state.New("test")), "reading state")
	})
	t.Run("journal", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, statetest.Sample())
		loop(t, f.JournalPath())
		_, err := f.Read()
		wantErr(t, "Read", err, "reading state journal")
		wantErr(t, "Append", local.NewFile(f.Path()).Append(intent("notification.a", "u1")), "opening state journal")
	})
	t.Run("journal is a directory", func(t *testing.T) {
		f := newFile(t)
		s := statetest.Sample()
		mustPersist(t, f, s) // the journal is known clean from here
		dirAt(t, f.JournalPath())
		wantErr(t, "Append", f.Append(intent("notification.a", "u1")), "opening state journal")
		wantErr(t, "Persist", f.Persist(s), "clearing state journal")
	})
	t.Run("snapshot header", func(t *testing.T) {
		f := newFile(t)
		os.WriteFile(f.Path(), []byte("[1]}"), 0o600) // ends like a state, is not one
		wantErr(t, "Persist", f.Persist(state.New("test")), "is corrupt")
		wantErr(t, "Append", f.Append(intent("notification.a", "u1")), "is corrupt")
	})
	t.Run("no directory", func(t *testing.T) {
		f := local.NewFile(filepath.Join(t.TempDir(), "missing", "pushform.state"))
		wantErr(t, "Persist", f.Persist(state.New("test")), "writing state")
	})
}

// A journal whose header became unreadable after this File last checked
// it is refused, not continued in a guessed format.
func TestFileAppendUnusableHeader(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	if err := os.WriteFile(f.JournalPath(), []byte("not a header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Append", f.Append(intent("notification.a", "u1")), "has no usable header")
	if err := f.Append(); err != nil {
		t.Errorf("Append of nothing: %v", err)
	}
}

// A journal beside a snapshot that is now corrupt is not extended.
func TestFileJournalBesideCorruptSnapshot(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	if err := f.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.Path())
	os.WriteFile(f.Path(), data[:len(data)-3], 0o600)
	wantErr(t, "Append", local.NewFile(f.Path()).Append(intent("notification.b", "u2")), "is corrupt")
}

// Journal-only states: a crash in the very first apply before the state
// was persisted leaves a journal and no snapshot.
func TestFileJournalOnly(t *testing.T) {
	f := newFile(t)
	if err := f.Append(intent("notification.a", "u1")); err != nil {
		t.Fatal(err)
	}
	s, err := local.NewFile(f.Path()).Read()
	if err != nil || s == nil || s.Messages["notification.a"] == nil || s.Lineage == "" {
		t.Fatalf("Read of a journal-only state = %+v, %v", s, err)
	}
	// Read twice by one File: the same lineage.
	a, _ := f.Read()
	b, _ := f.Read()
	if a.Lineage != b.Lineage {
		t.Errorf("lineages %s and %s", a.Lineage, b.Lineage)
	}

	// A header only, or a header torn: nothing recorded.
	for name, journal := range map[string][]byte{
		"header only": mustLine(t, statefile.JournalHeader{Journal: statefile.JournalFormat, Lineage: "l"}),
		"torn header": mustLine(t, statefile.JournalHeader{Journal: statefile.JournalFormat, Lineage: "l"})[:10],
	} {
		g := newFile(t)
		os.WriteFile(g.JournalPath(), journal, 0o600)
		if s, err := g.Read(); err != nil || s != nil {
			t.Errorf("%s: Read = %+v, %v; want no state", name, s, err)
		}
	}

	// A journal header without a lineage still gives the state one.
	g := newFile(t)
	j := mustLine(t, statefile.JournalHeader{Journal: statefile.JournalFormat})
	j, _ = statefile.AppendEntryLine(j, intent("notification.a", "u1"), statefile.JournalFormat)
	os.WriteFile(g.JournalPath(), j, 0o600)
	if s, err := g.Read(); err != nil || s.Lineage == "" {
		t.Fatalf("Read = %+v, %v; want a state with a lineage", s, err)
	}

	// An entry the state cannot take names the journal and the entry.
	h := newFile(t)
	mustPersist(t, h, state.New("test"))
	bad := state.Entry{Type: state.EntryOutcome, Items: []state.Item{{Address: "notification.none", Targets: []string{"u1"}, Outcomes: []*state.Target{{}}}}}
	if err := h.Append(bad); err != nil {
		t.Fatal(err)
	}
	_, err = h.Read()
	wantErr(t, "Read", err, "replaying state journal", "entry 1")
}

func mustLine(t *testing.T, v any) []byte {
	t.Helper()
	b, err := statefile.AppendJournalLine(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFileLockFailures(t *testing.T) {
	t.Run("lock file unusable", func(t *testing.T) {
		f := newFile(t)
		dirAt(t, f.LockPath())
		_, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
		wantErr(t, "Lock", err, "opening lock file")
		_, err = f.ForceUnlock("x")
		wantErr(t, "ForceUnlock", err)
	})
	t.Run("lock info unwritable", func(t *testing.T) {
		f := newFile(t)
		dirAt(t, f.LockInfoPath())
		_, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
		wantErr(t, "Lock", err, "writing lock info")
		// The OS lock was given back.
		os.RemoveAll(f.LockInfoPath())
		if _, err := local.NewFile(f.Path()).Lock(context.Background(), state.NewLockInfo("apply")); err != nil {
			t.Fatalf("Lock after a failed Lock: %v", err)
		}
	})
	t.Run("lock info unreadable", func(t *testing.T) {
		f := newFile(t)
		dirAt(t, f.LockInfoPath())
		_, err := f.ForceUnlock("x")
		wantErr(t, "ForceUnlock", err, "force-unlock")
		os.RemoveAll(f.LockInfoPath())
		os.WriteFile(f.LockInfoPath(), []byte("{"), 0o600)
		_, err = f.ForceUnlock("x")
		wantErr(t, "ForceUnlock", err, "unreadable")
	})
	t.Run("unlock", func(t *testing.T) {
		f := newFile(t)
		wantErr(t, "Unlock without a lock", f.Unlock("x"), "not locked")
		id, err := f.Lock(context.Background(), state.LockInfo{Operation: "apply"})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, "Unlock with another id", f.Unlock("x"), "does not match")
		// The info is gone before the lock is: a failure to remove it is
		// reported, and the lock still released.
		os.Remove(f.LockInfoPath())
		dirAt(t, f.LockInfoPath())
		wantErr(t, "Unlock", f.Unlock(id), "unlocking state")
		os.RemoveAll(f.LockInfoPath())
		if _, err := local.NewFile(f.Path()).Lock(context.Background(), state.NewLockInfo("apply")); err != nil {
			t.Fatalf("Lock after that Unlock: %v", err)
		}
	})
	t.Run("force-unlock of a live lock without info", func(t *testing.T) {
		a := newFile(t)
		if _, err := a.Lock(context.Background(), state.NewLockInfo("apply")); err != nil {
			t.Fatal(err)
		}
		os.Remove(a.LockInfoPath())
		_, err := local.NewFile(a.Path()).ForceUnlock("x")
		var le *state.LockError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "released when that process exits") {
			t.Fatalf("ForceUnlock = %v; want a *LockError saying it ends with its process", err)
		}
	})
	t.Run("wait, then give up", func(t *testing.T) {
		a := newFile(t)
		id, err := a.Lock(context.Background(), state.NewLockInfo("apply"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Unlock(id)
		// A deadline far away, ended by cancelling: Lock stops waiting.
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err = state.LockWithContext(ctx, local.NewFile(a.Path()), state.NewLockInfo("plan"))
		var le *state.LockError
		if !errors.As(err, &le) || le.Info.ID != id {
			t.Fatalf("Lock = %v; want a *LockError naming %s", err, id)
		}
	})
}

const pauseChildEnv = "PUSHFORM_STATE_TEST_PAUSE_CHILD"

// TestPauseChildProcess is the child of TestPauseHook: it persists a
// state with local.PauseEnv set by its parent.
func TestPauseChildProcess(t *testing.T) {
	path := os.Getenv(pauseChildEnv)
	if path == "" {
		t.Skip("helper process for TestPauseHook")
	}
	f := local.NewFileWith(path, local.Options{PauseAt: os.Getenv(local.PauseEnv)})
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	f.Persist(s)
	t.Fatal("Persist returned: the hook did not pause")
}

// TestPauseHook: with local.PauseEnv naming a phase, a File announces it
// on stderr and stops there: persist-write with the new snapshot in its
// temp file and the old one in place, persist-renamed with the new one in
// place and the journal not yet removed.
func TestPauseHook(t *testing.T) {
	for _, phase := range []string{"read", "persist-write", "persist-renamed"} {
		t.Run(phase, func(t *testing.T) {
			f := newFile(t)
			mustPersist(t, f, statetest.Sample())
			if err := f.Append(intent("notification.a", "u1")); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(f.Path())
			cmd := exec.Command(os.Args[0], "-test.run=^TestPauseChildProcess$")
			cmd.Env = append(os.Environ(), pauseChildEnv+"="+f.Path(), local.PauseEnv+"="+phase)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(stderr).ReadString('\n')
			if want := "pushform-test: paused at " + phase + "\n"; err != nil || line != want {
				t.Fatalf("child said %q, %v; want %q", line, err, want)
			}
			after, _ := os.ReadFile(f.Path())
			tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(f.Path()), ".pushform.state.tmp-*"))
			_, jerr := os.Stat(f.JournalPath())
			switch phase {
			case "read":
				if !bytes.Equal(after, before) || len(tmps) != 0 || jerr != nil {
					t.Errorf("paused at read: snapshot changed %v, temps %v, journal %v", !bytes.Equal(after, before), tmps, jerr)
				}
			case "persist-write":
				if !bytes.Equal(after, before) || len(tmps) != 1 || jerr != nil {
					t.Errorf("paused mid-write: snapshot changed %v, temps %v, journal %v", !bytes.Equal(after, before), tmps, jerr)
				}
			case "persist-renamed":
				if bytes.Equal(after, before) || len(tmps) != 0 || jerr != nil {
					t.Errorf("paused after the rename: snapshot changed %v, temps %v, journal %v", !bytes.Equal(after, before), tmps, jerr)
				}
			}
		})
	}
}
