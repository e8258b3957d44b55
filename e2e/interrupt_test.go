package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFirstInterruptFinishesInFlight: the first SIGINT stops new requests,
// lets the ones in flight finish, saves the state and exits 1 saying so;
// the next apply sends exactly the rest.
func TestFirstInterruptFinishesInFlight(t *testing.T) {
	sb := startSandbox(t, slowSeed, "--latency", "1500ms", "--quiet")
	w := newWorkspace(t, sb, slowCampaign("news", "")) // untagged: a duplicate would show
	p := w.startProc("apply", "--auto-approve", "--parallelism", "2", "--json")
	var started int
	for started < 2 {
		if _, ok := p.waitLine(`"type":"request"`, 30*time.Second); !ok {
			t.Fatalf("apply sent nothing:\n%s", p.stderr)
		}
		started++
	}
	p.cmd.Process.Signal(os.Interrupt)
	code := p.wait(30 * time.Second)
	out := p.stdout.String()
	if code != 1 {
		t.Fatalf("exit %d after one interrupt, want 1\n%s\n%s", code, out, p.stderr)
	}
	if n := strings.Count(out, `"type":"request"`); n != 2 {
		t.Errorf("%d requests started; the interrupt came after 2, with 2 in flight:\n%s", n, out)
	}
	if n := strings.Count(out, `"type":"response"`); n != 2 {
		t.Errorf("the 2 requests in flight must finish; %d responses:\n%s", n, out)
	}
	stderr := p.stderr.String()
	for _, want := range []string{"Interrupted: stopping once the work in progress is saved", "apply was interrupted", "2,000 targets were not sent", "Run apply again"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// The state was saved (no journal left), with the 1,000 sent.
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state.journal")); err == nil {
		t.Error("the journal was not folded into the state")
	}
	delivered := 0
	for _, tg := range w.readState().Messages["notification.news"].Targets {
		if tg.Outcome == "delivered" {
			delivered++
		}
	}
	if delivered != 1000 {
		t.Errorf("%d delivered in state, want 1,000", delivered)
	}
	before := sb.stats()
	r := w.apply("--parallelism", "4")
	if after := sb.stats(); after.Targets-before.Targets != 2000 {
		t.Errorf("the next apply sent %d targets, want the 2,000 left", after.Targets-before.Targets)
	}
	if !strings.Contains(r.stdout, "2,000 delivered") {
		t.Errorf("next apply:\n%s", r.stdout)
	}
	checkOnce(t, sb, "news", 3000)
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestSecondInterruptExitsAtOnce: a second SIGINT exits 130 without
// waiting; the journal is intact and the next apply recovers from it.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	sb := startSandbox(t, slowSeed, "--latency", "3s", "--quiet")
	w := newWorkspace(t, sb, slowCampaign("promo", "promo"))
	p := w.startProc("apply", "--auto-approve", "--parallelism", "2", "--json")
	if _, ok := p.waitLine(`"type":"request"`, 30*time.Second); !ok {
		t.Fatalf("apply sent nothing:\n%s", p.stderr)
	}
	time.Sleep(100 * time.Millisecond)
	p.cmd.Process.Signal(os.Interrupt)
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	p.cmd.Process.Signal(os.Interrupt)
	code := p.wait(10 * time.Second)
	if took := time.Since(sent); code != 130 || took > 2*time.Second {
		t.Fatalf("second interrupt: exit %d after %s, want 130 at once\n%s", code, took, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "Interrupted again: exiting now.") {
		t.Errorf("stderr:\n%s", p.stderr)
	}
	journal := filepath.Join(w.dir, "pushform.state.journal")
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("no journal after the second interrupt: %v", err)
	}
	// The journal knows the requests in flight: their targets are unknown,
	// and being tagged they are sent again.
	unknown := 0
	for _, tg := range w.readState().Messages["notification.promo"].Targets {
		if tg.Outcome == "unknown" {
			unknown++
		}
	}
	// The 1,000 in flight, plus the batches whose intents the executor had
	// journaled ahead (up to four) that never left.
	if unknown < 1000 || unknown > 1000+4*500 {
		t.Errorf("%d unknown after the second interrupt, want the 1,000 in flight and at most 2,000 journaled ahead", unknown)
	}
	p2 := w.planJSON()
	if a, tg := p2.action("notification.promo"); tg["unknown"] != unknown || tg["new"] != 3000-unknown {
		t.Errorf("plan after the exit: %s %v", a, tg)
	}
	time.Sleep(3 * time.Second) // let the sandbox finish the abandoned requests
	w.apply("--parallelism", "6")
	checkOnce(t, sb, "promo", 3000)
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// checkOnce checks that devices sd0000..sd(n-1) show title exactly once.
func checkOnce(t *testing.T, sb *sandbox, title string, n int) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sd%04d", i)
	}
	bad := 0
	for id, d := range sb.devices(ids) {
		shown := 0
		for _, e := range d.Inbox {
			if e.Title == title {
				shown++
			}
		}
		if shown != 1 {
			bad++
			if bad < 5 {
				t.Errorf("%s shows %q %d times", id, title, shown)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d devices do not show %q exactly once", bad, title)
	}
}
