package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// guardsSeed has 1,500 users g0000.. with one device each, gd0000...
const guardsSeed = `
api_key "k-test-canary-0123456789" { environment = "test" }
user_range "g%04d" {
  count       = 1500
  device      = "gd%04d"
  environment = "test"
}
`

// users is an HCL expression for the ids g0000..g(n-1).
func guardUsers(n int) string {
	return fmt.Sprintf(`[for i in range(%d) : format("g%%04d", i)]`, n)
}

// received sums what devices gd0000..gd(n-1) were shown.
func guardReceived(sb inboxes, n int) int {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("gd%04d", i)
	}
	total := 0
	for _, d := range sb.devices(ids) {
		total += d.Received
	}
	return total
}

const welcomeBlock = `
notification "welcome" {
  user_ids = %s
  title    = "Welcome"
  body     = "Glad you are here"
  tag      = "welcome"
}
`

// TestRenameWithoutMovedBlock: a renamed notification with the same
// content sends nothing (the ledger knows every target has it); renamed
// with an edit, it is a forget and a create every view warns about with
// the moved block to paste, and apply refuses the plan, fresh or saved,
// sending nothing. --allow-resend sends it.
func TestRenameWithoutMovedBlock(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(welcomeBlock, guardUsers(100)))
	w.apply()
	renamed := strings.Replace(fmt.Sprintf(welcomeBlock, guardUsers(100)), `"welcome"`, `"welcome_v2"`, 1)
	w.write(renamed, sb)
	if a, tg := w.planJSON().action("notification.welcome_v2"); a != "already-delivered" || tg["already_delivered"] != 100 {
		t.Fatalf("a rename with the same content: %s %v", a, tg)
	}
	w.write(strings.Replace(renamed, "Glad you are here", "Glad you are here!", 1), sb)
	before := sb.stats()

	block := "moved {\n  from = notification.welcome\n  to   = notification.welcome_v2\n}\n"
	human := w.mustRun(0, "plan").stdout
	if !strings.Contains(human, "looks like a rename of notification.welcome") || !strings.Contains(human, "    moved {\n      from = notification.welcome\n      to   = notification.welcome_v2\n    }\n") {
		t.Errorf("plan does not warn with the block to paste:\n%s", human)
	}
	md := w.mustRun(0, "plan", "--markdown").stdout
	if !strings.Contains(md, "```hcl\n"+block+"```") || !strings.Contains(md, "looks like a rename of notification.welcome") {
		t.Errorf("markdown plan:\n%s", md)
	}
	var doc struct {
		Warnings []string
		Renames  []struct {
			From, To   string
			Targets    int
			MovedBlock string `json:"moved_block"`
		}
	}
	if err := json.Unmarshal([]byte(w.mustRun(0, "plan", "--json").stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Renames) != 1 || doc.Renames[0].MovedBlock != block || doc.Renames[0].Targets != 100 || len(doc.Warnings) != 1 {
		t.Errorf("plan --json: %+v", doc)
	}

	r := w.mustRun(1, "apply", "--auto-approve")
	for _, want := range []string{"looks like a rename of notification.welcome", block, "--allow-resend", "Nothing was sent"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("apply's refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	r = w.mustRun(0, "plan", "--out", "rename.plan")
	if !strings.Contains(r.stdout, "but apply will refuse it") || !strings.Contains(r.stdout, "plan with --allow-resend") ||
		strings.Contains(r.stdout, "To send exactly these notifications") {
		t.Errorf("plan --out of a plan apply refuses does not say why:\n%s", r.stdout)
	}
	r = w.mustRun(1, "apply", "rename.plan")
	if !strings.Contains(r.stderr, "looks like a rename") || !strings.Contains(r.stderr, "make the plan with --allow-resend") {
		t.Errorf("a saved plan was not refused:\n%s", r.stderr)
	}
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("a refused apply sent %d requests", after.SendRequests-before.SendRequests)
	}
	if s := w.readState(); s.Messages["notification.welcome"] == nil || s.Messages["notification.welcome_v2"] != nil {
		t.Errorf("a refused apply changed the state: %v", s.Addresses())
	}

	// Sending it on purpose, decided in the reviewed plan.
	if r := w.mustRun(0, "plan", "--allow-resend", "--out", "resend.plan"); !strings.Contains(r.stdout, "To send exactly these notifications") {
		t.Errorf("plan --allow-resend --out:\n%s", r.stdout)
	}
	w.mustRun(0, "apply", "resend.plan")
	if got := guardReceived(sb, 100); got != 200 {
		t.Errorf("devices were shown %d notifications, want 200 after --allow-resend", got)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestRenameOfForEachKey: a for_each key that changes with the same
// content sends nothing; with an edit it is guarded as a rename.
func TestRenameOfForEachKey(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	cfg := `
notification "order" {
  for_each = toset(["%s"])
  user_ids = ["g0001", "g0002"]
  title    = "Your order shipped"
  body     = "%s"
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(cfg, "A-1", "It arrives Tuesday"))
	w.apply()
	w.write(fmt.Sprintf(cfg, "a-1", "It arrives Tuesday."), sb)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "moved {\n  from = notification.order[\"A-1\"]\n  to   = notification.order[\"a-1\"]\n}") {
		t.Errorf("apply's refusal:\n%s", r.stderr)
	}
	w.write(fmt.Sprintf(cfg, "a-1", "It arrives Tuesday"), sb)
	w.apply()
	if got := guardReceived(sb, 3); got != 2 {
		t.Errorf("devices were shown %d notifications, want 2", got)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestMovedBlock: with the moved block the plan says the notification has
// moved and sends nothing; apply records the move; the next plan has no
// changes.
func TestMovedBlock(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(welcomeBlock, guardUsers(100)))
	w.apply()
	before := sb.stats()
	w.write(`
moved {
  from = notification.welcome
  to   = campaign.onboarding.notification.welcome
}

campaign "onboarding" {`+strings.ReplaceAll(fmt.Sprintf(welcomeBlock, guardUsers(100)), "\n", "\n  ")+`}
`, sb)
	r := w.mustRun(2, "plan", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "→ notification.welcome has moved to campaign.onboarding.notification.welcome") ||
		!strings.Contains(r.stdout, "1 to move") || !strings.Contains(r.stdout, "0 targets in 0 requests") {
		t.Errorf("plan:\n%s", r.stdout)
	}
	md := w.mustRun(0, "plan", "--markdown").stdout
	if !strings.Contains(md, "`notification.welcome` has moved to `campaign.onboarding.notification.welcome`") || !strings.Contains(md, "- `→` `campaign.onboarding.notification.welcome` **move**") {
		t.Errorf("markdown:\n%s", md)
	}
	p := w.planJSON()
	if a, _ := p.action("campaign.onboarding.notification.welcome"); a != "moved" || p.Summary["moved"] != 1 || p.Summary["targets"] != 0 {
		t.Errorf("plan --json: %s %v", a, p.Summary)
	}
	r = w.apply()
	if !strings.Contains(r.stdout, "moved notification.welcome to campaign.onboarding.notification.welcome (state only)") {
		t.Errorf("apply:\n%s", r.stdout)
	}
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Errorf("the move sent %d requests", after.SendRequests-before.SendRequests)
	}
	s := w.readState()
	if s.Messages["notification.welcome"] != nil || s.Messages["campaign.onboarding.notification.welcome"] == nil ||
		len(s.Messages["campaign.onboarding.notification.welcome"].Targets) != 100 {
		t.Errorf("state after the move: %v", s.Addresses())
	}
	if r := w.mustRun(0, "plan", "--detailed-exitcode"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("second plan:\n%s", r.stdout)
	}
	if got := guardReceived(sb, 100); got != 100 {
		t.Errorf("devices were shown %d notifications, want 100", got)
	}
}

// TestStateMv: state mv does what the moved block does, without one.
func TestStateMv(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(welcomeBlock, guardUsers(100)))
	w.apply()
	w.write(`campaign "onboarding" {`+strings.ReplaceAll(fmt.Sprintf(welcomeBlock, guardUsers(100)), "\n", "\n  ")+"}\n", sb)
	before := sb.stats()
	r := w.mustRun(1, "state", "mv", "notification.nope", "campaign.onboarding.notification.welcome")
	if !strings.Contains(r.stderr, "no address notification.nope in the state") {
		t.Errorf("unknown FROM:\n%s", r.stderr)
	}
	r = w.mustRun(1, "state", "mv", "notification.welcome", "badge.welcome")
	if !strings.Contains(r.stderr, "a notification moves to a notification") {
		t.Errorf("another kind:\n%s", r.stderr)
	}
	r = w.mustRun(0, "state", "mv", "notification.welcome", "campaign.onboarding.notification.welcome")
	if !strings.Contains(r.stdout, "Moved notification.welcome to campaign.onboarding.notification.welcome") || !strings.Contains(r.stdout, "Nothing was sent") {
		t.Errorf("state mv:\n%s", r.stdout)
	}
	if r := w.mustRun(0, "plan", "--detailed-exitcode"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("plan after state mv:\n%s", r.stdout)
	}
	w.write(fmt.Sprintf(welcomeBlock, guardUsers(100)), sb)
	r = w.mustRun(1, "state", "mv", "campaign.onboarding.notification.welcome", "campaign.onboarding.notification.welcome")
	if !strings.Contains(r.stderr, "the same address") {
		t.Errorf("same address:\n%s", r.stderr)
	}
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Errorf("state mv sent %d requests", after.SendRequests-before.SendRequests)
	}
}

// TestSendBeforePassed: once send_before has passed (--now ahead, in the
// embedded sandbox), the targets not delivered expire: the plan lists
// them, apply sends nothing.
func TestSendBeforePassed(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	_, at := aheadOfClock()
	opens, closes := at(16*time.Hour), at(18*time.Hour)
	w := newWorkspace(t, sb, `
notification "flash" {
  user_ids    = `+guardUsers(50)+`
  title       = "Flash sale"
  body        = "Two hours only"
  tag         = "flash"
  send_after  = "`+opens+`"
  send_before = "`+closes+`"
}
`)
	if a, tg := w.planJSON("--now", at(15*time.Hour)).action("notification.flash"); a != "wait" || tg["waiting"] != 50 {
		t.Errorf("before the window: %s %v", a, tg)
	}
	p := w.planJSON("--now", closes)
	if a, tg := p.action("notification.flash"); a != "expired" || tg["expired"] != 50 || tg["send"] != 0 || p.Summary["expired_targets"] != 50 {
		t.Errorf("after the window: %s %v %v", a, tg, p.Summary)
	}
	r := w.mustRun(0, "plan", "--detailed-exitcode", "--now", closes)
	if !strings.Contains(r.stdout, "⌛ notification.flash has expired (send_before "+closes+" passed): 50 users not delivered, never sent") {
		t.Errorf("plan:\n%s", r.stdout)
	}
	w.apply("--now", closes)
	if got := guardReceived(sb, 50); got != 0 || sb.requests() != 0 {
		t.Errorf("an expired notification was shown %d times", got)
	}
}

// TestRetriesStopAtWindowEnd: a service failing every request is retried
// until the window closes, not after; the targets are recorded failed (or
// unknown), and a later plan lists them expired.
func TestRetriesStopAtWindowEnd(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet", "--fail-rate", "1")
	// The window closes 3 to 4 seconds from now, on the real clock apply
	// checks it at.
	closesAt := time.Now().UTC().Add(4 * time.Second).Truncate(time.Second)
	closes, after := closesAt.Format(time.RFC3339), closesAt.Add(time.Minute).Format(time.RFC3339)
	w := newWorkspace(t, sb, `
notification "flash" {
  user_ids    = `+guardUsers(10)+`
  title       = "Flash sale"
  body        = "Two hours only"
  tag         = "flash"
  send_before = "`+closes+`"
}
`)
	start := time.Now()
	r := w.mustRun(1, "apply", "--auto-approve", "--max-attempts", "30", "--retry-delay", "500ms", "--retry-max-delay", "1s")
	took := time.Since(start)
	if !strings.Contains(r.stdout+r.stderr, "the delivery window closed at "+closes) {
		t.Errorf("apply:\n%s\n%s", r.stdout, r.stderr)
	}
	// Every try waits at least 500ms (503s ask for 1s): 30 tries would take
	// 15s or more, the window allows about 3s.
	if n := sb.stats().SendRequests; n < 2 || n > 8 {
		t.Errorf("%d requests within a 3-second window", n)
	}
	if took > 20*time.Second {
		t.Errorf("apply took %s: it did not stop at the window's end", took)
	}
	s := w.readState()
	for id, tg := range s.Messages["notification.flash"].Targets {
		if tg.Outcome == "delivered" || tg.Outcome == "skipped" {
			t.Errorf("%s: %s", id, tg.Outcome)
		}
	}
	p := w.planJSON("--now", after)
	if a, tg := p.action("notification.flash"); a != "expired" || tg["expired"] != 10 {
		t.Errorf("plan after the window: %s %v", a, tg)
	}
	// Once the window has closed by the real clock (apply stops before
	// it when no try fits in what is left), apply sends nothing.
	time.Sleep(time.Until(closesAt))
	n := sb.stats().SendRequests
	w.apply()
	if sb.stats().SendRequests != n {
		t.Error("an expired notification was retried")
	}
}

// sendLog records when each send request reached the service and how many
// targets it carried, through a proxy in front of the sandbox.
type sendLog struct {
	mu   sync.Mutex
	reqs []loggedSend
}

type loggedSend struct {
	at        time.Time
	targets   int
	requestID string
}

func (l *sendLog) proxy(t *testing.T, sb *sandbox) string {
	target, _ := url.Parse(sb.root)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if n, ok := resp.Request.Context().Value(sendKey{}).(*loggedSend); ok {
			n.requestID = resp.Header.Get("x-request-id")
			l.mu.Lock()
			l.reqs = append(l.reqs, *n)
			l.mu.Unlock()
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/push-notifications/send") {
			at := time.Now()
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var batch []struct {
				UserIDs []string `json:"userIds"`
			}
			json.Unmarshal(body, &batch)
			n := 0
			for _, x := range batch {
				n += len(x.UserIDs)
			}
			r = r.WithContext(guardContext(r, &loggedSend{at: at, targets: n}))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// maxInWindow is the most targets that reached the service within any
// window of length w.
func (l *sendLog) maxInWindow(w time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Slice(l.reqs, func(i, j int) bool { return l.reqs[i].at.Before(l.reqs[j].at) })
	most := 0
	for i := range l.reqs {
		n := 0
		for j := i; j < len(l.reqs) && l.reqs[j].at.Sub(l.reqs[i].at) < w; j++ {
			n += l.reqs[j].targets
		}
		most = max(most, n)
	}
	return most
}

// pacedWorkspace is a workspace whose service is reached through log's
// proxy, with a campaign paced at rate reaching users g0000..g(n-1).
func pacedWorkspace(t *testing.T, sb *sandbox, log *sendLog, rate string, n int) *workspace {
	w := newWorkspace(t, sb, "")
	svc := fmt.Sprintf("service {\n  base_url    = %q\n  api_key_env = \"PF_KEY\"\n  environment = \"test\"\n}\n", log.proxy(t, sb))
	campaign := fmt.Sprintf(`
campaign "black_friday" {
  send_rate = %q
  notification "doors_open" {
    user_ids = %s
    title    = "Doors open"
    body     = "Black Friday starts now"
    tag      = "bf-2026"
  }
}
`, rate, guardUsers(n))
	if err := os.WriteFile(w.dir+"/main.hcl", []byte(svc+campaign), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSendRate: send_rate = "600/minute" on 150 targets (the numbers
// lowered from 1,500 so the test takes seconds, not minutes; the executor's
// tests pace 1,500 on a fake clock): measured where the requests reach the
// service, no 10-second window holds more than 100 targets plus one
// request's worth, and the run is paced over about 14 s. The sandbox's own
// log has every request the proxy saw.
func TestSendRate(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	log := &sendLog{}
	w := pacedWorkspace(t, sb, log, "600/minute", 150)
	r := w.mustRun(0, "plan")
	if !strings.Contains(r.stdout, "Pacing: campaign.black_friday sends 150 targets at 600/minute, in 15 requests, taking about 15s.") ||
		!strings.Contains(r.stdout, "paced over about 15s") {
		t.Errorf("plan:\n%s", r.stdout)
	}
	r = w.apply("--json")
	if n := strings.Count(r.stdout, `"type":"pacing"`); n < 10 {
		t.Errorf("%d pacing events for 15 paced requests:\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stdout, `"group":"campaign.black_friday","rate":"600/minute"`) {
		t.Errorf("pacing events do not name the group and rate:\n%s", r.stdout)
	}
	if len(log.reqs) != 15 {
		t.Fatalf("%d requests reached the service, want 15", len(log.reqs))
	}
	if most := log.maxInWindow(10 * time.Second); most > 100+10 {
		t.Errorf("%d targets reached the service within 10 s; send_rate allows 100 (+10 for one request)", most)
	}
	if span := log.reqs[len(log.reqs)-1].at.Sub(log.reqs[0].at); span < 13*time.Second {
		t.Errorf("the paced run took %s, want about 14s", span)
	}
	// The sandbox's log agrees with what the proxy saw.
	total := 0
	for _, q := range log.reqs {
		var entry struct {
			Body []struct {
				UserIDs []string `json:"userIds"`
			} `json:"body"`
		}
		sb.get("/_sandbox/log/"+q.requestID, &entry)
		n := 0
		for _, x := range entry.Body {
			n += len(x.UserIDs)
		}
		if n != q.targets {
			t.Errorf("request %s: the sandbox logged %d targets, the proxy saw %d", q.requestID, n, q.targets)
		}
		total += n
	}
	if total != 150 || guardReceived(sb, 150) != 150 {
		t.Errorf("%d targets logged, %d received; want 150", total, guardReceived(sb, 150))
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestPacedInterruptResumes: an interrupted paced apply stops, records the
// requests that went, and the next apply sends exactly the rest.
func TestPacedInterruptResumes(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	log := &sendLog{}
	w := pacedWorkspace(t, sb, log, "600/minute", 100)
	p := w.startProc("apply", "--auto-approve", "--json")
	for range 3 {
		if _, ok := p.waitLine(`"type":"response"`, 30*time.Second); !ok {
			t.Fatalf("apply sent nothing:\n%s", p.stderr)
		}
	}
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.wait(30 * time.Second); code != 1 {
		t.Fatalf("exit %d after an interrupt\n%s\n%s", code, p.stdout, p.stderr)
	}
	sent := guardReceived(sb, 100)
	if sent < 30 || sent >= 100 || !strings.Contains(p.stderr.String(), "were not sent") {
		t.Fatalf("%d sent before the interrupt\n%s", sent, p.stderr)
	}
	delivered := 0
	for _, tg := range w.readState().Messages["campaign.black_friday.notification.doors_open"].Targets {
		if tg.Outcome == "delivered" {
			delivered++
		} else {
			t.Errorf("a target recorded %s", tg.Outcome)
		}
	}
	if delivered != sent {
		t.Errorf("%d recorded delivered, %d received", delivered, sent)
	}
	if a, tg := w.planJSON().action("campaign.black_friday.notification.doors_open"); a != "send-new" || tg["send"] != 100-sent {
		t.Errorf("plan after the interrupt: %s %v", a, tg)
	}
	w.apply()
	if got := guardReceived(sb, 100); got != 100 {
		t.Errorf("devices were shown %d notifications, want each once (100)", got)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestFrequencyCap: a cap of 1 per 24h across two notifications to the
// same 100 users: the second is held for all of them; plan --now a day
// after the first delivery shows it going then. In the embedded sandbox,
// apply --now later that day still holds it, and a day later sends it:
// each device shows one a day.
func TestFrequencyCap(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	w := newWorkspace(t, sb, `
frequency_cap {
  max = 1
  per = "24h"
}

notification "a_launch" {
  user_ids = `+guardUsers(100)+`
  title    = "Launch"
  body     = "It is here"
}

notification "b_reminder" {
  user_ids = `+guardUsers(100)+`
  title    = "Reminder"
  body     = "Have you tried it?"
}

badge "reset" {
  user_ids    = `+guardUsers(100)+`
  badge_count = 0
}
`)
	_, at := aheadOfClock()
	day1, day1Later, day2 := at(0), at(11*time.Hour), at(24*time.Hour+time.Second)
	p := w.planJSON("--now", day1)
	if a, tg := p.action("notification.b_reminder"); a != "capped" || tg["capped"] != 100 || tg["send"] != 0 {
		t.Errorf("second notification: %s %v", a, tg)
	}
	if a, tg := p.action("notification.a_launch"); a != "create" || tg["send"] != 100 {
		t.Errorf("first notification: %s %v", a, tg)
	}
	if a, tg := p.action("badge.reset"); a != "create" || tg["send"] != 100 {
		t.Errorf("a badge was capped: %s %v", a, tg)
	}
	if p.Summary["capped"] != 1 || p.Summary["capped_targets"] != 100 {
		t.Errorf("summary %v", p.Summary)
	}
	r := w.apply("--now", day1)
	if !strings.Contains(r.stdout, "⊘ notification.b_reminder is held back by frequency_cap: 100 users, sent once the cap allows") {
		t.Errorf("apply:\n%s", r.stdout)
	}
	if got := guardReceived(sb, 100); got != 100 { // the launch; a badge update is not shown
		t.Errorf("devices were shown %d, want 100", got)
	}
	r = w.mustRun(0, "plan", "--detailed-exitcode", "--now", day1Later)
	if !strings.Contains(r.stdout, "100 targets are held back by frequency_cap") {
		t.Errorf("later that day:\n%s", r.stdout)
	}
	if a, tg := w.planJSON("--now", day2).action("notification.b_reminder"); a != "create" || tg["send"] != 100 {
		t.Errorf("a day later: %s %v", a, tg)
	}
	// Later that day the cap holds; a day after the first delivery it
	// lets the reminder through.
	r = w.apply("--now", day1Later)
	if !strings.Contains(r.stdout, "⊘ notification.b_reminder is held back by frequency_cap: 100 users") {
		t.Errorf("apply --now later that day:\n%s", r.stdout)
	}
	if got := guardReceived(sb, 100); got != 100 {
		t.Errorf("devices were shown %d within the day, want 100", got)
	}
	w.apply("--now", day2)
	if got := guardReceived(sb, 100); got != 200 {
		t.Errorf("devices were shown %d after a day, want 200 (one a day each)", got)
	}
	launched := w.readState().Messages["notification.a_launch"].Target("g0000").Time
	if reminded := w.readState().Messages["notification.b_reminder"].Target("g0000").Time; reminded.Sub(launched) < 24*time.Hour {
		t.Errorf("g0000 was sent the launch at %s and the reminder at %s: within the cap's day", launched, reminded)
	}
}

// TestMaxTargets: a plan that would reach more than max_targets fails with
// a diagnostic at the attribute, before anything is sent; a list known at
// validate time fails there too, one from recipients when it is fetched.
func TestMaxTargets(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	for _, c := range []struct {
		name, cfg, want string
	}{
		{"a literal list", `
notification "big" {
  user_ids    = ` + guardUsers(100) + `
  title       = "Big"
  body        = "Audience"
  max_targets = 50
}
`, "notification.big reaches 100 targets; max_targets is 50"},
		{"the recipients", `
data "recipients" "all" {}

campaign "launch" {
  max_targets = 1000

  notification "everyone" {
    user_ids = data.recipients.all.user_ids
    title    = "Launch"
    body     = "It is here"
  }
}
`, "campaign.launch reaches 1500 targets over its 1 message; max_targets is 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkspace(t, sb, c.cfg)
			for _, cmd := range [][]string{{"plan"}, {"apply", "--auto-approve"}} {
				r := w.mustRun(1, cmd...)
				if !strings.Contains(r.stderr, "Error: Audience over max_targets") || !strings.Contains(r.stderr, c.want) ||
					!strings.Contains(r.stderr, "on main.hcl line ") || !strings.Contains(r.stderr, "max_targets = ") {
					t.Errorf("%v:\n%s", cmd, r.stderr)
				}
				if n := strings.Count(r.stderr, "Audience over max_targets"); n != 1 {
					t.Errorf("%v reports it %d times:\n%s", cmd, n, r.stderr)
				}
			}
			if n := sb.stats().SendRequests; n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

type sendKey struct{}

func guardContext(r *http.Request, v *loggedSend) context.Context {
	return context.WithValue(r.Context(), sendKey{}, v)
}
