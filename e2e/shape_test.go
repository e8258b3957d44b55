package e2e

import (
	"bytes"
	binenc "encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/statefile"
)

// One review (issue 37): apply --scheduled releases only the sends of the
// shape a reviewed apply accepted. Each test runs a scenario of the issue
// as a cron job would, with the real clock (short waits, polled), and
// logs its figures (exit codes, requests, devices) before checking them.

// scheduled runs apply --scheduled and returns its exit code and the
// requests and targets it sent.
func (w *workspace) scheduled(sb *sandbox) (code, requests, targets int, r result) {
	w.t.Helper()
	before := sb.stats()
	r = w.run("apply", "--scheduled")
	after := sb.stats()
	return r.code, after.SendRequests - before.SendRequests, after.Targets - before.Targets, r
}

// dueToSend waits until a reviewed plan would send addr to n targets:
// what a scheduled run then does is up to the review rule alone.
func (w *workspace) dueToSend(addr string, n int) {
	w.t.Helper()
	waitUntil(w.t, time.Minute, fmt.Sprintf("%s due to %d targets", addr, n), func() bool {
		_, tg := w.planJSON().action(addr)
		return tg["send"] >= n
	})
}

// TestScheduledRepeatAwaitsReview: a repeat_after merged but not reviewed
// sends nothing from apply --scheduled, however many runs; the reviewed
// apply sends it.
func TestScheduledRepeatAwaitsReview(t *testing.T) {
	sb := startSandbox(t, seed, "--quiet")
	const block = `
notification "digest" {
  user_ids = ["alice", "bob"]
  title    = "Weekly digest"
  body     = "What's new"%s
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(block, ""))
	w.apply()
	w.write(fmt.Sprintf(block, "\n  repeat_after = \"1s\""), sb)
	var codes []int
	requests := 0
	var last result
	for range 3 {
		w.dueToSend("notification.digest", 2)
		code, n, _, r := w.scheduled(sb)
		codes, requests, last = append(codes, code), requests+n, r
	}
	received := sb.device("alice-phone").Received
	t.Logf("figures: 3 runs of apply --scheduled after an unreviewed repeat_after: exit codes %v, %d requests, alice-phone received %d", codes, requests, received)
	for _, c := range codes {
		if c != 4 {
			t.Errorf("apply --scheduled exited %d, want 4", c)
		}
	}
	if requests != 0 || received != 1 {
		t.Errorf("unreviewed repeats went out: %d requests, alice-phone received %d", requests, received)
	}
	if !strings.Contains(last.stdout, "notification.digest: changed since the reviewed apply") {
		t.Errorf("apply --scheduled does not say why:\n%s", last.stdout)
	}
	// Reviewed, the repeat goes out.
	if r := w.apply(); !strings.Contains(r.stdout, "2 delivered") {
		t.Fatalf("the reviewed apply:\n%s", r.stdout)
	}
	if d := sb.device("alice-phone"); d.Received != 2 {
		t.Errorf("alice-phone received %d after the reviewed apply, want 2", d.Received)
	}
}

// TestScheduledRaisedGateAwaitsReview: a rollout halted by its failure
// gate stays halted when max_failure_rate is raised without review.
func TestScheduledRaisedGateAwaitsReview(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet", "--fail-targets", "0.2")
	const block = `
notification "spring" {
  user_ids = %s
  title    = "Spring sale"
  body     = "20%% off"
  tag      = "spring"
  rollout {
    stages           = ["10%%", "100%%"]
    wait             = "1s"
    max_failure_rate = "%s"
  }
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(block, guardUsers(300), "2%"))
	w.mustRun(1, "apply", "--auto-approve") // the first stage; failed targets: exit 1
	first := sb.stats().Targets
	if first == 0 || first > 60 {
		t.Fatalf("the first stage sent %d targets of 300", first)
	}
	w.write(fmt.Sprintf(block, guardUsers(300), "99%"), sb)
	w.dueToSend("notification.spring", 200) // the next stage, as a reviewed plan would send it
	code, requests, targets, r := w.scheduled(sb)
	t.Logf("figures: apply --scheduled after an unreviewed max_failure_rate 2%% -> 99%%: exit %d, %d requests, %d targets (the first stage sent %d)", code, requests, targets, first)
	if code != 4 || requests != 0 {
		t.Errorf("apply --scheduled: exit %d, %d requests sent; want exit 4 and none\n%s", code, requests, r.stdout)
	}
	if got := guardReceived(sb, 300); got > first {
		t.Errorf("devices were shown %d notifications, more than the first stage's %d", got, first)
	}
}

// TestScheduledVariantsAwaitReview: new variant weights, or a new
// holdout share, neither send nor forget anything from apply
// --scheduled, not even to recipients who joined since (whom the new
// weights would place): the devices keep the variant they were shown,
// and the state keeps every assignment, until a reviewed apply.
func TestScheduledVariantsAwaitReview(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	// The audience is read from the data source, so it may grow
	// unreviewed: each step lets 10 more recipients in.
	const block = `
data "recipients" "all" {}

notification "spring" {
  user_ids = slice(sort(data.recipients.all.user_ids), 0, %d)
  title    = "Spring"
  body     = "Sale"
  holdout  = "%s"
  variant "a" {
    weight = %d
    title  = "Variant A"
  }
  variant "b" {
    weight = %d
    title  = "Variant B"
  }
}
`
	const n = 20
	w := newWorkspace(t, sb, fmt.Sprintf(block, n, "10%", 50, 50))
	w.apply()
	assigned := func() map[string]int {
		out := map[string]int{}
		for addr, m := range w.readState().Messages {
			out[addr] = m.TargetCount()
		}
		return out
	}
	before := assigned()
	both := func() (shown, twice int) {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("gd%04d", i)
		}
		for _, d := range sb.devices(ids) {
			titles := map[string]bool{}
			for _, m := range d.Inbox {
				titles[m.Title] = true
			}
			shown += d.Received
			if titles["Variant A"] && titles["Variant B"] {
				twice++
			}
		}
		return shown, twice
	}
	shownBefore, _ := both()
	for i, step := range []struct {
		name, holdout string
		a, b          int
	}{{"weights 50/50 -> 5/95", "10%", 5, 95}, {"holdout 10% -> 30%", "30%", 50, 50}} {
		w.write(fmt.Sprintf(block, n+10*(i+1), step.holdout, step.a, step.b), sb)
		code, requests, _, r := w.scheduled(sb)
		shown, twice := both()
		after := assigned()
		t.Logf("figures: %s unreviewed: apply --scheduled exit %d, %d requests; devices shown %d (were %d), %d show both variants; state %v (was %v)",
			step.name, code, requests, shown, shownBefore, twice, after, before)
		if code != 4 || requests != 0 || shown != shownBefore || twice != 0 {
			t.Errorf("%s: exit %d, %d requests, %d shown, %d devices with both variants\n%s", step.name, code, requests, shown, twice, r.stdout)
		}
		for addr, c := range before {
			if after[addr] != c {
				t.Errorf("%s: %s records %d targets, had %d", step.name, addr, after[addr], c)
			}
		}
		if !strings.Contains(r.stdout, "changed since the reviewed apply") {
			t.Errorf("%s: apply --scheduled does not say why:\n%s", step.name, r.stdout)
		}
	}
}

// TestScheduledStaticIDsAwaitReview: ids added to a static user_ids are
// not sent by apply --scheduled while the reviewed apply has not run (a
// production approval rejected); a recipient the data source adds is.
func TestScheduledStaticIDsAwaitReview(t *testing.T) {
	sb := startSandbox(t, seed, "--quiet")
	const block = `
data "recipients" "all" {}

notification "vip" {
  user_ids = [%s]
  title    = "VIP preview"
  body     = "Early access"
}

notification "news" {
  user_ids = data.recipients.all.user_ids
  title    = "News"
  body     = "Something new"
}
`
	w := newWorkspace(t, sb, fmt.Sprintf(block, `"alice"`))
	w.apply()
	w.write(fmt.Sprintf(block, `"alice", "bob"`), sb) // the merge; its apply was rejected
	sb.patch("carol-phone", `{"permission": true}`)   // carol opts in: the data source grows
	code, requests, targets, r := w.scheduled(sb)
	bob, carol := sb.device("bob-phone"), sb.device("carol-phone")
	t.Logf("figures: apply --scheduled after 1 id added to a static user_ids (not reviewed) and 1 recipient added by the data source: exit %d, %d requests, %d targets; bob-phone shown %d VIP, carol-phone shown %d",
		code, requests, targets, countTitle(bob, "VIP preview"), countTitle(carol, "News"))
	if code != 4 || countTitle(bob, "VIP preview") != 0 {
		t.Errorf("the static id went out unreviewed: exit %d, bob-phone %+v\n%s", code, bob, r.stdout)
	}
	if countTitle(carol, "News") != 1 || targets != 1 {
		t.Errorf("the data source's new recipient was not released: %d targets, carol-phone %+v", targets, carol)
	}
	if !strings.Contains(r.stdout, "notification.vip: changed since the reviewed apply") {
		t.Errorf("apply --scheduled does not say why:\n%s", r.stdout)
	}
	// Approved at last, the reviewed apply sends it.
	w.apply()
	if countTitle(sb.device("bob-phone"), "VIP preview") != 1 {
		t.Errorf("the reviewed apply did not send bob the VIP preview")
	}
	w.mustRun(0, "apply", "--scheduled")
}

// countTitle counts the notifications titled title a device shows.
func countTitle(d deviceView, title string) int {
	n := 0
	for _, m := range d.Inbox {
		if m.Title == title {
			n++
		}
	}
	return n
}

// TestScheduledStateFromBefore: a state written before pushform recorded
// reviewed shapes releases nothing to apply --scheduled, which says why
// and what to do; the first reviewed apply records the shapes (the plan
// says so) and scheduled runs go on.
func TestScheduledStateFromBefore(t *testing.T) {
	sb := startSandbox(t, seed, "--quiet")
	w := newWorkspace(t, sb, `
data "recipients" "all" {}

notification "news" {
  user_ids = data.recipients.all.user_ids
  title    = "News"
  body     = "Something new"
}
`)
	w.apply()
	writeFormat5(t, filepath.Join(w.dir, "pushform.state"))
	sb.patch("carol-phone", `{"permission": true}`)
	code, requests, _, r := w.scheduled(sb)
	t.Logf("figures: apply --scheduled on a format-5 state with a new recipient: exit %d, %d requests", code, requests)
	if code != 4 || requests != 0 || !strings.Contains(r.stdout, "notification.news: not reviewed: the state was written before pushform recorded reviewed shapes") ||
		!strings.Contains(r.stderr, "until an apply without --scheduled records them") {
		t.Fatalf("apply --scheduled on an old state: exit %d, %d requests\n%s\n%s", code, requests, r.stdout, r.stderr)
	}
	plan := w.mustRun(0, "plan").stdout
	if !strings.Contains(plan, "Review: Applying this plan records as reviewed the shape of 1 address it has none recorded for") {
		t.Errorf("the reviewed plan does not say it records the shape:\n%s", plan)
	}
	w.apply()
	if countTitle(sb.device("carol-phone"), "News") != 1 {
		t.Fatal("the reviewed apply did not send carol the news")
	}
	if st := w.readState(); st.Accepted["notification.news"] == "" {
		t.Fatalf("the reviewed apply recorded no shape: %v", st.Accepted)
	}
	if r := w.mustRun(0, "plan"); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("after the reviewed apply:\n%s", r.stdout)
	}
	w.mustRun(0, "apply", "--scheduled")
}

// TestPGScheduledShape: the accepted shapes live in the PostgreSQL state
// as in the file: a reviewed apply records them, a changed shape awaits
// review, its reviewed apply sends it.
func TestPGScheduledShape(t *testing.T) {
	p := newPGState(t)
	sb := startSandbox(t, seed, "--quiet")
	const block = `
notification "digest" {
  user_ids = [%s]
  title    = "Digest"
  body     = "Weekly"
}
`
	w := newPGWorkspace(t, sb, fmt.Sprintf(block, `"alice"`), p)
	w.apply()
	if st := p.read(t); st.Accepted["notification.digest"] == "" {
		t.Fatalf("no accepted shape in PostgreSQL: %v", st.Accepted)
	}
	w.write(fmt.Sprintf(block, `"alice", "bob"`), sb)
	code, requests, _, _ := w.scheduled(sb)
	t.Logf("figures (PostgreSQL): apply --scheduled after an id added to a static list: exit %d, %d requests", code, requests)
	if code != 4 || requests != 0 {
		t.Fatalf("apply --scheduled: exit %d, %d requests", code, requests)
	}
	w.apply()
	if d := sb.device("bob-phone"); d.Received != 1 {
		t.Errorf("bob-phone after the reviewed apply: %+v", d)
	}
	w.mustRun(0, "apply", "--scheduled")
	noStateFiles(t, w)
}

// writeFormat5 rewrites the state file at path as the previous format
// wrote it: format 5, which records no accepted shapes.
func writeFormat5(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := statefile.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s.Accepted = nil
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	// Format 6 is format 5 and the accepted shapes' count (0) after the
	// ledger, format 7 the overrides' count (0) after those; the checksum
	// covers the header line and the body.
	const trailer = "\n# end of pushform state\n"
	enc := buf.Bytes()
	nl := bytes.IndexByte(enc, '\n')
	hdr := bytes.Replace(enc[:nl+1], []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion)), []byte(`{"version":5,`), 1)
	body := enc[nl+1 : len(enc)-len(trailer)-4]
	after := state.FormatVersion - 5 // sections after the ledger, empty
	if !bytes.HasSuffix(body, make([]byte, after)) || bytes.Equal(hdr, enc[:nl+1]) {
		t.Fatalf("not a format-%d state without accepted shapes or overrides", state.FormatVersion)
	}
	body = body[:len(body)-after]
	sum := crc32.Update(crc32.Checksum(hdr, crc32.MakeTable(crc32.Castagnoli)), crc32.MakeTable(crc32.Castagnoli), body)
	out := append(append(append([]byte{}, hdr...), body...), binenc.LittleEndian.AppendUint32(nil, sum)...)
	if err := os.WriteFile(path, append(out, trailer...), 0o600); err != nil {
		t.Fatal(err)
	}
	if back, err := statefile.Decode(bytes.NewReader(append(out, trailer...))); err != nil || back.Version != 5 {
		t.Fatalf("the format-5 state does not read back: %v", err)
	}
}
