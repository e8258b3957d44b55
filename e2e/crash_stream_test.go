package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pushform/state"
)

// streamCampaign sends one untagged notification (a duplicate would show
// as a second inbox entry) to every recipient, which apply --auto-approve
// streams: requests go out while the list arrives. A small tagged
// notification before it in address order shares the first request.
const streamCampaign = `
data "recipients" "all" {}

notification "early" {
  user_ids = [for i in range(10) : format("u%05d", i)]
  title    = "Early"
  body     = "before the streamed one"
  tag      = "early"
}

notification "everyone" {
  user_ids = data.recipients.all.user_ids
  title    = "Everyone"
  body     = "sent while the list arrives"
}
`

// TestCrashRecoveryStreamed kills apply with SIGKILL while it sends a
// recipients list that is still arriving, then later in its sends, and
// re-runs it: every device must show the notification at most once, and
// every target must be delivered or (untagged, unanswered at a kill) held
// as unknown.
//
// The gate in front of the sandbox passes on the first half of the list
// and holds the rest: the first two runs are killed after sends arrived
// that the half list made possible, so the kills land while the plan is
// not yet whole, and the sends show that apply did not wait for it.
func TestCrashRecoveryStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: kills apply; skipped with -short")
	}
	const (
		parallelism = 4
		midList     = 2 // runs killed with half the list held back
		kills       = 6
		guard       = 2 * time.Minute // a hang guard, not a bound on speed
	)
	const maxUnanswered = 2*parallelism + 1 // as in TestCrashRecovery
	sb := startSandbox(t, crashSeed, "--latency", "60ms", "--quiet")
	g := startGate(t, sb)
	w := newWorkspace(t, g.base(), streamCampaign)
	rng := rand.New(rand.NewPCG(20261124, 7))

	killed := 0
	for round := 0; killed < kills; round++ {
		if round > 3*kills {
			t.Fatalf("only %d kills in %d rounds", killed, round)
		}
		g.settle()
		g.reset()
		split := killed < midList
		if split {
			g.splitNextList()
		}
		before := observeFiles(t, w.dir)
		p := w.startProcEnv(nil, "apply", "--auto-approve", "--parallelism", strconv.Itoa(parallelism), "--json")
		n := 1 + rng.IntN(6)
		if split {
			// The half list holds 8,192 ids in whole chunks of 4,096, and a
			// kill can leave 9 requests of them recorded: at most 4 more
			// requests of 500 are sure to be sendable in the second run.
			n = 1 + rng.IntN(4)
		}
		for i := 0; i < n && !p.exited(); i++ {
			select {
			case <-g.arrived:
			case <-p.done:
			case <-time.After(guard):
				t.Fatalf("round %d: no send request within %s (split list: %v)\nstderr:\n%s", round, guard, split, p.stderr)
			}
		}
		if !split {
			time.Sleep(time.Duration(rng.Int64N(int64(80 * time.Millisecond)))) // anywhere in the next request
		}
		ok := p.kill(syscall.SIGKILL)
		g.releaseList()
		if !ok {
			if split {
				t.Fatalf("round %d: apply ended with half the recipients list held back\nstdout:\n%s\nstderr:\n%s", round, p.stdout, p.stderr)
			}
			if code := p.wait(time.Second); code != 0 {
				t.Fatalf("round %d: apply exited %d\nstderr:\n%s", round, code, p.stderr)
			}
			break // the campaign is done: no more to kill
		}
		killed++
		after := observeFiles(t, w.dir)
		// Intents without an outcome: those whose answer reached apply
		// before the kill were answered, only not yet recorded.
		sends := g.reset()
		answered := map[string]bool{}
		for _, s := range sends {
			k := requestKey(t, s.Body)
			answered[k] = answered[k] || s.Answered
		}
		var open, openAnswered int
		for _, in := range unansweredIntents(t, before, after) {
			if answered[intentKey(in)] {
				openAnswered++
			} else {
				open++
			}
		}
		if open > maxUnanswered {
			t.Errorf("round %d: the kill left %d requests recorded as sent and unanswered; at most %d can be", round, open, maxUnanswered)
		}
		t.Logf("round %d: killed after %d sends (list split: %v); %d requests left unanswered, %d answered but not yet recorded", round, len(sends), split, open, openAnswered)
	}

	w.mustRun(0, "apply", "--auto-approve", "--parallelism", strconv.Itoa(parallelism))
	w.mustRun(0, "plan", "--detailed-exitcode")

	var targets []crashTarget
	for i := range 20000 {
		id, dev := fmt.Sprintf("u%05d", i), fmt.Sprintf("d%05d", i)
		targets = append(targets, crashTarget{addr: "notification.everyone", id: id, device: dev, title: "Everyone", badge: -1})
		if i < 10 {
			targets = append(targets, crashTarget{addr: "notification.early", id: id, device: dev, title: "Early", tagged: true, badge: -1})
		}
	}
	var devIDs []string
	for i := range 20000 {
		devIDs = append(devIDs, fmt.Sprintf("d%05d", i))
	}
	devs := sb.devices(devIDs)
	var tally crashTally
	tally.check(t, w.readState(), targets, devs)
	tally.checkDevices(t, devs)
	t.Logf("streamed crash test: %d kills (%d with the list half served); %d targets: %d delivered, %d unknown and held (%d of them reached the device), %d lost, %d duplicates",
		killed, min(killed, midList), tally.targets, tally.delivered, tally.unknown, tally.unknownReceived, tally.lost, tally.dups)
}

// TestStreamedApplyListBreaksOff: the recipients answer stops half-way
// while apply sends from it. The requests already sent are recorded, apply
// exits 1 saying so, and the next apply sends the rest: no device shows
// the notification twice.
func TestStreamedApplyListBreaksOff(t *testing.T) {
	sb := startSandbox(t, crashSeed, "--latency", "20ms", "--quiet")
	g := startGate(t, sb)
	w := newWorkspace(t, g.base(), streamCampaign)

	g.splitNextList()
	p := w.startProcEnv(nil, "apply", "--auto-approve", "--parallelism", "4")
	g.waitArrivals(3, 2*time.Minute) // sent from the first half of the list
	g.cutList()
	code := p.wait(2 * time.Minute)
	g.settle()
	sent := len(g.reset())
	stderr := p.stderr.String()
	if code != 1 || !strings.Contains(stderr, "recipients") || !strings.Contains(stderr, "apply again") {
		t.Fatalf("apply exited %d after the list broke off; want 1 with the reason and what to do\nstdout:\n%s\nstderr:\n%s", code, p.stdout, stderr)
	}
	st := w.readState()
	outcomes := map[state.Outcome]int{}
	for _, tg := range st.Messages["notification.everyone"].AllTargets() {
		outcomes[tg.Outcome]++
	}
	// Requests journaled ahead and never sent are recorded as not sent
	// (failed), which the next plan sends; every request sent was answered.
	if d := outcomes[state.Delivered]; d == 0 || d > sent*500 || outcomes[state.Unknown] > 0 {
		t.Fatalf("outcomes %v for %d requests sent", outcomes, sent)
	}
	if st.Recipients != nil {
		t.Errorf("the state keeps a recipients list (%d ids) though the one fetched broke off", len(st.Recipients.UserIDs))
	}
	t.Logf("list broke off after %d requests; outcomes %v; stderr: %s", sent, outcomes, strings.TrimSpace(stderr))

	w.mustRun(0, "apply", "--auto-approve", "--parallelism", "4")
	w.mustRun(0, "plan", "--detailed-exitcode")
	var targets []crashTarget
	var devIDs []string
	for i := range 20000 {
		id, dev := fmt.Sprintf("u%05d", i), fmt.Sprintf("d%05d", i)
		targets = append(targets, crashTarget{addr: "notification.everyone", id: id, device: dev, title: "Everyone", badge: -1})
		devIDs = append(devIDs, dev)
	}
	devs := sb.devices(devIDs)
	var tally crashTally
	tally.check(t, w.readState(), targets, devs)
	if tally.delivered != 20000 {
		t.Errorf("%d of 20,000 delivered (%d unknown)", tally.delivered, tally.unknown)
	}
}
