package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/state/statefile"
)

// Holes found by trying the promises of issue 37 with features combined
// (h/adv). Each test fails on the commit before its fix.

// TestScheduledRepeatReadFromDataAwaitsReview: repeat_after written as a
// condition on a data source (`length(data...) >= 0 ? "7d" : "1d"`) was
// in the shape as "unknown, read from data.recipients.all", so editing
// its literal to "1h" changed nothing a reviewer approved: three
// scheduled runs an hour apart put 4 copies on each device. Now the
// shape holds how such a value is computed: the runs await review (exit
// 4), one copy each.
func TestScheduledRepeatReadFromDataAwaitsReview(t *testing.T) {
	sb := startEmbedded(t, seed)
	const block = `
data "recipients" "all" {}
notification "weekly" {
  user_ids     = data.recipients.all.user_ids
  title        = "Weekly"
  body         = "Our picks"
  repeat_after = length(data.recipients.all.user_ids) >= 0 ? "%s" : "1d"
}
`
	w := newWorkspace(t, sb, strings.Replace(block, "%s", "7d", 1))
	w.apply("--now", "2030-01-01T00:00:00Z")
	w.write(strings.Replace(block, "%s", "1h", 1), sb)
	var codes []int
	for _, at := range []string{"2030-01-01T01:00:01Z", "2030-01-01T02:00:02Z", "2030-01-01T03:00:03Z"} {
		r := w.run("apply", "--scheduled", "--now", at)
		codes = append(codes, r.code)
		if r.code == 4 && !strings.Contains(r.stdout, "notification.weekly: changed since the reviewed apply") {
			t.Errorf("apply --scheduled does not say why:\n%s", r.stdout)
		}
	}
	received := sb.device("alice-phone").Received
	t.Logf("figures: 3 scheduled runs an hour apart after repeat_after 7d -> 1h behind a data source: exit codes %v, alice-phone received %d", codes, received)
	for _, c := range codes {
		if c != 4 {
			t.Errorf("apply --scheduled exited %d, want 4", c)
		}
	}
	if received != 1 {
		t.Errorf("alice-phone received %d, want 1: unreviewed repeats went out", received)
	}
}

// TestScheduledAfterListFailsHalfway: a reviewed apply (--auto-approve,
// so it streams) whose recipients list broke off on page 3 sent the
// first two pages, and then the cron's apply --scheduled released
// nothing, saying "the state was written before pushform recorded
// reviewed shapes" of a state one run old (exit 4): the shapes were
// recorded only once the plan was whole, never when the list broke off.
// Now a streamed apply accepts its shapes before its first request, as
// apply does: the scheduled run sends the rest, once each.
func TestScheduledAfterListFailsHalfway(t *testing.T) {
	sb := startSandbox(t, rangeSeed(3000), "--recipients-paging", "header", "--recipients-fault", "503x5@3")
	w := newWorkspace(t, sb, launchCampaign)
	w.mustRun(1, "apply", "--auto-approve")
	sent := sb.stats().Deliveries
	code, _, targets, r := w.scheduled(sb)
	t.Logf("figures: the reviewed apply sent %d before the list broke off; apply --scheduled then exited %d and sent %d", sent, code, targets)
	if code != 0 || targets != 3000-sent {
		t.Fatalf("apply --scheduled exited %d and sent %d, want 0 and %d:\n%s%s", code, targets, 3000-sent, r.stdout, r.stderr)
	}
	onceEach(t, sb, 3000)
}

// TestSavedPlanAfterQuietHoursBegin: a plan saved at 10:00 UTC sends two
// users whose quiet_hours (10:30-12:00 in UTC) had not begun; applied at
// 11:00 it put the push on both phones inside their quiet window
// (before: 2 copies). A plan's decision to send a target holds until its
// quiet window begins: applied after that, the saved plan holds them
// (exit 0, no copy, "2 targets held"), plan --out says from when, and the
// first apply after the window sends them. The embedded sandbox's clock
// is moved forward by hand, as an hour passing would.
func TestSavedPlanAfterQuietHoursBegin(t *testing.T) {
	sb := startEmbedded(t, seed)
	const quiet = `
time_zones {
  default = "UTC"
}
quiet_hours {
  from = "10:30"
  to   = "12:00"
}
notification "first" {
  user_ids = ["carol"]
  title    = "First"
  body     = "Sets the clock"
}
`
	w := newWorkspace(t, sb, quiet)
	w.apply("--now", "2030-01-01T10:00:00Z")
	w.write(quiet+`
notification "late" {
  user_ids = ["alice", "bob"]
  title    = "Late"
  body     = "Quiet?"
}
`, sb)
	r := w.mustRun(0, "plan", "--out", "late.plan")
	if !strings.Contains(r.stdout, "Applied from 2030-01-01T10:30:00Z, when quiet_hours begin for targets it sends, it holds those targets") {
		t.Errorf("plan --out does not say from when the plan holds its targets:\n%s", r.stdout)
	}
	b, err := os.ReadFile(sb.devicesFile())
	if err != nil {
		t.Fatal(err)
	}
	at := sb.clock().UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	moved := strings.Replace(string(b), `"clock":"`+at+`"`, `"clock":"2030-01-01T11:00:00Z"`, 1)
	if moved == string(b) {
		t.Fatalf("no clock %s in the devices file:\n%s", at, b)
	}
	if err := os.WriteFile(sb.devicesFile(), []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	r = w.run("apply", "late.plan")
	received := sb.device("alice-phone").Received + sb.device("bob-phone").Received
	t.Logf("figures: a plan saved at 10:00, applied at 11:00 inside quiet_hours 10:30-12:00: exit %d, %d copies", r.code, received)
	if r.code != 0 || received != 0 || !strings.Contains(r.stdout, "2 targets held: their quiet_hours began") {
		t.Fatalf("apply of the saved plan: exit %d, %d copies on the phones; want 0, none, and 2 held:\n%s%s", r.code, received, r.stdout, r.stderr)
	}
	// After the window, they are sent.
	w.apply("--now", "2030-01-01T12:00:00Z")
	if a, b := sb.device("alice-phone").Received, sb.device("bob-phone").Received; a != 1 || b != 1 {
		t.Errorf("after the window: alice-phone %d, bob-phone %d; want one each", a, b)
	}
}

// TestPacedRunIntoQuietHours: a send_rate of 60/minute sends 12 users one
// request a second from 10:29:56 (UTC, their zone), and quiet_hours
// begin at 10:30. Before: the run went on into the window, 8 of the 12
// phones got the push inside their quiet hours (exit 0). The plan's
// decision to send a target holds until its quiet window begins: no try
// starts after that, the rest are held (not failed, exit 0), and the
// first apply after the window sends them, once each.
func TestPacedRunIntoQuietHours(t *testing.T) {
	sb := startEmbedded(t, rangeSeed(12))
	w := newWorkspace(t, sb, `
time_zones {
  default = "UTC"
}
quiet_hours {
  from = "10:30"
  to   = "12:00"
}
notification "paced" {
  user_ids  = [for i in range(12) : format("u%05d", i)]
  title     = "Paced"
  body      = "One a second"
  send_rate = "60/minute"
}
`)
	r := w.apply("--now", "2030-01-01T10:29:56Z")
	quiet := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)
	m := w.readState().Messages["notification.paced"]
	inside, delivered := 0, 0
	for i := range 12 {
		tg := m.Target(fmt.Sprintf("u%05d", i))
		if tg == nil {
			continue
		}
		delivered++
		if !tg.Time.Before(quiet) {
			inside++
		}
	}
	t.Logf("figures: a paced run from 10:29:56 into quiet_hours at 10:30: %d delivered, %d of them inside the window, %d held", delivered, inside, 12-delivered)
	if inside != 0 || delivered == 12 {
		t.Fatalf("%d delivered, %d inside quiet hours; want none inside and the rest held:\n%s", delivered, inside, r.stdout)
	}
	if want := fmt.Sprintf("%d targets held: their quiet_hours began during the run", 12-delivered); 12-delivered > 1 && !strings.Contains(r.stdout, want) {
		t.Errorf("the summary does not say %q:\n%s", want, r.stdout)
	}
	w.apply("--now", "2030-01-01T12:00:00Z")
	for i := range 12 {
		if n := sb.device(fmt.Sprintf("d%05d", i)).Received; n != 1 {
			t.Errorf("d%05d received %d, want 1", i, n)
		}
	}
}

// TestPlanWarnsOfAStateFromBefore: a state written before states recorded
// their service takes the service of its first apply. A rehearsal's state
// (its deliveries made in the embedded sandbox) planned against a real
// service said nothing in the plan or its comment: applying it would
// record the rehearsal's deliveries as real, and the reviewer had no way
// to see it. The plan now warns, naming the service it would record.
func TestPlanWarnsOfAStateFromBefore(t *testing.T) {
	emb := startEmbedded(t, seed)
	w := newWorkspace(t, emb, weeklyBlock)
	w.apply()
	path := filepath.Join(w.dir, "pushform.state")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := statefile.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	st.Service = nil // as an earlier pushform wrote it
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := startSandbox(t, seed, "--quiet")
	if err := os.Remove(filepath.Join(w.dir, "sandbox.hcl")); err != nil {
		t.Fatal(err)
	}
	w.write(weeklyBlock, sb)
	want := "records no service (an earlier pushform wrote it): applying this plan records the service at 127.0.0.1 as the service its deliveries went to"
	for _, args := range [][]string{{"plan"}, {"plan", "--markdown"}} {
		r := w.mustRun(0, args...)
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("%s does not warn that applying records the service:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
}

// TestKindChangeWithAnEdit: notification.coupon reached alice as a user;
// then the same block, edited ("15%" for "10%"), is planned for her
// phone by device id. Before: a plain "+ will be created: 1 device", no
// warning, and her phone showed both versions (exit 0). After: a kind
// change of the same notification, refused without --allow-resend (exit
// 1, one copy), sent with it.
func TestKindChangeWithAnEdit(t *testing.T) {
	sb := startEmbedded(t, seed)
	const block = `
notification "coupon" {
  %s
  title = "Coupon"
  body  = "Your %s coupon"
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(block, `user_ids = ["alice"]`, "10%"))
	w.apply()
	w.write(fmt.Sprintf(block, `device_ids = ["alice-phone"]`, "15%"), sb)
	r := w.run("apply", "--auto-approve")
	received := sb.device("alice-phone").Received
	t.Logf("figures: users -> devices with an edit, same address: exit %d, alice-phone shows %d", r.code, received)
	if r.code != 1 || received != 1 || !strings.Contains(r.stderr, "an earlier version of this notification reached 1 user") {
		t.Fatalf("exit %d, alice-phone shows %d; want a refusal and one copy:\n%s%s", r.code, received, r.stdout, r.stderr)
	}
	w.apply("--allow-resend")
	if n := sb.device("alice-phone").Received; n != 2 {
		t.Errorf("with --allow-resend alice-phone shows %d, want 2", n)
	}
}

// TestSandboxClockMovesWithNothingSent: in the embedded sandbox, apply
// --now 2032 found notification.sale expired (send_before 2031-06-01)
// and sent nothing, so it saved nothing, the clock included; apply --now
// 2031-02-01 was then allowed and sent the expired sale (before: exit 0,
// alice-phone 1 copy). An apply moves the simulated clock to its time
// whether or not it sends: the second run is refused as going back.
func TestSandboxClockMovesWithNothingSent(t *testing.T) {
	sb := startEmbedded(t, seed)
	w := newWorkspace(t, sb, `
notification "first" {
  user_ids = ["bob"]
  title    = "First"
  body     = "Sets the clock"
}
notification "sale" {
  user_ids    = ["alice"]
  title       = "Sale"
  body        = "Ends in June"
  send_after  = "2031-01-01T00:00:00Z"
  send_before = "2031-06-01T00:00:00Z"
}
`)
	w.apply("--now", "2030-01-01T00:00:00Z")
	w.apply("--now", "2032-01-01T00:00:00Z")
	if at := sb.clock(); at.Before(mustTime(t, "2032-01-01T00:00:00Z")) {
		t.Errorf("the sandbox's clock is %s after apply --now 2032-01-01", at)
	}
	r := w.run("apply", "--auto-approve", "--now", "2031-02-01T00:00:00Z")
	received := sb.device("alice-phone").Received
	t.Logf("figures: apply --now 2031-02-01 after apply --now 2032-01-01 sent nothing: exit %d, alice-phone %d", r.code, received)
	if r.code != 1 || received != 0 || !strings.Contains(r.stderr, "is earlier than the clock of the embedded sandbox") {
		t.Fatalf("exit %d, alice-phone %d; want a refusal and no copy:\n%s%s", r.code, received, r.stdout, r.stderr)
	}
}

// TestRolloutNotStarvedByRepeats: a rollout (50%, then 100% after 6h)
// whose repeat_after (4h) is shorter than its wait. Before: each repeat
// of stage 1 was the stage's latest send, and the wait ran again from
// it: stage 2 was due at 06:00, then 11:00, then 16:00..., and its
// users never got the notification while stage 1's got it every 5 hours
// (over 10 hours: 51 copies on 17 phones, none on the other 7). The
// released stages send no repeats while the next stage waits: stage 2
// goes at 07:00, with stage 1's repeats.
func TestRolloutNotStarvedByRepeats(t *testing.T) {
	sb := startEmbedded(t, rangeSeed(24))
	w := newWorkspace(t, sb, `
notification "daily" {
  user_ids     = [for i in range(24) : format("u%05d", i)]
  title        = "Daily"
  body         = "News"
  repeat_after = "4h"
  rollout {
    stages = ["50%", "100%"]
    wait   = "6h"
  }
}
`)
	for _, h := range []string{"00", "04", "05", "06", "07", "08", "10"} {
		w.apply("--now", "2030-03-29T"+h+":00:01Z")
	}
	received := sb.received()
	reached, copies := len(received), 0
	for _, c := range received {
		copies += c
	}
	t.Logf("figures: 10 hours of a 50%%/100%% rollout (wait 6h) with repeat_after 4h: %d of 24 phones reached, %d copies", reached, copies)
	if reached != 24 {
		t.Fatalf("%d of 24 phones reached: the second stage never came", reached)
	}
}
