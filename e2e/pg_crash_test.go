package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashRecoveryRandomKills kills apply with SIGKILL at random moments,
// at least minKills times, with the state in PostgreSQL, re-running it
// after each kill, then checks against the sandbox's devices and the state
// that nothing was lost and nothing shown twice. TestCrashRecovery reads
// where each kill landed from the files the local backend leaves; a
// PostgreSQL state leaves none, so here the phases are the test's aim.
func crashRecoveryRandomKills(t *testing.T, pg *pgState) {
	if testing.Short() {
		t.Skip("crash test: kills apply 20+ times; skipped with -short")
	}
	const (
		minKills    = 24
		parallelism = "4"
		seed        = 20261122
	)
	began := time.Now()
	sb := startSandbox(t, crashSeed, "--latency", "60ms", "--quiet")
	waves := 1
	w := newWorkspace(t, sb, crashCampaign(waves))
	w.usePG(pg)
	rng := rand.New(rand.NewPCG(seed, 5))

	kills := map[string]int{} // by phase
	total, completed := 0, 0
	planTime := 800 * time.Millisecond    // start to first request, updated as seen
	persistTime := 300 * time.Millisecond // last response to exit, updated as seen
	for round := 0; total < minKills; round++ {
		if round > 4*minKills {
			t.Fatalf("only %d kills in %d rounds", total, round)
		}
		mode := []string{"plan", "plan", "batches", "batches", "batches", "batches", "persist", "persist"}[rng.IntN(8)]
		args := []string{"apply", "--auto-approve", "--parallelism", parallelism, "--json"}
		if mode == "persist" {
			// One small tagged address sent again, then the whole state is
			// persisted: the kill lands while it is written.
			addr := fmt.Sprintf(`notification.small_w%d["k%03d"]`, rng.IntN(waves), 2*rng.IntN(100)+1)
			args = append(args, "--target", addr, "--replace", addr)
		}
		p := w.startProc(args...)
		var phase string
		var respAt time.Time
		switch mode {
		case "plan":
			delay := time.Duration(rng.Int64N(int64(planTime)))
			time.Sleep(time.Until(p.start.Add(delay)))
			phase = "plan"
		drain:
			for {
				select {
				case line, open := <-p.lines:
					if !open { // the run ended before the kill
						break drain
					}
					if strings.Contains(line, `"type":"request"`) {
						phase = "batches"
					}
				default:
					break drain
				}
			}
		case "batches":
			n := rng.IntN(4)
			if _, ok := p.waitLine(`"type":"request"`, 20*time.Second); ok {
				planTime = (planTime + time.Since(p.start)) / 2
				for range n {
					if _, ok := p.waitLine(`"type":"response"`, 20*time.Second); !ok {
						break
					}
				}
			}
			time.Sleep(time.Duration(rng.Int64N(int64(80 * time.Millisecond))))
			phase = "batches"
		case "persist":
			if _, ok := p.waitLine(`"type":"response"`, 20*time.Second); ok {
				respAt = time.Now()
				time.Sleep(time.Duration(rng.Int64N(int64(persistTime))))
				phase = "persist"
			} else {
				phase = "plan"
			}
		}
		if p.kill(syscall.SIGKILL) {
			kills[phase]++
			total++
			t.Logf("round %d: %s kill after %s", round, phase, time.Since(p.start).Round(time.Millisecond))
			continue
		}
		// It finished first: a run with nothing left means the campaign is
		// done, so a new wave gives the next kills something to hit.
		completed++
		if code := p.wait(time.Second); code != 0 {
			t.Fatalf("round %d (%s): apply exited %d\nstdout:\n%s\nstderr:\n%s", round, mode, code, p.stdout, p.stderr)
		}
		if mode == "persist" {
			if !respAt.IsZero() {
				// Aim the next ones inside the persist just seen.
				persistTime = time.Since(respAt) + 20*time.Millisecond
			}
			continue
		}
		waves++
		w.write(crashCampaign(waves), sb)
	}
	killedAt := time.Since(began)

	// Finish the campaign, then nothing must be left to do.
	staleInfo := w.lockInfoLeft()
	r := w.mustRun(0, "apply", "--auto-approve", "--parallelism", parallelism)
	if staleInfo && !strings.Contains(r.stderr, "ended without releasing it") {
		t.Errorf("the run after a kill did not report the dead lock holder:\n%s", r.stderr)
	}
	plan := w.mustRun(0, "plan", "--detailed-exitcode", "--json")

	// Compare the state with what every device shows.
	st := w.readState()
	targets := crashTargets(allWaves(waves)...)
	var devIDs []string
	seen := map[string]bool{}
	for _, ct := range targets {
		if !seen[ct.device] {
			seen[ct.device] = true
			devIDs = append(devIDs, ct.device)
		}
	}
	devs := sb.devices(devIDs)

	var tally crashTally
	unknown := tally.check(t, st, targets, devs)
	tally.checkDevices(t, devs)
	// Unknown targets must be reported by the plan, held with a warning.
	held := 0
	for _, c := range jsonPlanHeld(t, plan.stdout) {
		held += c
	}
	if held != unknown {
		t.Errorf("plan reports %d held targets, the state has %d unknown", held, unknown)
	}
	if unknown > 0 && !strings.Contains(plan.stdout, "--retry-unknown") {
		t.Errorf("plan does not explain the held targets:\n%.2000s", plan.stdout)
	}
	phases := make([]string, 0, len(kills))
	for _, ph := range []string{"plan", "batches", "persist"} {
		phases = append(phases, ph+" "+strconv.Itoa(kills[ph]))
	}
	summary := fmt.Sprintf("crash test (PostgreSQL state): %d kills survived (aimed at %s), %d runs finished before their kill, %d waves of 20,000 user ids (%d targets); "+
		"targets lost %d, duplicates seen %d, unknown targets left %d (untagged, held; %d of them did reach the device), delivered %d; kills took %s, whole test %s",
		total, strings.Join(phases, ", "), completed, waves, len(targets), tally.lost, tally.dups, unknown, tally.unknownReceived, tally.delivered,
		killedAt.Round(time.Second), time.Since(began).Round(time.Second))
	t.Log(summary)
	fmt.Println(summary)
	if kills["plan"] == 0 || kills["batches"] == 0 || kills["persist"] == 0 {
		t.Errorf("kills did not reach every phase: %v", kills)
	}
}

// allWaves lists waves 0 to n-1, for crashTargets.
func allWaves(n int) []int {
	ws := make([]int, n)
	for i := range ws {
		ws[i] = i
	}
	return ws
}
