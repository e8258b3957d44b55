package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/planner"
)

// Staged rollouts (issue 26): a stage at a time, a failure gate that
// halts, and buckets that never move.

// rolloutBlock is a notification to users g0000.. released in stages.
const rolloutBlock = `
notification "spring" {
  user_ids = %s
  title    = "Spring sale"
  body     = "20%% off"
  tag      = "spring"
  rollout {
    stages           = [%s]
    wait             = "30m"
    max_failure_rate = "2%%"
  }
}
`

// rolloutPlan runs plan --json and returns the spring change's rollout.
func rolloutStatus(t *testing.T, w *workspace, args ...string) (string, *planner.RolloutStatus, map[string]int) {
	t.Helper()
	doc, out := planAs[struct {
		Changes []struct {
			Address string                 `json:"address"`
			Action  string                 `json:"action"`
			Targets counts                 `json:"targets"`
			Rollout *planner.RolloutStatus `json:"rollout"`
		} `json:"changes"`
	}](w, args...)
	for _, c := range doc.Changes {
		if c.Address == "notification.spring" && c.Rollout != nil {
			return c.Action, c.Rollout, c.Targets
		}
	}
	t.Fatalf("no rollout for notification.spring in\n%s", out)
	return "", nil, nil
}

// at is an RFC 3339 time d after start: --now only ever steps forward.
func at(start time.Time, d time.Duration) string {
	return start.Add(d).UTC().Format(time.RFC3339)
}

// TestRolloutGateHalts: with a fifth of the targets failing (devices
// seeded to fail), the first stage's failure rate exceeds the gate; three
// further applies, hours apart in the embedded sandbox, send nothing and
// the plan names the rate and the request ids; --resume sends the rest.
func TestRolloutGateHalts(t *testing.T) {
	sb := startEmbedded(t, guardsSeed+`
user_range "f%04d" {
  count       = 60
  device      = "fd%04d"
  environment = "test"
  fail        = "bad token"
}
`)
	users := `concat(` + guardUsers(240) + `, [for i in range(60) : format("f%04d", i)])`
	w := newWorkspace(t, sb, fmt.Sprintf(rolloutBlock, users, `"10%", "100%"`))
	sent := func() int { return w.readState().Messages["notification.spring"].TargetCount() }
	start := time.Now()
	w.mustRun(1, "apply", "--auto-approve") // failed targets: exit 1
	first, requests := sent(), sb.requests()
	if first == 0 || first > 60 {
		t.Fatalf("first stage sent %d targets of 300", first)
	}
	for i := 1; i <= 3; i++ {
		now := at(start, time.Duration(i)*time.Hour)
		w.apply("--now", now)
		if n, r := sent(), sb.requests(); n != first || r != requests {
			t.Fatalf("apply %d of a halted rollout sent %d more targets, %d more requests", i, n-first, r-requests)
		}
		action, rs, _ := rolloutStatus(t, w, "--now", now)
		if action != "stage" || rs.State != planner.RolloutHalted || rs.Failed == 0 || rs.FailureRate <= 0.02 || len(rs.RequestIDs) == 0 {
			t.Fatalf("apply %d: %s %+v", i, action, rs)
		}
	}
	human := w.mustRun(0, "plan", "--now", at(start, 4*time.Hour)).stdout
	for _, want := range []string{"rollout halted at stage 1 of 2 (10%)", "over max_failure_rate 2%", "failures came back from request req-", "1 rollout is halted by its failure gate (apply --resume ADDR to go on)"} {
		if !strings.Contains(human, want) {
			t.Errorf("plan lacks %q:\n%s", want, human)
		}
	}
	// The failed targets are retried, and fail again.
	w.mustRun(1, "apply", "--auto-approve", "--now", at(start, 4*time.Hour), "--resume", "notification.spring")
	if n := sent(); n != 300 {
		t.Fatalf("--resume left %d of 300 targets unsent", 300-n)
	}
	_, rs, _ := rolloutStatus(t, w, "--now", at(start, 5*time.Hour))
	if rs.Current != 1 {
		t.Errorf("after --resume: %+v", rs)
	}
	shownOnce(t, sb, 240, 1, "Spring sale")
}

// TestRolloutCompletes: a rollout within its gate sends one stage per
// apply, waiting between them (in the embedded sandbox, where --now moves
// the clock), and every target gets it exactly once.
func TestRolloutCompletes(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	const n = 300
	w := newWorkspace(t, sb, fmt.Sprintf(rolloutBlock, guardUsers(n), `"5%", "20%", "50%", "100%"`))
	sent := func() int {
		m := w.readState().Messages["notification.spring"]
		if m == nil {
			return 0
		}
		return m.TargetCount()
	}
	start := time.Now()
	prev := 0
	for i := range 4 {
		now := at(start, time.Duration(i)*31*time.Minute)
		if i > 0 {
			// 29 minutes after the last stage, nothing is due: the wait
			// counts from the simulated time that stage was sent at.
			early := at(start, time.Duration(i)*31*time.Minute-2*time.Minute)
			if action, rs, _ := rolloutStatus(t, w, "--now", early); action != "stage" || rs.State != planner.RolloutWaiting || rs.NextDue == nil {
				t.Fatalf("before stage %d: %s %+v", i+1, action, rs)
			}
			if r := w.apply("--now", early); !strings.Contains(r.stdout, "Nothing to send") || sent() != prev {
				t.Fatalf("apply before stage %d's wait sent:\n%s", i+1, r.stdout)
			}
		}
		if i == 0 {
			w.apply() // --now start would be the past once the second it names has gone by
		} else {
			w.apply("--now", now)
		}
		if sent() <= prev {
			t.Fatalf("apply %d sent nothing", i+1)
		}
		prev = sent()
	}
	if prev != n {
		t.Errorf("%d targets sent over four stages, want %d", prev, n)
	}
	if action, rs, _ := rolloutStatus(t, w, "--now", at(start, 3*time.Hour)); action != "no-op" || rs.State != planner.RolloutComplete {
		t.Errorf("after the last stage: %s %+v", action, rs)
	}
	shownOnce(t, sb, n, 1, "Spring sale")
}

// TestRolloutAssignmentsStable: two checkouts plan the same first stage,
// and 1,000 users added to the audience move no one in or out of it.
func TestRolloutAssignmentsStable(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	block := fmt.Sprintf(rolloutBlock, guardUsers(400), `"10%", "100%"`)
	firstStage := func(w *workspace) []string {
		t.Helper()
		p := w.savedPlan()
		send := slices.Clone(p.Changes[0].Send)
		slices.Sort(send)
		return send
	}
	a := firstStage(newWorkspace(t, sb, block))
	b := firstStage(newWorkspace(t, sb, block))
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Fatalf("two checkouts plan different first stages:\n%v\n%v", a, b)
	}
	users1400 := fmt.Sprintf(`concat(%s, [for i in range(1000, 1400) : format("g%%04d", i)])`, guardUsers(1000))
	grown := firstStage(newWorkspace(t, sb, fmt.Sprintf(rolloutBlock, users1400, `"10%", "100%"`)))
	var old []string
	for _, id := range grown {
		if id < "g0400" {
			old = append(old, id)
		}
	}
	if !slices.Equal(old, a) {
		t.Errorf("adding 1,000 users moved targets of the first stage:\nbefore %v\nafter  %v", a, old)
	}
	if len(grown) <= len(a) {
		t.Errorf("the first stage of 1,400 users has %d, of 400 %d", len(grown), len(a))
	}
}

// TestRolloutExampleConverges: examples/rollout goes out stage by stage
// as --now steps past each wait, and converges: every customer has the
// spring sale once, and the plan says the rollouts are complete.
func TestRolloutExampleConverges(t *testing.T) {
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1", "PUSHFORM_API_KEY=unused")}
	if err := os.CopyFS(w.dir, os.DirFS("../examples/rollout")); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{"pushform.state", "pushform.sandbox.json", "pushform.state.backup", "pushform.state.journal"} {
		os.Remove(filepath.Join(w.dir, leftover))
	}
	start := time.Now()
	sent := func() int {
		n := 0
		for _, m := range w.readState().Messages {
			n += m.TargetCount()
		}
		return n
	}
	w.apply()
	prev := sent()
	for i, step := range []time.Duration{31 * time.Minute, 62 * time.Minute} {
		w.apply("--now", at(start, step))
		if n := sent(); n <= prev {
			t.Fatalf("apply %d at +%s sent nothing", i+2, step)
		}
		prev = sent()
	}
	if prev != 1200 {
		t.Errorf("the state records %d targets, want 500 + 200 + the newsletter's 500 (variants and holdout)", prev)
	}
	r := w.mustRun(0, "plan", "--detailed-exitcode", "--now", at(start, 3*time.Hour))
	if strings.Count(r.stdout, "rollout complete") != 0 || !strings.Contains(r.stdout, "No changes.") {
		// complete rollouts are up to date: not listed
		t.Errorf("final plan:\n%s", r.stdout)
	}
	out := w.mustRun(0, "sandbox", "show", "phone-499", "--json").stdout
	if strings.Count(out, `"Spring sale"`) != 1 {
		t.Errorf("phone-499 shows the spring sale %d times:\n%s", strings.Count(out, `"Spring sale"`), out)
	}
}

// variantBlock is a notification in two variants with a holdout.
const variantBlock = `
notification "news" {
  user_ids = %s
  tag      = "news"
  variant "a" {
    weight = 50
    title  = "Spring sale"
    body   = "20%% off"
  }
  variant "b" {
    weight = 50
    title  = "20%% off everything"
    body   = "Until Sunday"
  }
  holdout = "5%%"
}
`

// TestVariantsStableAndExported: two checkouts assign every target the
// same variant (or the holdout), 1,000 users added move none, and after
// apply history --variants --json exports exactly that assignment.
func TestVariantsStableAndExported(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	assign := func(w *workspace) map[string]string {
		t.Helper()
		p := w.savedPlan()
		out := map[string]string{}
		for _, c := range p.Changes {
			for _, id := range append(append([]string{}, c.Send...), c.Holdout...) {
				if prev, dup := out[id]; dup {
					t.Fatalf("%s in %s and %s", id, prev, c.Address)
				}
				out[id] = c.Address
			}
		}
		return out
	}
	block := fmt.Sprintf(variantBlock, guardUsers(400))
	w := newWorkspace(t, sb, block)
	first := assign(w)
	if len(first) != 400 {
		t.Fatalf("%d of 400 assigned", len(first))
	}
	if again := assign(newWorkspace(t, sb, block)); !maps.Equal(first, again) {
		t.Fatal("two checkouts assign differently")
	}
	users1400 := fmt.Sprintf(`concat(%s, [for i in range(1000, 1400) : format("g%%04d", i)])`, guardUsers(1000))
	grown := assign(newWorkspace(t, sb, fmt.Sprintf(variantBlock, users1400)))
	for id, addr := range first {
		if grown[id] != addr {
			t.Fatalf("adding 1,000 users moved %s from %s to %s", id, addr, grown[id])
		}
	}
	w.apply()
	var x struct {
		Variants []struct {
			Name    string `json:"name"`
			Holdout bool   `json:"holdout"`
			Targets int    `json:"targets"`
		} `json:"variants"`
		Assignments []struct {
			Target  string `json:"target"`
			Variant string `json:"variant"`
			Holdout bool   `json:"holdout"`
			Outcome string `json:"outcome"`
		} `json:"assignments"`
	}
	out := w.mustRun(0, "history", "notification.news", "--variants", "--json").stdout
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(x.Variants) != 3 || len(x.Assignments) != 400 {
		t.Fatalf("export: %d variants, %d assignments", len(x.Variants), len(x.Assignments))
	}
	for _, a := range x.Assignments {
		want := "notification.news.variant." + a.Variant
		if a.Holdout {
			want = "notification.news.holdout"
		}
		if first[a.Target] != want || a.Holdout != (a.Outcome == "holdout") || !a.Holdout && a.Outcome != "delivered" {
			t.Fatalf("%+v, planned %s", a, first[a.Target])
		}
	}
	// Holdout devices show nothing; each other device exactly its variant.
	shown := 0
	devs := make([]string, 400)
	for i := range devs {
		devs[i] = fmt.Sprintf("gd%04d", i)
	}
	for id, d := range sb.devices(devs) {
		shown += d.Received
		if first["g"+strings.TrimPrefix(id, "gd")] == "notification.news.holdout" && d.Received != 0 {
			t.Errorf("held-out %s received %d", id, d.Received)
		}
	}
	if shown != 400-x.Variants[0].Targets {
		t.Errorf("%d shown, want %d", shown, 400-x.Variants[0].Targets)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	if r := w.mustRun(0, "history", "notification.news"); !strings.Contains(r.stderr, "notification.news has variants") {
		t.Errorf("history of the notification with variants:\n%s%s", r.stdout, r.stderr)
	}
	// A test send names one variant.
	if r := w.run("test-send", "notification.news", "--device", "gd0001"); r.code != 1 || !strings.Contains(r.stderr, "has variants; send one of them: notification.news.variant.a, notification.news.variant.b") {
		t.Errorf("test-send of a notification with variants: %d %s", r.code, r.stderr)
	}
	if r := w.mustRun(0, "test-send", "notification.news.variant.b", "--device", "gd0001"); !strings.Contains(r.stdout, "Test send of notification.news.variant.b") {
		t.Errorf("test-send of variant b:\n%s", r.stdout)
	}
	if d := sb.device("gd0001"); d.Inbox[len(d.Inbox)-1].Title != "20% off everything" {
		t.Errorf("gd0001 after the test send of variant b: %+v", d.Inbox)
	}
}
