package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pushform/internal/testutil"
	"pushform/state"
	"pushform/state/local"
)

// TestJournalZeroTail: a lock holder writes its journal over zeros laid
// down ahead; what a kill leaves (zeros, a torn line among them) reads as
// the journal's end, the next holder cuts it off, and Unlock takes the
// zeros away. Zeros with a line after them are damage, never an end.
func TestJournalZeroTail(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	f = lockedFile(t, f.Path())
	lines := deliveredRun(t, f, "notification.a", 50)
	data, _ := os.ReadFile(f.JournalPath())
	end := bytes.LastIndexByte(data, '\n') + 1
	if len(data) <= end || len(bytes.TrimLeft(data[end:], "\x00")) > 0 {
		t.Fatalf("the journal is %d bytes, its lines %d: want zeros laid down after them", len(data), end)
	}
	reads := func(want int) {
		t.Helper()
		s, err := local.NewFile(f.Path()).Read()
		if err != nil {
			t.Fatal(err)
		}
		if got := targets(s, "notification.a") + targets(s, "notification.b"); got != want {
			t.Fatalf("read %d targets, want %d", got, want)
		}
	}
	reads(50) // read while the holder still writes (history, plan)

	// A kill: the holder never unlocks. A torn line lies among the zeros.
	torn := append([]byte(nil), data[:end]...)
	torn = append(torn, data[bytes.Index(data, []byte("\n"))+1:][:40]...)
	torn = append(torn, make([]byte, 100_000)...)
	os.WriteFile(f.JournalPath(), torn, 0o600)
	os.Remove(f.LockPath())
	g := lockedFile(t, f.Path())
	if err := g.Append(intent("notification.b", "x", "y")); err != nil {
		t.Fatal(err)
	}
	f = g
	reads(52)
	data, _ = os.ReadFile(f.JournalPath())
	if got := bytes.Count(data, []byte("\n")); got != lines+1 {
		t.Fatalf("%d lines after the next holder's append, want %d", got, lines+1)
	}

	// Zeros, then a line: a gap, reported as damage.
	end = bytes.LastIndexByte(data, '\n') + 1
	gap := append(append(append([]byte(nil), data[:end]...), make([]byte, 5000)...), data[bytes.Index(data, []byte("\n"))+1:end]...)
	os.WriteFile(f.JournalPath(), gap, 0o600)
	if _, err := local.NewFile(f.Path()).Read(); err == nil || !strings.Contains(err.Error(), "zero bytes where a line should be") {
		t.Fatalf("Read over a gap: %v", err)
	}
}

// TestJournalUnlockTakesZerosAway: after Unlock the journal ends at its
// last line, so whoever opens it next appends there.
func TestJournalUnlockTakesZerosAway(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	id, err := f.Lock(t.Context(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	deliveredRun(t, f, "notification.a", 10)
	if err := f.Unlock(id); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("after Unlock the journal ends in %q", data[max(0, len(data)-10):])
	}
	if err := f.Append(intent("notification.b", "x")); err != nil { // unlocked: appends
		t.Fatal(err)
	}
	s, err := local.NewFile(f.Path()).Read()
	if err != nil || targets(s, "notification.a") != 10 || targets(s, "notification.b") != 1 {
		t.Fatalf("Read: %v", err)
	}
}

// targets is how many targets s records for the message at addr.
func targets(s *state.State, addr string) int {
	if m := s.Messages[addr]; m != nil {
		return len(m.Targets)
	}
	return 0
}

// TestFullDiskZerosGoOnUnlock: where the zeros laid down ahead do not all
// fit (a full disk, for real: a tmpfs), the lines are still written and
// Unlock takes away every zero that was laid, so the journal ends at its
// last line.
func TestFullDiskZerosGoOnUnlock(t *testing.T) {
	dir := testutil.SmallDisk(t, 64<<10)
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	mustPersist(t, f, state.New("test"))
	filler := fill(t, dir)
	fi, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filler, fi.Size()-20<<10); err != nil { // room for the lines, not for the zeros
		t.Fatal(err)
	}
	id, err := f.Lock(t.Context(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	deliveredRun(t, f, "notification.a", 3)
	if err := f.Unlock(id); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("after Unlock the journal (%d bytes) ends in %q", len(data), data[max(0, len(data)-10):])
	}
	s, err := local.NewFile(f.Path()).Read()
	if err != nil || targets(s, "notification.a") != 3 {
		t.Fatalf("Read: %v", err)
	}
}

// TestRepairKeepsNoZeros: repairing a journal damaged before its zeros
// keeps the dropped lines beside it, not the zeros laid down ahead.
func TestRepairKeepsNoZeros(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	f = lockedFile(t, f.Path())
	n := deliveredRun(t, f, "notification.a", 5)
	data, _ := os.ReadFile(f.JournalPath())
	if bytes.IndexByte(data, 0) < 0 {
		t.Fatal("no zeros laid down ahead")
	}
	damageLine(t, f, n)
	rep, err := f.Repair(true)
	if err != nil || !rep.Repaired {
		t.Fatalf("Repair: %+v, %v", rep, err)
	}
	rejected, _ := os.ReadFile(rep.Rejected)
	if len(rejected) == 0 || rejected[len(rejected)-1] != '\n' {
		t.Fatalf("the rejected file (%d bytes) ends in %q", len(rejected), rejected[max(0, len(rejected)-10):])
	}
}
