package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
)

// crashSeed serves 20,000 users u00000..u19999, each with one device
// d00000..d19999.
const crashSeed = `
api_key "k-test-canary-0123456789" { environment = "test" }
user_range "u%05d" {
  count       = 20000
  device      = "d%05d"
  environment = "test"
}
`

// crashWave is one wave of the crash campaign: 20,000 user ids in a tagged
// notification (9,000), an untagged one (9,000) and 200 small ones of 10
// users (every other one tagged, so tagged and untagged parts share
// requests), plus a badge on 1,000 devices. Each wave has its own content,
// so a device may hold one notification of each wave.
func crashWave(w int) string {
	return fmt.Sprintf(`
notification "tagged_w%[1]d" {
  user_ids = flatten([for a in range(18) : [for b in range(500) : format("u%%05d", a * 500 + b)]])
  title    = "T%[1]d"
  body     = "tagged, wave %[1]d"
  tag      = "t%[1]d"
}

notification "untagged_w%[1]d" {
  user_ids = flatten([for a in range(18, 36) : [for b in range(500) : format("u%%05d", a * 500 + b)]])
  title    = "U%[1]d"
  body     = "untagged, wave %[1]d"
}

notification "small_w%[1]d" {
  for_each = { for i in range(200) : format("k%%03d", i) => i }
  user_ids = [for b in range(10) : format("u%%05d", 18000 + each.value * 10 + b)]
  title    = "S%[1]d ${each.key}"
  body     = "small, wave %[1]d"
  tag      = each.value %% 2 == 0 ? null : "s%[1]d-${each.key}"
}

badge "badge_w%[1]d" {
  device_ids  = [for i in range(1000) : format("d%%05d", %[1]d * 1000 + i)]
  badge_count = %[2]d
}
`, w, w+3)
}

func crashCampaign(waves int) string {
	var b strings.Builder
	for w := range waves {
		b.WriteString(crashWave(w))
	}
	return b.String()
}

// crashTarget is one (address, target) of the crash campaign with what the
// device must show for it.
type crashTarget struct {
	addr, id, device string
	title            string // notifications: the title shown
	tagged           bool   // tagged notification or badge: re-sent when unknown
	badge            int    // badges: the count; -1 otherwise
}

// crashTargets lists the targets of the given waves.
func crashTargets(waves ...int) []crashTarget {
	var ts []crashTarget
	user := func(i int) (string, string) { return fmt.Sprintf("u%05d", i), fmt.Sprintf("d%05d", i) }
	for _, w := range waves {
		for i := range 9000 {
			id, dev := user(i)
			ts = append(ts, crashTarget{addr: fmt.Sprintf("notification.tagged_w%d", w), id: id, device: dev, title: fmt.Sprintf("T%d", w), tagged: true, badge: -1})
		}
		for i := 9000; i < 18000; i++ {
			id, dev := user(i)
			ts = append(ts, crashTarget{addr: fmt.Sprintf("notification.untagged_w%d", w), id: id, device: dev, title: fmt.Sprintf("U%d", w), badge: -1})
		}
		for k := range 200 {
			for b := range 10 {
				id, dev := user(18000 + k*10 + b)
				ts = append(ts, crashTarget{addr: fmt.Sprintf("notification.small_w%d[\"k%03d\"]", w, k), id: id, device: dev,
					title: fmt.Sprintf("S%d k%03d", w, k), tagged: k%2 == 1, badge: -1})
			}
		}
		for i := range 1000 {
			dev := fmt.Sprintf("d%05d", w*1000+i)
			ts = append(ts, crashTarget{addr: fmt.Sprintf("badge.badge_w%d", w), id: dev, device: dev, tagged: true, badge: w + 3})
		}
	}
	return ts
}

// TestCrashRecovery kills apply with SIGKILL at least minKills times, in
// every phase of a run, re-running it after each kill, then checks against
// the sandbox's devices and the state that nothing was lost and nothing
// shown twice.
//
// Where each kill landed is a fact read from the files it left, not a
// guess from timing: nothing recorded (plan), journal entries written but
// no snapshot begun (batches), a snapshot temp file left (persist, in the
// middle of writing the snapshot), a snapshot renamed into place with the
// journal it folded still there (persist, after the rename). The test-only
// hook local.PauseEnv stops apply inside the plan and persist phases, which
// are too short to hit reliably otherwise; kills during batches come after
// a random number of requests reached the gate in front of the sandbox.
//
// After every kill, the targets left unknown by it are bounded: at most
// the requests in flight and the intents journaled ahead of them.
//
// The configuration holds one wave at a time: once a run completes a
// wave, its state is kept for the final check and the next wave replaces
// it (the run after forgets the old wave's addresses, one more thing a
// kill can interrupt). Configurations stay small, so rounds stay short.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: kills apply 20+ times; skipped with -short")
	}
	const (
		minKills    = 24
		parallelism = 4
		seed        = 20261122
		guard       = 2 * time.Minute // a hang guard, not a bound on speed
	)
	// Batches recorded as sent but not answered at a kill: one per worker
	// (on the wire, or taken from the queue) and up to P + 1 intents
	// journaled ahead of the workers (executor/pipeline.go).
	const maxUnanswered = 2*parallelism + 1
	minPhase := map[string]int{"plan": 4, "batches": 8, "persist-write": 3, "persist-renamed": 3}
	began := time.Now()
	sb := startSandbox(t, crashSeed, "--latency", "60ms", "--quiet")
	g := startGate(t, sb)
	wave := 0
	w := newWorkspace(t, g.base(), crashWave(wave))
	var finished []finishedWave // waves completed, with the state at completion
	finish := func() {
		t.Helper()
		plan := w.mustRun(0, "plan", "--detailed-exitcode", "--json")
		finished = append(finished, finishedWave{wave: wave, st: w.readState(), plan: plan.stdout})
	}
	rng := rand.New(rand.NewPCG(seed, 5))

	kills := map[string]int{} // by phase, as the files show it
	total, completed, midWrite := 0, 0, 0
	var unanswered, answeredUnrecorded, maxSeen int
	for round := 0; ; round++ {
		short := ""
		for _, ph := range []string{"plan", "batches", "persist-write", "persist-renamed"} {
			if kills[ph] < minPhase[ph] && short == "" {
				short = ph
			}
		}
		if total >= minKills && short == "" {
			break
		}
		if round > 6*minKills {
			t.Fatalf("only %d kills in %d rounds: %v", total, round, kills)
		}
		// Aim at a phase still short of kills, else at any.
		aim := short
		if round == 0 {
			aim = "batches" // creates the state: later persists replace one
		} else if aim == "" || rng.IntN(3) == 0 {
			aim = []string{"plan", "batches", "batches", "persist-write", "persist-renamed"}[rng.IntN(5)]
		}
		args := []string{"apply", "--auto-approve", "--parallelism", strconv.Itoa(parallelism), "--json"}
		if strings.HasPrefix(aim, "persist") && rng.IntN(2) == 0 {
			// One small tagged address sent again, then the whole state is
			// persisted.
			addr := fmt.Sprintf(`notification.small_w%d["k%03d"]`, wave, 2*rng.IntN(100)+1)
			args = append(args, "--target", addr, "--replace", addr)
		}
		var env []string
		switch aim {
		case "plan":
			env = []string{local.PauseEnv + "=read"}
		case "persist-write", "persist-renamed":
			env = []string{local.PauseEnv + "=" + aim}
		}
		before := observeFiles(t, w.dir)
		g.settle() // the requests of the run killed before have all been answered
		g.reset()
		p := w.startProcEnv(env, args...)
		switch aim {
		case "batches":
			n := 1 + rng.IntN(20)
			for i := 0; i < n && !p.exited(); i++ {
				select {
				case <-g.arrived:
				case <-p.done:
				case <-time.After(guard):
					t.Fatalf("round %d: no request for %s", round, guard)
				}
			}
			time.Sleep(time.Duration(rng.Int64N(int64(80 * time.Millisecond)))) // anywhere in the next request
		default:
			p.waitPause(guard)
		}
		if !p.kill(syscall.SIGKILL) {
			// It finished first: a run with nothing left means the
			// campaign is done, so a new wave gives the next kills
			// something to hit.
			completed++
			if code := p.wait(time.Second); code != 0 {
				t.Fatalf("round %d (%s): apply exited %d\nstdout:\n%s\nstderr:\n%s", round, aim, code, p.stdout, p.stderr)
			}
			if !slices.Contains(args, "--replace") {
				finish()
				wave++
				w.write(crashWave(wave), g.base())
			}
			continue
		}
		total++
		after := observeFiles(t, w.dir)
		phase := killPhase(before, after)
		kills[phase]++
		if aim != "batches" && phase != aim {
			t.Errorf("round %d: apply paused at %s, but the files show a kill in %s", round, aim, phase)
		}
		if phase == "persist-write" {
			midWrite++
		}
		// What this kill left unknown: intents without an outcome.
		sends := g.reset()
		reached, answered := map[string]bool{}, map[string]bool{}
		for _, s := range sends {
			k := requestKey(t, s.Body)
			reached[k] = true
			answered[k] = answered[k] || s.Answered
		}
		var open, openAnswered int
		for _, in := range unansweredIntents(t, before, after) {
			if answered[intentKey(in)] {
				openAnswered++ // answered, its outcome not yet journaled
			} else {
				open++
			}
		}
		if open > maxUnanswered {
			t.Errorf("round %d: the kill left %d requests recorded as sent and not answered; at most %d (in flight and journaled ahead) can be", round, open, maxUnanswered)
		}
		unanswered += open
		answeredUnrecorded += openAnswered
		maxSeen = max(maxSeen, open)
		t.Logf("round %d: kill in %s (aimed at %s) after %s; %d requests reached the service, %d left unknown unanswered, %d answered but unrecorded",
			round, phase, aim, time.Since(p.start).Round(time.Millisecond), len(sends), open, openAnswered)
	}
	if midWrite == 0 {
		t.Error("no kill landed in the middle of writing the snapshot")
	}
	killedAt := time.Since(began)

	// Finish the campaign, then nothing must be left to do.
	_, err := os.Stat(filepath.Join(w.dir, "pushform.state.lock.info"))
	staleInfo := err == nil
	r := w.mustRun(0, "apply", "--auto-approve", "--parallelism", strconv.Itoa(parallelism))
	if staleInfo && !strings.Contains(r.stderr, "ended without releasing it") {
		t.Errorf("the run after a kill did not report the dead lock holder:\n%s", r.stderr)
	}
	finish()

	// Compare each wave's state, as it was when the wave completed, with
	// what every device shows.
	var waves []int
	for _, f := range finished {
		waves = append(waves, f.wave)
	}
	var devIDs []string
	seen := map[string]bool{}
	for _, ct := range crashTargets(waves...) {
		if !seen[ct.device] {
			seen[ct.device] = true
			devIDs = append(devIDs, ct.device)
		}
	}
	devs := sb.devices(devIDs)

	var tally crashTally
	for _, f := range finished {
		waveUnknown := tally.check(t, f.st, crashTargets(f.wave), devs)
		// Unknown targets must be reported by the plan, held with a warning.
		held := 0
		for _, c := range jsonPlanHeld(t, f.plan) {
			held += c
		}
		if held != waveUnknown {
			t.Errorf("wave %d: the plan reports %d held targets, the state has %d unknown", f.wave, held, waveUnknown)
		}
		if waveUnknown > 0 && !strings.Contains(f.plan, "--retry-unknown") {
			t.Errorf("wave %d: the plan does not explain the held targets:\n%.2000s", f.wave, f.plan)
		}
	}
	tally.checkDevices(t, devs)
	phases := make([]string, 0, len(kills))
	for _, ph := range []string{"plan", "batches", "persist-write", "persist-renamed", "exit"} {
		phases = append(phases, ph+" "+strconv.Itoa(kills[ph]))
	}
	summary := fmt.Sprintf("crash test: %d kills survived (%s), %d runs finished before their kill, %d waves of 20,000 user ids (%d targets); "+
		"per kill at most %d requests recorded as sent and unanswered (bound %d; %d in all, %d more answered but not yet recorded); "+
		"targets lost %d, duplicates seen %d, unknown targets left %d (untagged, held; %d of them did reach the device), delivered %d; kills took %s, whole test %s",
		total, strings.Join(phases, ", "), completed, len(finished), tally.targets, maxSeen, maxUnanswered, unanswered, answeredUnrecorded,
		tally.lost, tally.dups, tally.unknown, tally.unknownReceived, tally.delivered, killedAt.Round(time.Second), time.Since(began).Round(time.Second))
	t.Log(summary)
	fmt.Println(summary)
	if tmps, _ := filepath.Glob(filepath.Join(w.dir, ".pushform.state.tmp-*")); len(tmps) > 0 {
		t.Errorf("snapshot temp files left after the final run: %v", tmps)
	}
}

// finishedWave is a wave the campaign completed: its state then, and the
// plan --json that found nothing left to do.
type finishedWave struct {
	wave int
	st   *state.State
	plan string
}

// fileFacts is what the state files show at one moment.
type fileFacts struct {
	journal  []byte
	snapshot statefile.Header // Serial 0: no snapshot
	temps    map[string]bool  // snapshot temp files
}

func observeFiles(t *testing.T, dir string) fileFacts {
	t.Helper()
	var f fileFacts
	var err error
	f.journal, err = os.ReadFile(filepath.Join(dir, "pushform.state.journal"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if r, err := os.Open(filepath.Join(dir, "pushform.state")); err == nil {
		f.snapshot, err = statefile.DecodeHeader(r)
		r.Close()
		if err != nil {
			t.Fatalf("snapshot header: %v", err)
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".pushform.state.tmp-*"))
	f.temps = map[string]bool{}
	for _, tmp := range tmps {
		f.temps[tmp] = true
	}
	return f
}

// killPhase says from the files before a run and after its kill where the
// kill landed.
func killPhase(before, after fileFacts) string {
	for tmp := range after.temps {
		if !before.temps[tmp] {
			return "persist-write" // Persist removes its temp file on every path but a kill
		}
	}
	if after.snapshot.Serial > before.snapshot.Serial && before.snapshot.Serial > 0 {
		if h, ok := journalHeader(after.journal); ok && h.Serial < after.snapshot.Serial {
			return "persist-renamed" // the journal the new snapshot folded is still there
		}
		if len(after.journal) == 0 {
			return "exit" // the persist was complete
		}
	}
	if !bytes.Equal(before.journal, after.journal) {
		return "batches"
	}
	return "plan"
}

func journalHeader(journal []byte) (statefile.JournalHeader, bool) {
	h, _, err := statefile.ReadJournal(bytes.NewReader(journal), func(state.Entry) error { return nil })
	return h, err == nil && h.Journal > 0
}

// runEntries returns the journal entries a run wrote between two
// observations: those appended after the entries before, or all of them
// when the run started a new journal (the old one extended an older
// snapshot, or there was none).
func runEntries(t *testing.T, before, after fileFacts) []state.Entry {
	t.Helper()
	read := func(b []byte) (statefile.JournalHeader, []state.Entry) {
		var es []state.Entry
		h, _, err := statefile.ReadJournal(bytes.NewReader(b), func(e state.Entry) error { es = append(es, e); return nil })
		if err != nil {
			t.Fatalf("journal: %v", err)
		}
		return h, es
	}
	hb, eb := read(before.journal)
	ha, ea := read(after.journal)
	if hb.Journal == 0 || hb.Serial != ha.Serial || hb.Lineage != ha.Lineage {
		return ea
	}
	if len(ea) < len(eb) {
		t.Fatalf("the journal lost entries: %d before the run, %d after", len(eb), len(ea))
	}
	return ea[len(eb):]
}

// unansweredIntents returns the intents a run journaled without an outcome.
func unansweredIntents(t *testing.T, before, after fileFacts) []state.Entry {
	t.Helper()
	es := runEntries(t, before, after)
	done := map[int64]bool{}
	for _, e := range es {
		if e.Type == state.EntryOutcome {
			done[e.Batch] = true
		}
	}
	var open []state.Entry
	for _, e := range es {
		if e.Type == state.EntryIntent && !done[e.Batch] {
			open = append(open, e)
		}
	}
	return open
}

// intentKey and requestKey name a request by its first notification's
// title and first target, which no two requests of one run share.
func intentKey(e state.Entry) string {
	it := e.Items[0]
	title := ""
	if it.Content != nil {
		title = it.Content.Title
	}
	return title + "|" + it.Targets[0]
}

func requestKey(t *testing.T, body []byte) string {
	t.Helper()
	var req []struct {
		Title     string   `json:"title"`
		UserIDs   []string `json:"userIds"`
		DeviceIDs []string `json:"deviceIds"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req) == 0 {
		t.Fatalf("send request %q: %v", body, err)
	}
	ids := append(req[0].UserIDs, req[0].DeviceIDs...)
	return req[0].Title + "|" + ids[0]
}

// jsonPlanHeld returns the held count of every change of a plan --json.
func jsonPlanHeld(t *testing.T, out string) map[string]int {
	t.Helper()
	var p struct {
		Changes []struct {
			Address string `json:"address"`
			Targets counts `json:"targets"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --json: %v", err)
	}
	held := map[string]int{}
	for _, c := range p.Changes {
		if n := c.Targets["held"]; n > 0 {
			held[c.Address] = n
		}
	}
	return held
}

// crashTally counts how the targets of the crash campaign ended, against
// what their devices show.
type crashTally struct {
	targets, delivered, unknown, unknownReceived, lost, dups, wrongOutcome, missingBadge int
}

// check compares the state's record of every target with its device,
// counting into c and reporting the first problems of each kind. It
// returns how many of these targets are unknown (held, untagged).
func (c *crashTally) check(t *testing.T, st *state.State, targets []crashTarget, devs map[string]deviceView) (unknown int) {
	t.Helper()
	for _, ct := range targets {
		c.targets++
		m := st.Messages[ct.addr]
		if m == nil {
			t.Fatalf("%s is not in the state", ct.addr)
		}
		tg, ok := m.Targets[ct.id]
		dev := devs[ct.device]
		shown := 0
		if ct.badge < 0 {
			for _, e := range dev.Inbox {
				if e.Title == ct.title {
					shown++
				}
			}
		}
		switch {
		case !ok:
			c.lost++
			t.Errorf("%s %s: not in the state", ct.addr, ct.id)
		case tg.Outcome == state.Delivered:
			c.delivered++
			if ct.badge >= 0 && (dev.Badge == nil || *dev.Badge != ct.badge) {
				c.missingBadge++
			}
			if ct.badge < 0 && shown == 0 {
				c.lost++
				if c.lost < 10 {
					t.Errorf("%s %s: delivered in state, but %s does not show it", ct.addr, ct.id, ct.device)
				}
			}
		case tg.Outcome == state.Unknown && !ct.tagged:
			c.unknown++
			unknown++
			if shown > 0 {
				c.unknownReceived++
			}
		default:
			c.wrongOutcome++
			if c.wrongOutcome < 10 {
				t.Errorf("%s %s: outcome %s (tagged %v)", ct.addr, ct.id, tg.Outcome, ct.tagged)
			}
		}
		if shown > 1 {
			c.dups++
			if c.dups < 10 {
				var reqs []string
				for _, e := range dev.Inbox {
					if e.Title == ct.title {
						reqs = append(reqs, e.RequestID)
					}
				}
				t.Errorf("%s shows %q %d times (requests %v); the state has %s -> %s %+v", ct.device, ct.title, shown, reqs, ct.addr, ct.id, tg)
			}
		}
	}
	return unknown
}

// checkDevices checks that every device shows one inbox entry per tag and
// the badge the state says it was delivered.
func (c *crashTally) checkDevices(t *testing.T, devs map[string]deviceView) {
	t.Helper()
	for id, d := range devs {
		tags := map[string]int{}
		for _, e := range d.Inbox {
			if e.Tag != "" {
				tags[e.Tag]++
				if tags[e.Tag] == 2 {
					c.dups++
					t.Errorf("%s shows tag %s twice", id, e.Tag)
				}
			}
		}
	}
	if c.missingBadge > 0 {
		t.Errorf("%d devices do not show the badge their state says was delivered", c.missingBadge)
	}
}
