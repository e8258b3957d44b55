package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowSeed has 3,000 users, so a campaign takes 6 requests.
const slowSeed = seed + `
user_range "s%04d" {
  count       = 3000
  device      = "sd%04d"
  environment = "test"
}
`

func slowCampaign(name, tag string) string {
	t := ""
	if tag != "" {
		t = "\n  tag      = \"" + tag + "\""
	}
	return `
notification "` + name + `" {
  user_ids = flatten([for a in range(6) : [for b in range(500) : format("s%04d", a * 500 + b)]])
  title    = "` + name + `"
  body     = "six requests"` + t + `
}
`
}

func TestCorruptStateNamesTheBackup(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
notification "a" {
  user_ids = ["alice"]
  title    = "A"
  body     = "a"
}
`)
	path := filepath.Join(w.dir, "pushform.state")
	// No backup yet: the first apply created the state, the second persist
	// made the backup.
	w.apply()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, content string }{
		{"truncated", string(good[:len(good)/2])},
		{"garbage", "\x00\x01 not a state \xff"},
		{"empty", ""},
		{"wrong json", `{"version": "one", "messages": []}`},
	} {
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		before := sb.stats().SendRequests
		for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"state", "list"}} {
			r := w.mustRun(1, args...)
			if !strings.Contains(r.stderr, "is corrupt") || !strings.Contains(r.stderr, path+".backup") {
				t.Errorf("%s state, %v: the error must say it is corrupt and name the backup:\n%s", tc.name, args, r.stderr)
			}
		}
		if sb.stats().SendRequests != before {
			t.Fatalf("%s state: something was sent", tc.name)
		}
		// The backup is a good state to go back to.
		if b, err := os.ReadFile(path + ".backup"); err != nil || len(b) == 0 {
			t.Fatalf("backup: %v", err)
		}
	}
	// Restoring the backup is the way back.
	b, _ := os.ReadFile(path + ".backup")
	os.WriteFile(path, b, 0o600)
	w.mustRun(0, "plan")
}

// TestSecondApplyIsRefusedOrWaits: a second run is refused naming the
// holder, or waits with --lock-timeout. The gate holds the first apply's
// requests, so it holds the lock for as long as the test needs.
func TestSecondApplyIsRefusedOrWaits(t *testing.T) { secondApplyIsRefusedOrWaits(t, nil) }

// secondApplyIsRefusedOrWaits is TestSecondApplyIsRefusedOrWaits with the
// state in pg when it is set (TestSecondApplyIsRefusedOrWaitsPG).
func secondApplyIsRefusedOrWaits(t *testing.T, pg *pgState) {
	sb := startSandbox(t, slowSeed, "--quiet")
	g := startGate(t, sb)
	w := newWorkspace(t, g.base(), slowCampaign("slow", "slow"))
	w.usePG(pg)
	g.holdSends()
	first := w.startProc("apply", "--auto-approve", "--parallelism", "1", "--json")
	g.waitArrivals(1, time.Minute)
	r := w.mustRun(1, "apply", "--auto-approve")
	holder := regexp.MustCompile(`state is locked by \S+@\S+ \(apply, pid (\d+), since \S+, lock id ([0-9a-f]+)\); --lock-timeout waits for it`)
	m := holder.FindStringSubmatch(r.stderr)
	if m == nil || m[1] != itoa(first.cmd.Process.Pid) {
		t.Fatalf("second apply must be refused naming the holder (pid %d):\n%s", first.cmd.Process.Pid, r.stderr)
	}
	// force-unlock refuses to break a live holder's lock.
	r = w.mustRun(1, "force-unlock", "--force", m[2])
	if !strings.Contains(r.stderr, "held by a running process") {
		t.Fatalf("force-unlock of a live lock:\n%s", r.stderr)
	}
	// A lock timeout that runs out says so and names the holder.
	r = w.mustRun(1, "plan", "--lock-timeout", "300ms")
	if !strings.Contains(r.stderr, "state is locked by") || !strings.Contains(r.stderr, "pid "+itoa(first.cmd.Process.Pid)) {
		t.Fatalf("plan --lock-timeout 300ms:\n%s", r.stderr)
	}
	// --lock-timeout waits for the first to finish, then finds nothing to
	// do. It starts while the first holds the lock (its requests are still
	// at the gate); Lock's retry loop itself is tested in state/local.
	waiter := w.startProc("apply", "--auto-approve", "--lock-timeout", "2m")
	if n := g.answered(); n != 0 || first.exited() {
		t.Fatalf("the first apply moved on while the gate held it (%d answers)", n)
	}
	g.releaseSends()
	if code := first.wait(time.Minute); code != 0 {
		t.Fatalf("first apply: exit %d\n%s", code, first.stderr)
	}
	if code := waiter.wait(3 * time.Minute); code != 0 || !strings.Contains(waiter.stdout.String(), "Nothing to send") {
		t.Fatalf("the waiting apply: exit %d\n%s\n%s", code, waiter.stdout, waiter.stderr)
	}
	if d := sb.device("sd0001"); len(d.Inbox) != 1 {
		t.Fatalf("sd0001: %+v", d)
	}
}

func TestDeadHolderReportedAndForceUnlocked(t *testing.T) {
	sb := startSandbox(t, slowSeed, "--latency", "2s", "--quiet")
	w := newWorkspace(t, sb, slowCampaign("slow", "slow"))
	kill := func() (pid int, id string) {
		t.Helper()
		p := w.startProc("apply", "--auto-approve", "--json")
		if _, ok := p.waitLine(`"type":"request"`, 30*time.Second); !ok {
			t.Fatalf("apply sent nothing:\n%s", p.stderr)
		}
		if !p.kill(syscall.SIGKILL) {
			t.Fatal("not killed")
		}
		info, err := os.ReadFile(filepath.Join(w.dir, "pushform.state.lock.info"))
		if err != nil {
			t.Fatalf("a killed apply leaves its lock info: %v", err)
		}
		id = regexp.MustCompile(`"id":"([0-9a-f]+)"`).FindStringSubmatch(string(info))[1]
		return p.cmd.Process.Pid, id
	}

	// The next run is not blocked (the OS lock died with the process) but
	// says who died holding it.
	pid, id := kill()
	r := w.mustRun(0, "state", "list")
	if strings.Contains(r.stderr, "Warning") {
		t.Errorf("state list takes no lock and warns of nothing:\n%s", r.stderr)
	}
	r = w.mustRun(0, "plan")
	if !strings.Contains(r.stderr, "ended without releasing it") || !strings.Contains(r.stderr, "(pid "+itoa(pid)+") running apply") ||
		!strings.Contains(r.stderr, "lock id "+id) || !strings.Contains(r.stderr, "force-unlock "+id) {
		t.Fatalf("plan after a killed apply must name the dead holder:\n%s", r.stderr)
	}
	// The warning's run replaced the record with its own and removed it.
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.lock.info")); err == nil {
		t.Fatal("lock info left by a clean run")
	}

	// force-unlock clears a dead holder's record, and only with its id.
	pid, id = kill()
	r = w.mustRun(1, "force-unlock", "--force", "0123456789abcdef")
	if !strings.Contains(r.stderr, "does not match") || !strings.Contains(r.stderr, id) {
		t.Fatalf("force-unlock with a wrong id:\n%s", r.stderr)
	}
	r = w.mustRun(0, "force-unlock", "--force", id)
	if !strings.Contains(r.stdout, "Removed lock "+id) || !strings.Contains(r.stdout, "pid "+itoa(pid)) {
		t.Fatalf("force-unlock:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.lock.info")); err == nil {
		t.Fatal("force-unlock left the lock info")
	}
	r = w.mustRun(0, "plan")
	if strings.Contains(r.stderr, "ended without releasing") {
		t.Fatalf("warned again after force-unlock:\n%s", r.stderr)
	}
	r = w.mustRun(1, "force-unlock", "--force", id)
	if !strings.Contains(r.stderr, "not locked") {
		t.Fatalf("force-unlock twice:\n%s", r.stderr)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
