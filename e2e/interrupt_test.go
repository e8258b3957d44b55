package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFirstInterruptFinishesInFlight: the first SIGINT stops new requests,
// lets the ones in flight finish, saves the state and exits 1 saying so;
// the next apply sends exactly the rest. A gate holds the requests, so the
// interrupt lands while they are in flight by construction.
func TestFirstInterruptFinishesInFlight(t *testing.T) {
	sb := startSandbox(t, slowSeed, "--quiet")
	g := startGate(t, sb)
	w := newWorkspace(t, g.base(), slowCampaign("news", "")) // untagged: a duplicate would show
	g.holdSends()
	p := w.startProc("apply", "--auto-approve", "--parallelism", "2", "--json")
	g.waitArrivals(2, time.Minute) // both workers have a request on the wire
	p.cmd.Process.Signal(os.Interrupt)
	// main cancels before it prints: from here no request starts.
	p.waitStderr("Interrupted: stopping once the work in progress is saved", time.Minute)
	if n := g.answered(); n != 0 {
		t.Fatalf("%d requests were answered while the gate held them", n)
	}
	g.releaseSends()
	code := p.wait(time.Minute)
	out := p.stdout.String()
	if code != 1 {
		t.Fatalf("exit %d after one interrupt, want 1\n%s\n%s", code, out, p.stderr)
	}
	if n := strings.Count(out, `"type":"request"`); n != 2 {
		t.Errorf("%d requests started; the interrupt came with 2 in flight:\n%s", n, out)
	}
	if n := strings.Count(out, `"type":"response"`); n != 2 {
		t.Errorf("the 2 requests in flight must finish; %d responses:\n%s", n, out)
	}
	if sent := len(g.reset()); sent != 2 {
		t.Errorf("%d requests reached the service, want the 2 in flight", sent)
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
// waiting; the journal is intact and the next apply recovers from it. The
// gate holds the requests in flight until after the exit, so an apply that
// waited for them could not exit at all.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	const parallelism = 2
	sb := startSandbox(t, slowSeed, "--quiet")
	g := startGate(t, sb)
	w := newWorkspace(t, g.base(), slowCampaign("promo", "promo"))
	g.holdSends()
	p := w.startProc("apply", "--auto-approve", "--parallelism", strconv.Itoa(parallelism), "--json")
	g.waitArrivals(parallelism, time.Minute)
	p.cmd.Process.Signal(os.Interrupt)
	p.waitStderr("Interrupted: stopping", time.Minute)
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.wait(time.Minute); code != 130 {
		t.Fatalf("second interrupt: exit %d, want 130\n%s", code, p.stderr)
	}
	if n := g.answered(); n != 0 {
		t.Fatalf("%d requests were answered before the exit; the gate held them all", n)
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
	// The 1,000 in flight, plus the batches journaled ahead of the workers
	// that never left: up to parallelism + 1 (executor/pipeline.go).
	ahead := parallelism + 1
	if unknown < parallelism*500 || unknown > (parallelism+ahead)*500 {
		t.Errorf("%d unknown after the second interrupt, want the %d in flight and at most %d journaled ahead", unknown, parallelism*500, ahead*500)
	}
	p2 := w.planJSON()
	if a, tg := p2.action("notification.promo"); tg["unknown"] != unknown || tg["new"] != 3000-unknown {
		t.Errorf("plan after the exit: %s %v", a, tg)
	}
	// The abandoned requests reach the service after all: the next apply
	// re-sends them, and the tag keeps each device at one copy.
	g.releaseSends()
	g.settle()
	if sent := len(g.reset()); sent != parallelism {
		t.Errorf("%d requests reached the gate, want the %d in flight", sent, parallelism)
	}
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
