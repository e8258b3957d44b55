package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/jackc/pgx/v5"

	"pushform/backend"
	"pushform/config"
	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// pgState is one state in PostgreSQL, in a schema of the test's own, which
// workspaces share by naming it in a backend "pg" block: two checkouts of
// one repository on two CI runners. Without a reachable server the test
// is skipped with one line (pgtest), or fails under
// PUSHFORM_TEST_PG_REQUIRED=1, as in CI.
type pgState struct {
	t                 *testing.T
	url, schema, name string

	once sync.Once
	conn *pgx.Conn // for the test's own queries
}

func newPGState(t *testing.T) *pgState {
	t.Helper()
	return &pgState{t: t, url: pgtest.URL(t), schema: pgtest.Schema(t), name: "team"}
}

// pgBackendFile holds a workspace's backend block; workspace.write
// rewrites only main.hcl, so it stays.
const pgBackendFile = "backend.hcl"

// usePG keeps w's state in p: a backend "pg" block naming p's schema and
// state, and the connection string in PUSHFORM_PG_CONN_STR (the block's
// default conn_str_env). A nil p keeps the local file.
func (w *workspace) usePG(p *pgState) {
	w.t.Helper()
	if p == nil {
		return
	}
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n}\n", p.schema, p.name)
	if err := os.WriteFile(filepath.Join(w.dir, pgBackendFile), []byte(block), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.env = append(w.env, "PUSHFORM_PG_CONN_STR="+p.url)
	w.pg = p
}

// newPGWorkspace is a checkout of campaign whose state is p.
func newPGWorkspace(t *testing.T, sb service, campaign string, p *pgState) *workspace {
	t.Helper()
	w := newWorkspace(t, sb, campaign)
	w.usePG(p)
	return w
}

// read reads the stored state as pushform does, without locking.
func (p *pgState) read(t *testing.T) *state.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := pg.Open(ctx, pg.Options{ConnString: p.url, Schema: p.schema, StateName: p.name})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.Read()
	if err != nil {
		t.Fatalf("reading the state: %v", err)
	}
	if s == nil {
		t.Fatal("no state")
	}
	return s
}

// db is a connection of the test's own, closed when the test ends.
func (p *pgState) db() *pgx.Conn {
	p.t.Helper()
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, p.url)
		if err != nil {
			p.t.Fatalf("connecting to the test server: %v", err)
		}
		p.conn = conn
		p.t.Cleanup(func() { conn.Close(context.Background()) })
	})
	if p.conn == nil {
		p.t.Fatal("no connection to the test server")
	}
	return p.conn
}

// lockRow returns the lock info row of the state: the pid of the pushform
// process and the server's backend pid of its connection.
func (p *pgState) lockRow() (pid, backendPid int, found bool) {
	p.t.Helper()
	var pid32, bpid32 int32
	err := p.db().QueryRow(context.Background(),
		`SELECT pid, backend_pid FROM `+pgx.Identifier{p.schema, "locks"}.Sanitize()+` WHERE state_name = $1`, p.name).Scan(&pid32, &bpid32)
	if err == pgx.ErrNoRows {
		return 0, 0, false
	}
	if err != nil {
		p.t.Fatalf("reading the lock row: %v", err)
	}
	return int(pid32), int(bpid32), true
}

// waitSessionGone waits until the server has ended the session of backend
// pid (its client was killed): its advisory locks are released then. It
// returns how long the server took to notice.
func (p *pgState) waitSessionGone(backendPid int) time.Duration {
	p.t.Helper()
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for {
		var n int
		if err := p.db().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, backendPid).Scan(&n); err != nil {
			p.t.Fatal(err)
		}
		if n == 0 {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the server still has the session of backend %d 30s after its client was killed", backendPid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockInfoLeft reports whether a killed holder left its lock info behind:
// the file pushform.state.lock.info, or a row of the locks table.
func (w *workspace) lockInfoLeft() bool {
	w.t.Helper()
	if w.pg != nil {
		_, _, found := w.pg.lockRow()
		return found
	}
	_, err := os.Stat(filepath.Join(w.dir, "pushform.state.lock.info"))
	return err == nil
}

// noStateFiles fails the test when w's directory holds a pushform.state*
// file: with a backend "pg" block the state lives in the database only.
func noStateFiles(t *testing.T, ws ...*workspace) {
	t.Helper()
	for _, w := range ws {
		files, _ := filepath.Glob(filepath.Join(w.dir, "pushform.state*"))
		hidden, _ := filepath.Glob(filepath.Join(w.dir, ".pushform.state*"))
		if files = append(files, hidden...); len(files) > 0 {
			t.Errorf("a campaign with a backend \"pg\" block left state files in %s: %v", w.dir, files)
		}
	}
}

// sIDs are the devices sd0000.. of the first n users of slowSeed.
func sIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sd%04d", i)
	}
	return ids
}

// checkReceived checks that each of the first n devices of slowSeed has
// received exactly received notifications in all, and shows each of titles
// once.
func checkReceived(t *testing.T, sb *sandbox, n, received int, titles ...string) {
	t.Helper()
	bad := 0
	for id, d := range sb.devices(sIDs(n)) {
		shown := map[string]int{}
		for _, e := range d.Inbox {
			shown[e.Title]++
		}
		ok := d.Received == received
		for _, title := range titles {
			ok = ok && shown[title] == 1
		}
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("%s received %d notifications (want %d), shows %v (want each of %q once)", id, d.Received, received, shown, titles)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d devices do not show what they must", bad, n)
	}
}

// sUsers is an untagged notification to the first n users of slowSeed: a
// second copy would show on every device.
func sUsers(name string, n int) string {
	return fmt.Sprintf(`
notification %[1]q {
  user_ids = [for i in range(%[2]d) : format("s%%04d", i)]
  title    = %[1]q
  body     = "to %[2]d users"
}
`, name, n)
}

// TestPGStalePlanFromOtherCheckout is the double send of issue 11 with the
// state in PostgreSQL: two pull requests plan from the same state, each
// saving its plan; the first is applied from one checkout; the second's
// plan, applied from another checkout, is refused before anything is sent.
func TestPGStalePlanFromOtherCheckout(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, slowSeed)
	base := `
notification "welcome" {
  user_ids = ["alice", "bob"]
  title    = "Welcome"
  body     = "hello"
  tag      = "welcome"
}
`
	main := newPGWorkspace(t, sb, base, p) // the main branch, applied
	main.apply()

	// PR 1 adds an untagged notification; PR 2 was branched after PR 1
	// merged, before its apply ran, so its plan sends PR 1's too.
	pr1 := newPGWorkspace(t, sb, base+sUsers("pr1", 1000), p)
	pr2 := newPGWorkspace(t, sb, base+sUsers("pr1", 1000)+sUsers("pr2", 1000), p)
	pr1.mustRun(0, "plan", "--out", "pr1.plan")
	pr2.mustRun(0, "plan", "--out", "pr2.plan")
	serial := p.read(t).Serial

	before := sb.stats()
	r := pr1.mustRun(0, "apply", "pr1.plan")
	if !strings.Contains(r.stdout, "1,000 delivered") {
		t.Fatalf("apply of the first plan:\n%s", r.stdout)
	}
	afterFirst := sb.stats()
	if got := afterFirst.SendRequests - before.SendRequests; got != 2 {
		t.Fatalf("the first plan sent %d requests, want 2", got)
	}

	// The second plan, from the other checkout: stale, nothing sent.
	r = pr2.mustRun(1, "apply", "pr2.plan")
	if !regexp.MustCompile(`the state has changed since the plan was made \(serial \d+, plan made at ` + itoa(int(serial)) + `\): it is stale, make a new plan`).MatchString(r.stderr) {
		t.Errorf("the stale plan must be refused saying it is stale and what to do:\n%s", r.stderr)
	}
	if got := sb.stats(); got != afterFirst {
		t.Fatalf("the stale plan sent something: %+v, then %+v", afterFirst, got)
	}
	checkReceived(t, sb, 1000, 1, "pr1")

	// What to do: plan again (only PR 2's notification is left), apply.
	r = pr2.mustRun(0, "plan", "--out", "pr2.plan")
	if !strings.Contains(r.stdout, "+ notification.pr2 will be created") || strings.Contains(r.stdout, "notification.pr1 will") {
		t.Fatalf("the new plan of PR 2 must send only pr2:\n%s", r.stdout)
	}
	pr2.mustRun(0, "apply", "pr2.plan")
	checkReceived(t, sb, 1000, 2, "pr1", "pr2")
	if d := sb.device("alice-phone"); d.Received != 1 {
		t.Errorf("alice-phone received %d notifications, want 1 (welcome)", d.Received)
	}
	for _, w := range []*workspace{main, pr1, pr2} {
		w.write(base+sUsers("pr1", 1000)+sUsers("pr2", 1000), sb)
		w.mustRun(0, "plan", "--detailed-exitcode")
	}
	noStateFiles(t, main, pr1, pr2)
}

// applyOutcome is how one of two concurrent applies ended.
type applyOutcome int

const (
	outcomeSent    applyOutcome = iota // it ran and sent the round's notification
	outcomeNothing                     // it ran after the other (waiting for the lock, or started late): nothing to send
	outcomeRefused                     // refused at once, naming the other as the holder
)

// classify reads how p ended; other is the pid of the concurrent apply.
func classify(t *testing.T, p *proc, code int, other, targets int) applyOutcome {
	t.Helper()
	out, errOut := p.stdout.String(), p.stderr.String()
	if code == 1 {
		holder := regexp.MustCompile(`state is locked by \S+@\S+ \(apply, pid (\d+), since \S+, lock id [0-9a-f]+\); --lock-timeout waits for it`)
		if m := holder.FindStringSubmatch(errOut); m != nil && m[1] == itoa(other) {
			return outcomeRefused
		}
		t.Fatalf("apply exited 1 without naming the other apply (pid %d) as the holder:\n%s\n%s", other, out, errOut)
	}
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s\n%s", code, out, errOut)
	}
	evs := jsonEvents(t, out)
	last := evs[len(evs)-1]
	if last["type"] != "summary" {
		t.Fatalf("apply --json ended without a summary:\n%s", out)
	}
	if last["changes"] == false {
		return outcomeNothing
	}
	counts, _ := last["counts"].(map[string]any)
	if d, _ := counts["delivered"].(float64); int(d) != targets {
		t.Fatalf("apply delivered %v targets, want %d:\n%s", counts, targets, out)
	}
	return outcomeSent
}

// TestPGTwoAppliesAtOnce starts two applies of the same campaign from two
// checkouts sharing one state at the same moment, 20 rounds, each round
// adding an untagged notification (a second copy would show): one runs,
// the other is refused naming it, or (with --lock-timeout) waits for it
// and then has nothing to send. No device ever shows anything twice.
func TestPGTwoAppliesAtOnce(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	rounds := 20
	if testing.Short() {
		rounds = 4
	}
	const users = 1000 // 2 requests of 500
	// 300 ms a request, one at a time: an apply holds the lock for 0.6 s
	// or more, so two started together overlap.
	sb := startSandbox(t, slowSeed, "--latency", "300ms", "--quiet")
	a := newPGWorkspace(t, sb, "", p)
	b := newPGWorkspace(t, sb, "", p)
	var campaign strings.Builder
	var titles []string
	tally := map[string]int{}
	began := time.Now()
	for round := range rounds {
		title := fmt.Sprintf("r%02d", round)
		titles = append(titles, title)
		campaign.WriteString(sUsers(title, users))
		a.write(campaign.String(), sb)
		b.write(campaign.String(), sb)
		args := []string{"apply", "--auto-approve", "--json", "--parallelism", "1"}
		wait := round%2 == 1
		if wait {
			args = append(args, "--lock-timeout", "2m")
		}
		before := sb.stats()
		pa, pb := a.startProc(args...), b.startProc(args...)
		ca, cb := pa.wait(3*time.Minute), pb.wait(3*time.Minute)
		oa := classify(t, pa, ca, pb.cmd.Process.Pid, users)
		ob := classify(t, pb, cb, pa.cmd.Process.Pid, users)
		if (oa == outcomeSent) == (ob == outcomeSent) {
			t.Fatalf("round %d: exactly one apply must send, got %v and %v\nA:\n%s%s\nB:\n%s%s", round, oa, ob, pa.stdout, pa.stderr, pb.stdout, pb.stderr)
		}
		other := max(oa, ob) // the one that did not send
		if wait && other == outcomeRefused {
			t.Fatalf("round %d: an apply with --lock-timeout was refused", round)
		}
		mode := map[bool]string{false: "no --lock-timeout", true: "--lock-timeout"}[wait]
		tally[mode+": "+map[applyOutcome]string{outcomeNothing: "the other had nothing to send", outcomeRefused: "the other was refused naming the holder"}[other]]++
		after := sb.stats()
		if reqs, targets := after.SendRequests-before.SendRequests, after.Targets-before.Targets; reqs != 2 || targets != users {
			t.Fatalf("round %d sent %d requests, %d targets; want 2 and %d", round, reqs, targets, users)
		}
	}
	elapsed := time.Since(began)

	// Every device shows every round's notification once, and the state
	// has every one of them delivered.
	checkReceived(t, sb, users, rounds, titles...)
	list := a.mustRun(0, "state", "list").stdout
	for _, title := range titles {
		if !strings.Contains(list, "notification."+title+"  1,000 delivered") {
			t.Errorf("state list lacks notification.%s with 1,000 delivered:\n%s", title, list)
		}
	}
	if n := strings.Count(strings.TrimSpace(list), "\n") + 1; n != rounds {
		t.Errorf("state list has %d addresses, want %d:\n%s", n, rounds, list)
	}
	a.mustRun(0, "plan", "--detailed-exitcode")
	b.mustRun(0, "plan", "--detailed-exitcode")
	if refused := tally["no --lock-timeout: the other was refused naming the holder"]; refused == 0 {
		t.Errorf("in no round without --lock-timeout did the two applies overlap: %v", tally)
	}
	noStateFiles(t, a, b)
	var parts []string
	for k, v := range tally {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	summary := fmt.Sprintf("pg two applies at once: %d rounds in %s; duplicates 0 on %d devices (each received %d, every title once); %s",
		rounds, elapsed.Round(time.Second), users, rounds, strings.Join(parts, "; "))
	t.Log(summary)
	fmt.Println(summary)
}

func (o applyOutcome) String() string {
	return [...]string{"sent", "nothing to send", "refused"}[o]
}

// waitUntil polls cond until it holds, at most d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPGKillThenApplyFromOtherCheckout kills an apply with SIGKILL in the
// middle of sending, then applies from the other checkout: it takes the
// lock at once (the server released it with the killed run's connection),
// names the dead holder, and carries on from the journal rows the killed
// run wrote. Twice (A killed, then B), then A finishes: nothing lost,
// nothing shown twice.
func TestPGKillThenApplyFromOtherCheckout(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, crashSeed, "--latency", "100ms", "--quiet")
	campaign := crashCampaign(1) // 40 requests: tagged, untagged, packed small ones, a badge
	a := newPGWorkspace(t, sb, campaign, p)
	b := newPGWorkspace(t, sb, campaign, p)
	apply := []string{"apply", "--auto-approve", "--parallelism", "4", "--json"}

	var notes []string
	killedPid := 0
	for i, w := range []*workspace{a, b} {
		name := string(rune('A' + i))
		before := sb.stats().SendRequests
		proc := w.startProc(apply...)
		// Mid-send: the sandbox has received some of this run's requests.
		waitUntil(t, 2*time.Minute, "checkout "+name+"'s apply sending 6 requests", func() bool { return sb.stats().SendRequests >= before+6 })
		if killedPid != 0 {
			// This run took the lock at once (no --lock-timeout) and said
			// who had died holding it.
			if want := "(pid " + itoa(killedPid) + ") running apply"; !strings.Contains(proc.stderr.String(), "ended without releasing it") || !strings.Contains(proc.stderr.String(), want) {
				t.Errorf("checkout %s's apply did not name the killed holder (pid %d):\n%s", name, killedPid, proc.stderr)
			}
		}
		if !proc.kill(syscall.SIGKILL) {
			t.Fatalf("checkout %s's apply ended before the kill:\n%s", name, proc.stderr)
		}
		sent := sb.stats().SendRequests - before
		pid, backendPid, found := p.lockRow()
		if !found || pid != proc.cmd.Process.Pid {
			t.Fatalf("the killed apply (pid %d) left no lock row of its own (found %v, pid %d)", proc.cmd.Process.Pid, found, pid)
		}
		// The server ends the session when it reads the closed socket,
		// and with it the lock: the next run needs no unlock and no wait.
		gone := p.waitSessionGone(backendPid)
		notes = append(notes, fmt.Sprintf("%s killed after %d requests reached the sandbox (server ended its session %s after the kill)", name, sent, gone.Round(time.Millisecond)))
		killedPid = proc.cmd.Process.Pid
	}
	// A again: no --lock-timeout, no force-unlock.
	r := a.mustRun(0, "apply", "--auto-approve", "--parallelism", "4")
	if !strings.Contains(r.stderr, "(pid "+itoa(killedPid)+") running apply") {
		t.Errorf("the last apply did not name the killed holder (pid %d):\n%s", killedPid, r.stderr)
	}
	plan := a.mustRun(0, "plan", "--detailed-exitcode", "--json")
	b.mustRun(0, "plan", "--detailed-exitcode")

	au := auditCrashTargets(t, p, sb, plan.stdout)
	noStateFiles(t, a, b)
	summary := fmt.Sprintf("pg kill -9 then apply from the other checkout: %s; then A finished. %d targets: delivered %d, lost %d, shown twice %d, "+
		"unknown untagged held %d (%d of them reached the device), tagged copies replaced on devices %d",
		strings.Join(notes, "; "), au.targets, au.delivered, au.lost, au.dups, au.held, au.heldReached, au.retried)
	t.Log(summary)
	fmt.Println(summary)
}

// crashAudit counts the crash campaign's targets against what their
// devices show.
type crashAudit struct {
	targets, delivered, held, heldReached, retried, lost, dups int
}

// auditCrashTargets checks every target of crashTargets(0) in p's state
// against its device: none lost, none shown twice, and the unknown
// untagged ones held by plan (plan --json output).
func auditCrashTargets(t *testing.T, p *pgState, sb *sandbox, planJSON string) crashAudit {
	t.Helper()
	// Every target against what its device shows.
	st := p.read(t)
	targets := crashTargets(0)
	var devIDs []string
	seen := map[string]bool{}
	for _, ct := range targets {
		if !seen[ct.device] {
			seen[ct.device] = true
			devIDs = append(devIDs, ct.device)
		}
	}
	devs := sb.devices(devIDs)
	var delivered, held, heldReached, retried, lost, dups int
	for _, ct := range targets {
		m := st.Messages[ct.addr]
		if m == nil {
			t.Fatalf("%s is not in the state", ct.addr)
		}
		tg, ok := m.Targets[ct.id]
		dev := devs[ct.device]
		shown := 0
		for _, e := range dev.Inbox {
			if ct.badge < 0 && e.Title == ct.title {
				shown++
			}
		}
		switch {
		case !ok:
			lost++
		case tg.Outcome == state.Delivered && ct.badge >= 0:
			delivered++
			if dev.Badge == nil || *dev.Badge != ct.badge {
				lost++
			}
		case tg.Outcome == state.Delivered:
			delivered++
			if shown == 0 {
				lost++
			}
		case tg.Outcome == state.Unknown && !ct.tagged:
			held++
			if shown > 0 {
				heldReached++
			}
		default:
			t.Errorf("%s %s: outcome %s (tagged %v)", ct.addr, ct.id, tg.Outcome, ct.tagged)
		}
		if shown > 1 {
			if dups++; dups <= 5 {
				t.Errorf("%s shows %q %d times", ct.device, ct.title, shown)
			}
		}
	}
	for id, d := range devs {
		tags := map[string]int{}
		for _, e := range d.Inbox {
			if e.Tag == "" {
				continue
			}
			if tags[e.Tag]++; tags[e.Tag] == 2 {
				dups++
				t.Errorf("%s shows tag %s twice", id, e.Tag)
			}
		}
		retried += max(0, d.Received-len(d.Inbox)) // replaced under the same tag
	}
	if lost > 0 || dups > 0 {
		t.Errorf("%d targets lost, %d shown twice", lost, dups)
	}
	heldInPlan := 0
	for _, n := range jsonPlanHeld(t, planJSON) {
		heldInPlan += n
	}
	if heldInPlan != held {
		t.Errorf("the plan holds %d targets, the state has %d unknown untagged", heldInPlan, held)
	}
	return crashAudit{len(targets), delivered, held, heldReached, retried, lost, dups}
}

// TestPGStatePushThenNoChanges moves a file state to PostgreSQL as a team
// would: state push, then plan has nothing to do, from this checkout and
// from another.
func TestPGStatePushThenNoChanges(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, slowSeed)
	campaign := `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "from a file state"
}
` + sUsers("news", 1000)
	w := newWorkspace(t, sb, campaign)
	w.apply()
	fileState := w.readState()
	before := sb.stats()

	w.usePG(p)
	r := w.mustRun(0, "state", "push", "pushform.state")
	if !regexp.MustCompile(`Pushed \S*pushform.state to PostgreSQL state "team"`).MatchString(r.stdout) || !strings.Contains(r.stdout, "lineage "+fileState.Lineage) {
		t.Fatalf("state push:\n%s", r.stdout)
	}
	// The files are no longer read: take them away (the state, its backup
	// and lock files), as the README says.
	old, _ := filepath.Glob(filepath.Join(w.dir, "pushform.state*"))
	keep := t.TempDir()
	for _, f := range old {
		if err := os.Rename(f, filepath.Join(keep, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	r = w.mustRun(0, "plan", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("plan after state push:\n%s", r.stdout)
	}
	other := newPGWorkspace(t, sb, campaign, p)
	other.mustRun(0, "plan", "--detailed-exitcode")
	other.mustRun(0, "apply", "--auto-approve")
	if after := sb.stats(); after != before {
		t.Fatalf("something was sent after the push: %+v, then %+v", before, after)
	}
	got := p.read(t)
	if got.Lineage != fileState.Lineage || len(got.Messages) != len(fileState.Messages) {
		t.Errorf("the pushed state has lineage %s and %d addresses, the file %s and %d", got.Lineage, len(got.Messages), fileState.Lineage, len(fileState.Messages))
	}
	checkReceived(t, sb, 1000, 1, "news")

	// Another file state (another lineage) is refused without --force.
	stranger := newWorkspace(t, sb, `
notification "x" {
  user_ids = ["carol"]
  title    = "X"
  body     = "x"
}
`)
	stranger.apply()
	data, err := os.ReadFile(filepath.Join(stranger.dir, "pushform.state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "stranger.state"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	r = w.mustRun(1, "state", "push", "stranger.state")
	if !strings.Contains(r.stderr, "holds another state") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("state push of another lineage:\n%s", r.stderr)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	noStateFiles(t, w, other)
}

// TestPGLeavesNoStateFiles: with a backend "pg" block, plan, apply and the
// state commands write no pushform.state* file into the directory.
func TestPGLeavesNoStateFiles(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, seed)
	w := newPGWorkspace(t, sb, `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "no files"
  tag      = "hello"
}
`, p)
	for _, c := range []struct {
		code int
		args []string
	}{
		{0, []string{"plan"}},
		{0, []string{"plan", "--out", "hello.plan"}},
		{0, []string{"apply", "hello.plan"}},
		{0, []string{"apply", "--auto-approve", "--replace", "notification.hello"}},
		{0, []string{"plan", "--detailed-exitcode"}},
		{0, []string{"state", "list"}},
		{0, []string{"state", "show", "notification.hello"}},
		{0, []string{"state", "rm", "notification.hello"}},
		{2, []string{"plan", "--detailed-exitcode"}},
		{1, []string{"force-unlock", "--force", "0123456789abcdef"}},
	} {
		w.mustRun(c.code, c.args...)
		noStateFiles(t, w)
	}
}

// The crash test (kill -9 at random moments, 24 times or more) and the
// lock test with the state in PostgreSQL.
//
// The PostgreSQL tests run in parallel with each other (after the other
// tests of the package): each has its own sandbox and schema, and they
// mostly wait on the sandbox's latency, so the package stays well within
// go test's default 10 minutes on a busy machine.
func TestCrashRecoveryPG(t *testing.T) {
	t.Parallel()
	crashRecoveryRandomKills(t, newPGState(t))
}

func TestSecondApplyIsRefusedOrWaitsPG(t *testing.T) {
	t.Parallel()
	secondApplyIsRefusedOrWaits(t, newPGState(t))
}

// pgExample points the backend "pg" block of the example copied into dir,
// if it has one, at a schema of the test's own on the test server, and
// returns the environment variable that reaches it. Without a block it
// returns nil; without a reachable server it skips the test (pgtest), so
// an example keeping its state in PostgreSQL still runs in every test.
func pgExample(t *testing.T, dir string) []string {
	t.Helper()
	be, diags := config.NewLoader().LoadBackend(dir)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", dir, diags.Error())
	}
	if be == nil {
		return nil
	}
	pc, diags := backend.DecodePG(be)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", dir, diags.Error())
	}
	p := newPGState(t)
	path := filepath.Join(dir, be.Pos.Filename)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, d := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if d.HasErrors() {
		t.Fatal(d.Error())
	}
	if body := f.Body.(*hclsyntax.Body); len(body.Blocks) != 1 || len(body.Attributes) != 0 {
		t.Fatalf("%s: keep an example's backend block alone in its file, so that tests can point it at the test database", path)
	}
	block := fmt.Sprintf("backend %q {\n  conn_str_env = %q\n  schema_name  = %q\n  state_name   = %q\n}\n", be.Type, pc.ConnStrEnv, p.schema, pc.StateName)
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{pc.ConnStrEnv + "=" + p.url}
}
