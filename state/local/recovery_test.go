package local_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/message"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
)

// deliveredRun journals what an apply of one request of n targets writes:
// its intent and its delivered outcome. It returns the journal's lines.
func deliveredRun(t *testing.T, f *local.File, addr string, n int) int {
	t.Helper()
	ids := make([]string, n)
	outs := make([]*state.Target, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%04d", i)
		outs[i] = &state.Target{Outcome: state.Delivered, DeviceCount: 1}
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	if err := f.Append(state.Entry{Type: state.EntryIntent, Batch: 0, Time: now, Items: []state.Item{{Address: addr, Kind: "notification",
		TargetKind: "user_ids", Fingerprint: "fp", Content: &message.Content{Title: "T", Body: "B"}, Targets: ids}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(state.Entry{Type: state.EntryOutcome, Batch: 0, Time: now, RequestID: "req-1", Status: 200,
		Items: []state.Item{{Address: addr, Fingerprint: "fp", Targets: ids, Outcomes: outs}}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	return bytes.Count(data, []byte("\n"))
}

// damageLine flips a bit inside line n of the journal, keeping its newline.
func damageLine(t *testing.T, f *local.File, n int) {
	t.Helper()
	data, err := os.ReadFile(f.JournalPath())
	if err != nil {
		t.Fatal(err)
	}
	start := 0
	for range n - 1 {
		start += bytes.IndexByte(data[start:], '\n') + 1
	}
	// A checksum digit: the line fails its checksum but still decodes.
	if data[start] == '0' {
		data[start] = '1'
	} else {
		data[start] = '0'
	}
	if err := os.WriteFile(f.JournalPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func lockedFile(t *testing.T, path string) *local.File {
	t.Helper()
	f := local.NewFile(path)
	id, err := f.Lock(context.Background(), state.NewLockInfo("state repair"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Unlock(id) })
	return f
}

// TestCorruptLastCompleteLineRefused: the last line of a journal, written
// whole (newline included), fails its checksum. It recorded 500 delivered
// targets: dropping it silently turned them back into unknown. Now every
// read and append refuses with the line number and the next step (issue
// 16 item 5).
func TestCorruptLastCompleteLineRefused(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	n := deliveredRun(t, f, "notification.a", 500)
	damageLine(t, f, n)
	_, err := local.NewFile(f.Path()).Read()
	want := []string{f.JournalPath(), fmt.Sprintf("line %d, its last, is corrupt (checksum mismatch)", n),
		fmt.Sprintf("Lines 1 to %d are intact", n-1), "pushform state repair --state " + f.Path(), "--force"}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("Read: err = %v; want it to say %q", err, w)
		}
	}
	if err := local.NewFile(f.Path()).Append(intent("notification.b", "x")); err == nil || !strings.Contains(err.Error(), "state repair") {
		t.Fatalf("Append past a corrupt last line: %v", err)
	}
}

// TestCorruptMiddleLineNamesLine: a damaged line followed by others is
// reported with its number and the next step.
func TestCorruptMiddleLineNamesLine(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	deliveredRun(t, f, "notification.a", 3)
	n := deliveredRun(t, f, "notification.b", 3)
	damageLine(t, f, 2)
	_, err := local.NewFile(f.Path()).Read()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line 2 of %d is corrupt", n)) || !strings.Contains(err.Error(), "state repair") {
		t.Fatalf("Read: %v", err)
	}
}

// TestStaleJournalDamageIgnored: a journal older than the snapshot was
// folded into it; damage in it blocks nothing, and the next append starts
// a new one.
func TestStaleJournalDamageIgnored(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, state.New("test"))
	n := deliveredRun(t, f, "notification.a", 3)
	journal, _ := os.ReadFile(f.JournalPath())
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	mustPersist(t, f, s)
	os.WriteFile(f.JournalPath(), journal, 0o600)
	damageLine(t, f, n)
	g := local.NewFile(f.Path())
	if s, err := g.Read(); err != nil || s.Messages["notification.a"].Targets["u0000"].Outcome != state.Delivered {
		t.Fatalf("Read with a damaged stale journal: %v", err)
	}
	if err := g.Append(intent("notification.b", "x")); err != nil {
		t.Fatal(err)
	}
	if s, err := local.NewFile(f.Path()).Read(); err != nil || s.Messages["notification.b"] == nil {
		t.Fatalf("Read after appending: %v", err)
	}
}

func TestRepair(t *testing.T) {
	t.Run("delivered outcomes need force", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, state.New("test"))
		deliveredRun(t, f, "notification.a", 3)
		n := deliveredRun(t, f, "notification.b", 500)
		damageLine(t, f, n)
		before, _ := os.ReadFile(f.JournalPath())

		f = lockedFile(t, f.Path())
		rep, err := f.Repair(false)
		if !errors.Is(err, local.ErrRepairNeedsForce) {
			t.Fatalf("Repair without force: %v", err)
		}
		if rep.Bad == nil || rep.Bad.Line != n || rep.Kept != n-1 || rep.Dropped.Lines != 1 || rep.Dropped.Delivered != 500 || rep.Repaired {
			t.Fatalf("report %+v", rep)
		}
		if after, _ := os.ReadFile(f.JournalPath()); !bytes.Equal(after, before) {
			t.Fatal("a refused repair changed the journal")
		}
		if _, err := os.Stat(f.JournalPath() + ".rejected"); err == nil {
			t.Fatal("a refused repair wrote the rejected file")
		}

		rep, err = f.Repair(true)
		if err != nil || !rep.Repaired || rep.Rejected != f.JournalPath()+".rejected" {
			t.Fatalf("Repair --force: %+v, %v", rep, err)
		}
		rejected, err := os.ReadFile(rep.Rejected)
		lastStart := bytes.LastIndexByte(before[:len(before)-1], '\n') + 1
		if err != nil || !bytes.Equal(rejected, before[lastStart:]) {
			t.Fatalf("rejected file: %v; want the dropped line exactly", err)
		}
		if fi, _ := os.Stat(rep.Rejected); fi.Mode().Perm() != 0o600 {
			t.Errorf("rejected file mode %v", fi.Mode().Perm())
		}
		if after, _ := os.ReadFile(f.JournalPath()); !bytes.Equal(after, before[:lastStart]) {
			t.Fatal("the journal is not cut after the last intact line")
		}
		s, err := f.Read()
		if err != nil {
			t.Fatalf("Read after repair: %v", err)
		}
		if s.Messages["notification.a"].Targets["u0000"].Outcome != state.Delivered || s.Messages["notification.b"].Targets["u0000"].Outcome != state.Unknown {
			t.Fatal("the state after repair is not what the kept lines record")
		}
		// Appending works, and a second repair finds nothing to do.
		if err := f.Append(intent("notification.c", "x")); err != nil {
			t.Fatal(err)
		}
		if rep, err := f.Repair(false); err != nil || rep.Repaired || rep.Lines != n {
			t.Fatalf("second repair: %+v, %v", rep, err)
		}
	})

	t.Run("unreadable line needs force", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, state.New("test"))
		deliveredRun(t, f, "notification.a", 3)
		data, _ := os.ReadFile(f.JournalPath())
		data = append(data, "00000000 \x01\x02garbage\n"...)
		data = append(data, "12345678 more garbage\n"...)
		os.WriteFile(f.JournalPath(), data, 0o600)
		f = lockedFile(t, f.Path())
		rep, err := f.Repair(false)
		if !errors.Is(err, local.ErrRepairNeedsForce) || len(rep.Dropped.Unreadable) != 2 || rep.Dropped.Unreadable[0] != 4 || rep.Dropped.Delivered != 0 {
			t.Fatalf("Repair: %+v, %v", rep, err)
		}
	})

	t.Run("torn tail and harmless lines need no force", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, state.New("test"))
		if err := f.Append(state.Entry{Type: state.EntryForget, Items: []state.Item{{Address: "notification.gone"}}}); err != nil {
			t.Fatal(err)
		}
		if err := f.Append(state.Entry{Type: state.EntryForget, Items: []state.Item{{Address: "notification.gone2"}}}); err != nil {
			t.Fatal(err)
		}
		damageLine(t, f, 2)
		data, _ := os.ReadFile(f.JournalPath())
		os.WriteFile(f.JournalPath(), append(data, "0123abcd torn"...), 0o600)
		// An earlier repair's file is kept: this one takes the next name.
		os.WriteFile(f.JournalPath()+".rejected", []byte("earlier\n"), 0o600)
		f = lockedFile(t, f.Path())
		rep, err := f.Repair(false)
		if err != nil || !rep.Repaired || !rep.Torn || rep.Dropped.Lines != 3 || rep.Dropped.Risky() || rep.Rejected != f.JournalPath()+".rejected.2" {
			t.Fatalf("Repair: %+v, %v", rep, err)
		}
		if _, err := f.Read(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("intact, none, unlocked", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, state.New("test"))
		g := lockedFile(t, f.Path())
		if rep, err := g.Repair(false); err != nil || rep.Exists || rep.Repaired {
			t.Fatalf("no journal: %+v, %v", rep, err)
		}
		deliveredRun(t, g, "notification.a", 3)
		if rep, err := g.Repair(false); err != nil || !rep.Exists || rep.Repaired || rep.Lines != 3 || rep.Kept != 3 {
			t.Fatalf("intact: %+v, %v", rep, err)
		}
		if _, err := local.NewFile(f.Path()).Repair(true); err == nil {
			t.Fatal("Repair without the lock")
		}
	})
}

// snapshotParts splits a snapshot of format 2 or later into its header
// line, body and checksum.
func snapshotParts(t *testing.T, data []byte) (hdr, body []byte) {
	t.Helper()
	const trailer = "\n# end of pushform state\n"
	nl := bytes.IndexByte(data, '\n') + 1
	rest := bytes.TrimSuffix(data[nl:], []byte(trailer))
	return data[:nl], rest[:len(rest)-4]
}

// TestEditedSerialRefused: a serial edited by hand in the snapshot header
// is refused (issue 16 item 5: format 3 accepted it).
func TestEditedSerialRefused(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	data, _ := os.ReadFile(f.Path())
	old := fmt.Sprintf(`"serial":%d`, s.Serial)
	edited := bytes.Replace(data, []byte(old), []byte(fmt.Sprintf(`"serial":%d`, s.Serial+7)), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("no %s in the snapshot", old)
	}
	os.WriteFile(f.Path(), edited, 0o600)
	if _, err := local.NewFile(f.Path()).Read(); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("Read of an edited serial: %v", err)
	}
}

// TestFormat3Migrated: a format-3 snapshot (its checksum over the body
// only) is read, and the next write is the current format.
func TestFormat3Migrated(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	data, _ := os.ReadFile(f.Path())
	hdr, body := snapshotParts(t, data)
	hdr = bytes.Replace(hdr, curVersion, []byte(`{"version":3,`), 1)
	// Format 5's empty ledger (no id lists, no entries), format 6's empty
	// accepted shapes, format 7's empty overrides and format 8's empty
	// texts.
	body = bytes.TrimSuffix(body, []byte{0, 0, 0, 0, 0})
	sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	v3 := append(append(append(append([]byte{}, hdr...), body...), sum...), "\n# end of pushform state\n"...)
	os.WriteFile(f.Path(), v3, 0o600)
	g := local.NewFile(f.Path())
	s, err := g.Read()
	if err != nil || s.Version != 3 {
		t.Fatalf("Read of format 3: %v", err)
	}
	mustPersist(t, g, s)
	if data, _ := os.ReadFile(f.Path()); !bytes.HasPrefix(data, curVersion) {
		t.Fatalf("not migrated: %.30q", data)
	}
}

// TestBackupVerifiedBeforeOffered: "the previous state is in ….backup"
// only when the backup reads; otherwise the error says it is damaged too
// (issue 16 item 5).
func TestBackupVerifiedBeforeOffered(t *testing.T) {
	f := newFile(t)
	s := statetest.Sample()
	mustPersist(t, f, s)
	mustPersist(t, f, s)
	data, _ := os.ReadFile(f.Path())
	os.WriteFile(f.Path(), data[:len(data)/2], 0o600)
	os.WriteFile(f.BackupPath(), data[:len(data)/3], 0o600)
	_, err := local.NewFile(f.Path()).Read()
	if err == nil || strings.Contains(err.Error(), "the previous state is in") ||
		!strings.Contains(err.Error(), "its backup "+f.BackupPath()+" cannot be read either") || !strings.Contains(err.Error(), "Move both aside") {
		t.Fatalf("Read with a damaged backup: %v", err)
	}
	os.WriteFile(f.BackupPath(), data, 0o600)
	if _, err := local.NewFile(f.Path()).Read(); err == nil || !strings.Contains(err.Error(), "the previous state is in "+f.BackupPath()) {
		t.Fatalf("Read with a good backup: %v", err)
	}
}

// TestNewerFormatNamed: a snapshot or journal of a newer format is
// "written by a newer pushform", not "corrupt" (issue 16 item 5).
func TestNewerFormatNamed(t *testing.T) {
	t.Run("snapshot", func(t *testing.T) {
		f := newFile(t)
		mustPersist(t, f, statetest.Sample())
		data, _ := os.ReadFile(f.Path())
		os.WriteFile(f.Path(), bytes.Replace(data, curVersion, nextVersion, 1), 0o600)
		_, err := local.NewFile(f.Path()).Read()
		if err == nil || strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), fmt.Sprintf("state file %s was written by a newer pushform (state format %d;", f.Path(), state.FormatVersion+1)) {
			t.Fatalf("Read: %v", err)
		}
		if err := local.NewFile(f.Path()).Persist(statetest.Sample()); err == nil || strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("Persist: %v", err)
		}
	})
	t.Run("journal", func(t *testing.T) {
		f := newFile(t)
		s := statetest.Sample()
		mustPersist(t, f, s)
		payload := fmt.Sprintf(`{"journal":4,"lineage":%q,"serial":%d}`, s.Lineage, s.Serial)
		os.WriteFile(f.JournalPath(), fmt.Appendf(nil, "%08x %s\n", crc(payload), payload), 0o600)
		for name, err := range map[string]error{
			"Read":   func() error { _, err := local.NewFile(f.Path()).Read(); return err }(),
			"Append": local.NewFile(f.Path()).Append(intent("notification.x", "u")),
		} {
			if err == nil || strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), "was written by a newer pushform (journal format 4;") {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}

// fill writes a file into dir until the disk is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	fl, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	block := make([]byte, 512)
	for {
		if _, err := fl.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// TestFullDiskAppendLeavesJournalAsItWas: an Append that fails on a full
// disk (for real: a tmpfs) leaves the journal as it was before it, so
// what the journal holds is exactly what Append acknowledged; once space
// is free, the next Append succeeds (issue 16 item 4).
func TestFullDiskAppendLeavesJournalAsItWas(t *testing.T) {
	dir := testutil.SmallDisk(t, 64<<10)
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	mustPersist(t, f, state.New("test"))
	deliveredRun(t, f, "notification.a", 3)
	before, _ := os.ReadFile(f.JournalPath())
	filler := fill(t, dir)

	ids := make([]string, 3000)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%d-%x", i, i*7919)
	}
	big := state.Entry{Type: state.EntryIntent, Items: []state.Item{{Address: "notification.big", Kind: "notification", Fingerprint: "fp", Targets: ids}}}
	err := f.Append(big)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "cut back to the entries written before") {
		t.Fatalf("Append on a full disk: %v", err)
	}
	if after, _ := os.ReadFile(f.JournalPath()); !bytes.Equal(after, before) {
		t.Fatalf("the failed Append left %d bytes in the journal, it had %d", len(after), len(before))
	}
	os.Remove(filler)
	if err := f.Append(intent("notification.b", "u1")); err != nil {
		t.Fatal(err)
	}
	s, err := local.NewFile(f.Path()).Read()
	if err != nil || s.Messages["notification.big"] != nil || s.Messages["notification.b"] == nil || s.Messages["notification.a"] == nil {
		t.Fatalf("Read after the full disk: %v; want a and b, not big", err)
	}
}

// curVersion and nextVersion start the header of a snapshot of the
// current format and of the next one.
var (
	curVersion  = []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion))
	nextVersion = []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion+1))
)
