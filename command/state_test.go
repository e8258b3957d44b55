package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"pushform/backend"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
)

// stateTestMeta returns a Meta whose working directory is a temp dir
// holding the sample state at pushform.state.
func stateTestMeta(t *testing.T) (*Meta, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	if err := local.NewFile(filepath.Join(dir, "pushform.state")).Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	return &Meta{Env: Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Dir: dir, Getenv: func(string) string { return "" }}}, &out, &errb
}

var stateSpaces = regexp.MustCompile(` +`)

func TestStatePath(t *testing.T) {
	m := &Meta{Env: Env{Dir: "/work"}}
	for _, c := range []struct {
		chdir, flag, want string
	}{
		{"", "", "/work/pushform.state"},
		{"cfg", "", "/work/cfg/pushform.state"},
		{"cfg", "other.state", "/work/cfg/other.state"}, // relative to --chdir, as Terraform
		{"cfg", "../other.state", "/work/other.state"},
		{"cfg", "/abs/s", "/abs/s"},
	} {
		m.Globals.Chdir = c.chdir
		be, err := backend.OpenState(context.Background(), m.stateOptions(stateFlags{file: c.flag}))
		if err != nil {
			t.Fatal(err)
		}
		if got := be.String(); got != c.want {
			t.Errorf("chdir %q, --state %q: %s; want %s", c.chdir, c.flag, got, c.want)
		}
	}
}

func TestStateList(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	if code := runState(context.Background(), m, []string{"list"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	want := "campaign.c.badge.reset                      1 delivered\n" +
		"campaign.spring_sale.notification.announce  1 delivered, 1 skipped, 1 failed, 1 unknown\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}

	out.Reset()
	if code := runState(context.Background(), m, []string{"list", "--state", "missing.state"}); code != 0 {
		t.Fatalf("list of a missing state: exit %d: %s", code, errb)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "No state at "+filepath.Join(m.Dir, "missing.state")) {
		t.Errorf("missing state: stdout %q, stderr %q", out, errb)
	}
}

func TestStateShow(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	addr := "campaign.spring_sale.notification.announce"
	if code := runState(context.Background(), m, []string{"show", addr}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{
		"# " + addr, "kind = notification", `title = "Spring sale"`, "fingerprint = fp-1",
		"Targets: 4 (1 delivered, 1 skipped, 1 failed, 1 unknown)",
		"u1 delivered 2 devices req-1 2026-04-01T09:30:00Z",
		"u2 skipped no_active_device, unreachable since 2026-03-01T00:00:00Z req-1",
		`u3 failed "ünïcode \"quoted\"" req-1`, "u4 unknown sent, answer not recorded - 2026-04-01T09:30:00Z",
	} {
		if !strings.Contains(stateSpaces.ReplaceAllString(out.String(), " "), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out.Reset()
	if code := runState(context.Background(), m, []string{"show", "--json", addr}); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errb)
	}
	var msg state.Message
	if err := json.Unmarshal(out.Bytes(), &msg); err != nil || msg.Targets["u1"].RequestID != "req-1" {
		t.Errorf("--json output does not decode to the message (%v):\n%s", err, out)
	}

	errb.Reset()
	if code := runState(context.Background(), m, []string{"show", "notification.nope"}); code != 1 || !strings.Contains(errb.String(), "no address notification.nope") {
		t.Errorf("unknown address: exit %d, stderr %q", code, errb)
	}
}

func TestStateShowManyTargets(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	path := filepath.Join(m.Dir, "pushform.state")
	f := local.NewFile(path)
	s, _ := f.Read()
	msg := s.Messages["campaign.c.badge.reset"]
	for i := range 1200 {
		msg.Targets[fmt.Sprintf("dev-%04d", i)] = &state.Target{Outcome: state.Delivered, DeviceCount: 1}
	}
	if err := f.Persist(s); err != nil {
		t.Fatal(err)
	}
	if code := runState(context.Background(), m, []string{"show", "campaign.c.badge.reset"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	got := out.String()
	if !strings.Contains(got, "Targets: 1,201 (1,201 delivered)") || !strings.Contains(got, "... and 1,151 more") ||
		strings.Count(got, " delivered ") != stateShowLimit {
		t.Errorf("output:\n%s", got)
	}
	out.Reset()
	runState(context.Background(), m, []string{"show", "--all", "campaign.c.badge.reset"})
	if n := strings.Count(out.String(), " delivered "); n != 1201 {
		t.Errorf("--all printed %d target lines; want 1201", n)
	}
}

func TestStateRm(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	path := filepath.Join(m.Dir, "pushform.state")
	if code := runState(context.Background(), m, []string{"rm", "campaign.c.badge.reset", "notification.nope"}); code != 1 ||
		!strings.Contains(errb.String(), "no address notification.nope") {
		t.Fatalf("rm with an unknown address: exit %d, stderr %q", code, errb)
	}
	if s, _ := local.NewFile(path).Read(); s.Messages["campaign.c.badge.reset"] == nil || s.Serial != 1 {
		t.Fatal("a refused rm changed the state")
	}

	if code := runState(context.Background(), m, []string{"rm", "campaign.c.badge.reset"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "Removed campaign.c.badge.reset\n") {
		t.Errorf("output: %q", out)
	}
	s, err := local.NewFile(path).Read()
	if err != nil {
		t.Fatal(err)
	}
	if s.Messages["campaign.c.badge.reset"] != nil || s.Messages["campaign.spring_sale.notification.announce"] == nil || s.Serial != 2 {
		t.Errorf("after rm: addresses %v, serial %d", s.Addresses(), s.Serial)
	}
	if _, err := os.Stat(path + ".lock.info"); !os.IsNotExist(err) {
		t.Errorf("lock info left after rm: %v", err)
	}
}

func TestStateRmLocked(t *testing.T) {
	m, _, errb := stateTestMeta(t)
	f := local.NewFile(filepath.Join(m.Dir, "pushform.state"))
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	if code := runState(context.Background(), m, []string{"rm", "--lock-timeout", "10ms", "campaign.c.badge.reset"}); code != 1 ||
		!strings.Contains(errb.String(), "state is locked by ") || !strings.Contains(errb.String(), "lock id "+id) {
		t.Fatalf("rm while locked: exit %d, stderr %q", code, errb)
	}
}

func TestForceUnlock(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	f := local.NewFile(filepath.Join(m.Dir, "pushform.state"))
	// Lock info left by a process that is gone (the OS lock went with it).
	info := state.LockInfo{ID: "abc123", Who: "ci@runner", Operation: "apply", Pid: 99999, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	data, _ := json.Marshal(info)
	os.WriteFile(f.LockInfoPath(), data, 0o600)

	if code := cmdForceUnlock(context.Background(), m, []string{"abc123"}); code != 1 || !strings.Contains(errb.String(), "--force") {
		t.Fatalf("without a terminal or --force: exit %d, stderr %q", code, errb)
	}
	m.StdinTerminal = true
	m.Stdin = strings.NewReader("no\n")
	if code := cmdForceUnlock(context.Background(), m, []string{"abc123"}); code != 1 {
		t.Fatalf("answer no: exit %d", code)
	}
	errb.Reset()
	if code := cmdForceUnlock(context.Background(), m, []string{"--force", "wrong"}); code != 1 || !strings.Contains(errb.String(), `"abc123"`) {
		t.Fatalf("wrong id: exit %d, stderr %q", code, errb)
	}
	m.Stdin = strings.NewReader("yes\n")
	out.Reset()
	if code := cmdForceUnlock(context.Background(), m, []string{"abc123"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "Removed lock abc123 (held by ci@runner for apply, pid 99999, since 2026-01-02T03:04:05Z)") ||
		!strings.Contains(out.String(), "cannot outlive its process") {
		t.Errorf("output: %q", out)
	}
	if _, err := os.Stat(f.LockInfoPath()); !os.IsNotExist(err) {
		t.Errorf("lock info still there: %v", err)
	}
}
