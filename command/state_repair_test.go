package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/pg/pgtest"
)

// journalWithDamagedLast writes a state in dir whose journal records one
// request to users u1..u3, delivered, and changes a checksum digit of its
// last line (the outcome), keeping the newline: the write finished, so it
// may have been acknowledged.
func journalWithDamagedLast(t *testing.T, dir string) *local.File {
	t.Helper()
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	if err := f.Persist(state.New("test")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ids := []string{"u1", "u2", "u3"}
	outs := []*state.Target{{Outcome: state.Delivered}, {Outcome: state.Delivered}, {Outcome: state.Delivered}}
	for _, e := range []state.Entry{
		{Type: state.EntryIntent, Time: now, Items: []state.Item{{Address: "notification.n", Kind: "notification", TargetKind: "user_ids",
			Fingerprint: "fp", Content: &message.Content{Title: "T", Body: "B"}, Targets: ids}}},
		{Type: state.EntryOutcome, Time: now, RequestID: "req-1", Status: 200, Items: []state.Item{{Address: "notification.n", Fingerprint: "fp", Targets: ids, Outcomes: outs}}},
	} {
		if err := f.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(f.JournalPath())
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if data[last] == '0' {
		data[last] = '1'
	} else {
		data[last] = '0'
	}
	if err := os.WriteFile(f.JournalPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStateRepairCommand walks the way out of a damaged journal: every
// command refuses with the line and the next step; state repair refuses
// to drop delivered outcomes without --force and says how many; with
// --force it keeps the dropped line beside the journal and says how the
// state reads.
func TestStateRepairCommand(t *testing.T) {
	dir := t.TempDir()
	f := journalWithDamagedLast(t, dir)
	clean := func(s string) string { return strings.ReplaceAll(s, dir, "DIR") }

	code, _, errOut := runIn(t, dir, "", nil, "state", "list")
	if want := "Error: state journal DIR/pushform.state.journal is damaged: line 3, its last, is corrupt (checksum mismatch). Lines 1 to 2 are intact; " +
		"the records from line 3 on cannot be trusted, so nothing was read or sent. Run 'pushform state repair --state DIR/pushform.state': " +
		"it keeps lines 1 to 2, moves the others to DIR/pushform.state.journal.rejected and says how many delivered outcomes they record " +
		"(it asks for --force before dropping any)\n"; code != ExitError || clean(errOut) != want {
		t.Fatalf("state list: exit %d\n%s\nwant\n%s", code, clean(errOut), want)
	}

	before, _ := os.ReadFile(f.JournalPath())
	code, out, errOut := runIn(t, dir, "", nil, "state", "repair")
	want := "Error: state repair: line 3 of 3 of the state journal DIR/pushform.state.journal is corrupt (checksum mismatch). " +
		"Cutting the journal after line 2 would drop 1 line, recording 3 targets delivered.\n" +
		"Without these records the next plan sends those targets again, and a device may show an untagged notification twice.\n" +
		"Nothing was changed. To cut them anyway (they are kept in DIR/pushform.state.journal.rejected): pushform state repair --force\n"
	if code != ExitError || out != "" || clean(errOut) != want {
		t.Fatalf("state repair: exit %d, stdout %q\n%s\nwant\n%s", code, out, clean(errOut), want)
	}
	if after, _ := os.ReadFile(f.JournalPath()); !bytes.Equal(after, before) {
		t.Fatal("a refused repair changed the journal")
	}

	code, out, errOut = runIn(t, dir, "", nil, "state", "repair", "--force")
	want = "Line 3 of 3 of the state journal DIR/pushform.state.journal is corrupt (checksum mismatch).\n" +
		"Moved line 3 to DIR/pushform.state.journal.rejected and cut the journal after line 2.\n" +
		"Dropped 1 line, recording 3 targets delivered.\n" +
		"The state now reads: serial 1, 1 address. Run 'pushform plan' to see what the next apply would send.\n"
	if code != ExitOK || clean(out) != want || errOut != "" {
		t.Fatalf("state repair --force: exit %d, stderr %q\n%s\nwant\n%s", code, errOut, clean(out), want)
	}
	code, out, _ = runIn(t, dir, "", nil, "state", "show", "notification.n")
	if code != ExitOK || !strings.Contains(out, "unknown") {
		t.Fatalf("state show after repair: exit %d\n%s", code, out)
	}
	code, out, _ = runIn(t, dir, "", nil, "state", "repair")
	if want := "The state journal DIR/pushform.state.journal is intact (2 lines): nothing to repair.\n"; code != ExitOK || clean(out) != want {
		t.Fatalf("second repair: exit %d, %q", code, out)
	}
}

// TestStateRepairLocked: repair takes the state lock.
func TestStateRepairLocked(t *testing.T) {
	dir := t.TempDir()
	f := journalWithDamagedLast(t, dir)
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	code, _, errOut := runIn(t, dir, "", nil, "state", "repair", "--force")
	if code != ExitError || !strings.Contains(errOut, "state is locked by") || !strings.Contains(errOut, "--lock-timeout waits for it") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestStateRepairPG: a PostgreSQL state has no journal file to repair.
func TestStateRepairPG(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	m, out, errb := stateTestMeta(t)
	o := pgtest.Options(t)
	usePG(t, m, o)
	code := runState(context.Background(), m, []string{"repair"})
	want := fmt.Sprintf("PostgreSQL state %q (schema %s) keeps each journal entry as a row of its own", o.StateName, o.Schema)
	if code != ExitOK || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "nothing to repair") || errb.Len() != 0 {
		t.Fatalf("exit %d, stdout %q (want %q...), stderr %q", code, out, want, errb)
	}
}

// TestStateRepairAppendedData: bytes appended to a state file are
// reported as what they are, naming the file and the repair; state repair
// moves them aside and cuts the file where its state ends, which then
// reads as it was saved.
func TestStateRepairAppendedData(t *testing.T) {
	dir := t.TempDir()
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	s := state.New("test")
	s.Messages["notification.n"] = &state.Message{Address: "notification.n", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp",
		Content: message.Content{Title: "T", Body: "B"}, Targets: map[string]*state.Target{"u1": {Outcome: state.Delivered, RequestID: "req-1"}}}
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(f.Path())
	if err := os.WriteFile(f.Path(), append(append([]byte{}, saved...), "garbage here\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := func(s string) string { return strings.ReplaceAll(s, dir, "DIR") }

	code, _, errOut := runIn(t, dir, "", nil, "state", "list")
	want := fmt.Sprintf("Error: state file DIR/pushform.state has data appended after its end: 13 bytes of trailing data after the end marker of its state, "+
		"which ends whole at byte %d (its checksum matches). Nothing was read or sent. Run 'pushform state repair --state DIR/pushform.state': "+
		"it moves the appended bytes to DIR/pushform.state.rejected and cuts the file where its state ends\n", len(saved))
	if code != ExitError || clean(errOut) != want || strings.Contains(errOut, "truncated") {
		t.Fatalf("state list: exit %d\n%s\nwant\n%s", code, clean(errOut), want)
	}

	code, out, errOut := runIn(t, dir, "", nil, "state", "repair")
	want = fmt.Sprintf("The state file DIR/pushform.state had 13 bytes appended after its end marker: moved them to DIR/pushform.state.rejected "+
		"and cut the file at byte %d, where its state ends whole (its checksum matches).\n"+
		"The state now reads: serial 1, 1 address. Run 'pushform plan' to see what the next apply would send.\n", len(saved))
	if code != ExitOK || clean(out) != want || errOut != "" {
		t.Fatalf("state repair: exit %d, stderr %q\n%s\nwant\n%s", code, errOut, clean(out), want)
	}
	if now, _ := os.ReadFile(f.Path()); !bytes.Equal(now, saved) {
		t.Error("the state file is not the one saved")
	}
	if rejected, _ := os.ReadFile(f.Path() + ".rejected"); string(rejected) != "garbage here\n" {
		t.Errorf("rejected: %q", rejected)
	}
	if fi, err := os.Stat(f.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode: %v %v", fi, err)
	}
	if code, out, _ := runIn(t, dir, "", nil, "state", "show", "notification.n"); code != ExitOK || !strings.Contains(out, "req-1") {
		t.Fatalf("state show after repair: exit %d\n%s", code, out)
	}
	if code, out, _ := runIn(t, dir, "", nil, "state", "repair"); code != ExitOK || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("second repair: exit %d, %q", code, out)
	}
}
