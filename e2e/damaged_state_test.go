package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
)

// TestDamagedJournalRepair: a journal whose last complete line fails its
// checksum makes every command refuse with the line and the next step;
// state repair refuses to drop a delivered outcome without --force, keeps
// the dropped line in a .rejected file with --force, and plan works after
// (issue 16 item 5).
func TestDamagedJournalRepair(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
notification "a" {
  user_ids = ["alice", "bob"]
  title    = "A"
  body     = "a"
}
`)
	w.apply()
	path := filepath.Join(w.dir, "pushform.state")
	f := local.NewFile(path)
	st, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	// What a later run's journal holds: an outcome for alice.
	tg := *st.Messages["notification.a"].Targets["alice"]
	tg.RequestID = "req-later"
	if err := f.Append(state.Entry{Type: state.EntryOutcome, Time: time.Now().UTC(), RequestID: "req-later", Status: 200,
		Items: []state.Item{{Address: "notification.a", Fingerprint: tg.Fingerprint, Targets: []string{"alice"}, Outcomes: []*state.Target{&tg}}}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	// A checksum digit: the line fails its checksum but still decodes.
	if data[last] == '0' {
		data[last] = '1'
	} else {
		data[last] = '0'
	}
	os.WriteFile(f.JournalPath(), data, 0o600)

	for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"state", "list"}, {"show"}} {
		r := w.mustRun(1, args...)
		for _, want := range []string{"line 2, its last, is corrupt (checksum mismatch)", "pushform state repair --state " + path} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
	}
	r := w.mustRun(1, "state", "repair")
	if !strings.Contains(r.stderr, "would drop 1 line, recording 1 target delivered") || !strings.Contains(r.stderr, "pushform state repair --force") {
		t.Fatalf("repair without --force:\n%s", r.stderr)
	}
	r = w.mustRun(0, "state", "repair", "--force")
	if !strings.Contains(r.stdout, "Moved line 2 to "+f.JournalPath()+".rejected and cut the journal after line 1.") {
		t.Fatalf("repair --force:\n%s", r.stdout)
	}
	if fi, err := os.Stat(f.JournalPath() + ".rejected"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rejected file: %v", err)
	}
	// The dropped outcome only repeated the snapshot's: nothing to send.
	if p := w.planJSON(); p.Summary["requests"] != 0 {
		t.Fatalf("plan after repair: %v", p.Summary)
	}
}

// TestEditedStateRefused: a state whose serial was edited by hand is
// refused, and one written by a newer pushform is named so, not corrupt
// (issue 16 item 5).
func TestEditedStateRefused(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
notification "a" {
  user_ids = ["alice"]
  title    = "A"
  body     = "a"
}
`)
	w.apply()
	path := filepath.Join(w.dir, "pushform.state")
	good, _ := os.ReadFile(path)
	serial := regexp.MustCompile(`"serial":\d+`)
	os.WriteFile(path, serial.ReplaceAll(good, []byte(`"serial":99`)), 0o600)
	if r := w.mustRun(1, "plan"); !strings.Contains(r.stderr, "checksum mismatch") {
		t.Errorf("edited serial:\n%s", r.stderr)
	}
	m := regexp.MustCompile(`^\{"version":(\d+),`).FindSubmatch(good)
	if m == nil {
		t.Fatalf("no version in the header: %.80q", good)
	}
	v, _ := strconv.Atoi(string(m[1]))
	newer := fmt.Sprintf(`{"version":%d,`, v+1)
	os.WriteFile(path, bytes.Replace(good, m[0], []byte(newer), 1), 0o600)
	if r := w.mustRun(1, "plan"); !strings.Contains(r.stderr, fmt.Sprintf("was written by a newer pushform (state format %d;", v+1)) || strings.Contains(r.stderr, "corrupt") {
		t.Errorf("newer format:\n%s", r.stderr)
	}
}
