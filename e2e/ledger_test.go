package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The delivery ledger (issue 21): a push is never sent twice by accident,
// whatever happens to the block names.

// couponBlock is an untagged notification: a second copy would show.
const couponBlock = `
notification "y" {
  user_ids = %s
  title    = "Coupon"
  body     = "Your 10%% coupon"
}
`

// shownOnce checks that devices gd0000..gd(n-1) each show title exactly
// once, and were shown received notifications in all (-1: any number).
func shownOnce(t *testing.T, sb inboxes, n, received int, title string) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("gd%04d", i)
	}
	bad := 0
	for id, d := range sb.devices(ids) {
		shown := 0
		for _, e := range d.Inbox {
			if e.Title == title {
				shown++
			}
		}
		if shown != 1 || received >= 0 && d.Received != received {
			if bad++; bad <= 5 {
				t.Errorf("%s shows %q %d times and was shown %d in all; want once and %d", id, title, shown, d.Received, received)
			}
		}
	}
}

// TestForgetThenReAdd: a block removed (forgotten) and put back sends
// nothing: the plan says already delivered, with the date, the address
// and the request id; apply records it; the next plan has no changes.
func TestForgetThenReAdd(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	block := fmt.Sprintf(couponBlock, guardUsers(3))
	w := newWorkspace(t, sb, block)
	w.apply()
	w.write("", sb)
	if r := w.apply(); !strings.Contains(r.stdout, "notification.y") {
		t.Fatalf("forget apply:\n%s", r.stdout)
	}
	w.write(block, sb)
	before := sb.stats()
	p := w.planJSON()
	if a, tg := p.action("notification.y"); a != "already-delivered" || tg["already_delivered"] != 3 || tg["send"] != 0 {
		t.Fatalf("re-added block: %s %v", a, tg)
	}
	if p.Summary["already_delivered"] != 1 || p.Summary["already_delivered_targets"] != 3 {
		t.Errorf("summary %v", p.Summary)
	}
	human := w.mustRun(2, "plan", "--detailed-exitcode").stdout
	want := regexp.MustCompile(`⊘ notification\.y already delivered on ` + time.Now().UTC().Format(time.DateOnly) + ` under notification\.y \(forgotten\), request req-\S+: 3 users \(g0000, g0001, g0002\), nothing is sent`)
	if !want.MatchString(human) {
		t.Errorf("human plan:\n%s", human)
	}
	md := w.mustRun(0, "plan", "--markdown").stdout
	if !strings.Contains(md, "already delivered on") || !strings.Contains(md, "1 already delivered") {
		t.Errorf("markdown plan:\n%s", md)
	}
	w.apply()
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("%d requests sent for content already delivered", after.SendRequests-before.SendRequests)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	shownOnce(t, sb, 3, 1, "Coupon")
}

// TestIdenticalBlocksAndRepeats: two blocks with the same content to
// overlapping users show it once on each device; repeat_after lets it
// through again once passed (--now), never without it; enabled = false
// sends nothing and forgets nothing. Days pass in the embedded sandbox.
func TestIdenticalBlocksAndRepeats(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	_, at := aheadOfClock()
	day1, later, dayAfter := at(0), at(2*time.Hour), at(4*24*time.Hour)
	two := `
notification "a" {
  user_ids = ["g0000", "g0001", "g0002"]
  title    = "Flash sale"
  body     = "Two hours only"
}

notification "b" {
  user_ids = ["g0001", "g0002", "g0003"]
  title    = "Flash sale"
  body     = "Two hours only"
%s}
`
	w := newWorkspace(t, sb, fmt.Sprintf(two, ""))
	p := w.planJSON("--now", day1)
	if a, tg := p.action("notification.b"); a != "create" || tg["send"] != 1 || tg["already_delivered"] != 2 {
		t.Fatalf("second block: %s %v", a, tg)
	}
	w.apply("--now", day1)
	shownOnce(t, sb, 4, 1, "Flash sale")
	w.apply("--now", day1) // records b's two targets as up to date
	w.mustRun(0, "plan", "--detailed-exitcode", "--now", dayAfter)
	shownOnce(t, sb, 4, 1, "Flash sale")

	// repeat_after: two hours later an hour has passed for b's targets.
	w.write(fmt.Sprintf(two, `  repeat_after = "1h"
`), sb)
	if a, tg := w.planJSON("--now", day1).action("notification.b"); a == "create" || tg["send"] != 0 {
		t.Fatalf("repeat_after not passed yet: %s %v", a, tg)
	}
	if p := w.planJSON("--now", later); p.Summary["repeat"] != 1 || p.Summary["retry"] != 0 {
		a, tg := p.action("notification.b")
		t.Errorf("a repeat planned as %s %v, summary %v", a, tg, p.Summary)
	}
	r := w.apply("--now", later)
	if !strings.Contains(r.stdout, "↺ notification.b will be repeated: 3 users") || strings.Contains(r.stdout, "retry") {
		t.Errorf("the plan does not say it repeats:\n%s", r.stdout)
	}
	for i, want := range []int{1, 2, 2, 2} {
		if d := sb.device(fmt.Sprintf("gd%04d", i)); d.Received != want {
			t.Errorf("gd%04d was shown %d, want %d", i, d.Received, want)
		}
	}

	// enabled = false: nothing sent, nothing forgotten.
	w.write(strings.Replace(fmt.Sprintf(two, "  enabled = false\n"), `"g0003"]`, `"g0003", "g0004"]`, 1), sb)
	before := sb.requests()
	p = w.planJSON("--now", dayAfter)
	if a, _ := p.action("notification.b"); a != "disabled" || p.Summary["forget"] != 0 || p.Summary["disabled"] != 1 {
		t.Fatalf("disabled block: %s %v", a, p.Summary)
	}
	w.apply("--now", dayAfter)
	if after := sb.requests(); after != before || guardReceived(sb, 5) != 7 {
		t.Errorf("a disabled block sent %d requests", after-before)
	}
	if s := w.readState(); s.Messages["notification.b"] == nil || s.Messages["notification.b"].TargetCount() != 3 {
		t.Errorf("a disabled block lost its records: %v", s.Addresses())
	}
}

// TestRenameWithEdits: a rename plus a body change, a URL parameter or
// silent_in_foreground is warned as that edit, and apply refuses it without
// a moved block or --allow-resend; a rename plus an added or changed tag,
// or a split into two blocks of the same content, sends nothing.
func TestRenameWithEdits(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	old := `
notification "flash" {
  user_ids = ["g0000", "g0001", "g0002", "g0003"]
  title    = "Flash sale"
  body     = "Two hours only"
  tag      = "flash"
}
`
	w := newWorkspace(t, sb, old)
	w.apply()
	rename := func(s string) string { return strings.Replace(s, `"flash" {`, `"flash_v2" {`, 1) }
	before := sb.stats()
	for _, edit := range []struct{ name, from, to string }{
		{"body", `"Two hours only"`, `"Two hours only!"`},
		{"url parameter", `tag      = "flash"`, "tag      = \"flash\"\n  open_to_url = \"https://shop.example.com/?utm=push\""},
		{"silent_in_foreground", `tag      = "flash"`, "tag      = \"flash\"\n  silent_in_foreground = true"},
	} {
		w.write(rename(strings.Replace(old, edit.from, edit.to, 1)), sb)
		human := w.mustRun(0, "plan").stdout
		if !strings.Contains(human, "looks like a rename of notification.flash with its content changed: 4 of its targets have the earlier notification") ||
			!strings.Contains(human, "    moved {\n      from = notification.flash\n      to   = notification.flash_v2\n    }\n") {
			t.Errorf("%s: plan does not warn:\n%s", edit.name, human)
		}
		r := w.mustRun(1, "apply", "--auto-approve")
		if !strings.Contains(r.stderr, "with its content changed") || !strings.Contains(r.stderr, "Nothing was sent") {
			t.Errorf("%s: apply's refusal:\n%s", edit.name, r.stderr)
		}
	}
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("refused applies sent %d requests", after.SendRequests-before.SendRequests)
	}

	// The tag changed, or added: the device shows the same thing.
	for _, tag := range []string{`tag      = "flash-2026"`, ``} {
		w.write(rename(strings.Replace(old, `tag      = "flash"`, tag, 1)), sb)
		if a, tg := w.planJSON().action("notification.flash_v2"); a != "already-delivered" || tg["already_delivered"] != 4 {
			t.Fatalf("rename with tag %q: %s %v", tag, a, tg)
		}
	}
	// A split into two blocks of the same content, applied.
	split := strings.Replace(old, `["g0000", "g0001", "g0002", "g0003"]`, `["g0000", "g0001"]`, 1) +
		strings.Replace(strings.Replace(old, `"flash" {`, `"flash_rest" {`, 1), `["g0000", "g0001", "g0002", "g0003"]`, `["g0002", "g0003"]`, 1)
	w.write(split, sb)
	w.apply()
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("the split sent %d requests", after.SendRequests-before.SendRequests)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	shownOnce(t, sb, 4, 1, "Flash sale")

	// --allow-resend sends the edit anyway.
	w.write(rename(strings.Replace(old, `"Two hours only"`, `"Two hours only!"`, 1)), sb)
	w.apply("--allow-resend")
	if got := guardReceived(sb, 4); got != 8 {
		t.Errorf("devices were shown %d, want 8 after --allow-resend", got)
	}
}

// TestFlashTwoCheckoutsPG is the stale-branch scenario of issue 21 on one
// PostgreSQL state: checkout A applies notification.flash; checkout B, a
// branch made before it, applies (forgetting it); the next apply from main
// creates it again. Every device shows "Flash sale" once.
func TestFlashTwoCheckoutsPG(t *testing.T) {
	t.Parallel()
	p := newPGState(t)
	sb := startSandbox(t, guardsSeed, "--quiet")
	base := `
notification "hello" {
  user_ids = ["g0100"]
  title    = "Hello"
  body     = "There"
}
`
	flash := base + `
notification "flash" {
  user_ids = ` + guardUsers(49) + `
  title    = "Flash sale"
  body     = "Two hours only"
}
`
	main := newPGWorkspace(t, sb, flash, p)
	stale := newPGWorkspace(t, sb, base, p)
	main.apply()
	if r := stale.apply(); !strings.Contains(r.stdout, "notification.flash") {
		t.Fatalf("the stale branch's apply:\n%s", r.stdout)
	}
	before := sb.stats()
	if a, tg := main.planJSON().action("notification.flash"); a != "already-delivered" || tg["already_delivered"] != 49 {
		t.Fatalf("main after the stale branch: %s %v", a, tg)
	}
	main.apply()
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("%d requests sent again", after.SendRequests-before.SendRequests)
	}
	main.mustRun(0, "plan", "--detailed-exitcode")
	shownOnce(t, sb, 49, 1, "Flash sale")
}

// TestStatePushForceOfOlderCopy: state pull > old.state, an apply to more
// users, state push --force old.state: the next plan sends nothing.
func TestStatePushForceOfOlderCopy(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(couponBlock, guardUsers(2)))
	w.apply()
	old := w.mustRun(0, "state", "pull").stdout
	if err := os.WriteFile(filepath.Join(w.dir, "old.state"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	big := fmt.Sprintf(couponBlock, guardUsers(2)) + `
notification "big" {
  user_ids = ` + guardUsers(50) + `
  title    = "Big sale"
  body     = "For everyone"
}
`
	w.write(big, sb)
	w.apply()
	r := w.mustRun(0, "state", "push", "--force", "old.state")
	if !strings.Contains(r.stdout, "50 kept from") {
		t.Errorf("state push --force:\n%s", r.stdout)
	}
	before := sb.stats()
	if a, tg := w.planJSON().action("notification.big"); a != "already-delivered" || tg["already_delivered"] != 50 {
		t.Fatalf("after the push: %s %v", a, tg)
	}
	w.apply()
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Fatalf("%d requests sent after the push", after.SendRequests-before.SendRequests)
	}
	shownOnce(t, sb, 50, -1, "Big sale")
}

// TestCapCountsForgottenAddress: a frequency cap counts what a forgotten
// address delivered (a day passing in the embedded sandbox).
func TestCapCountsForgottenAddress(t *testing.T) {
	sb := startEmbedded(t, guardsSeed)
	_, at := aheadOfClock()
	day1, later, day2 := at(0), at(time.Hour), at(24*time.Hour+30*time.Minute)
	launch := `
notification "launch" {
  user_ids = ` + guardUsers(5) + `
  title    = "Launch"
  body     = "It is here"
}
`
	const capped = `
frequency_cap {
  max = 1
  per = "24h"
}

notification "reminder" {
  user_ids = ` + `[for i in range(5) : format("g%04d", i)]` + `
  title    = "Reminder"
  body     = "Have you tried it?"
}
`
	w := newWorkspace(t, sb, launch)
	w.apply("--now", day1)
	w.write(capped, sb)
	w.apply("--now", later) // launch forgotten, reminder held back
	if s := w.readState(); s.Messages["notification.launch"] != nil {
		t.Fatalf("launch not forgotten: %v", s.Addresses())
	}
	if a, tg := w.planJSON("--now", later).action("notification.reminder"); a != "capped" || tg["capped"] != 5 {
		t.Fatalf("reminder within the day of the forgotten launch: %s %v", a, tg)
	}
	if a, tg := w.planJSON("--now", day2).action("notification.reminder"); a != "create" || tg["send"] != 5 {
		t.Fatalf("a day later: %s %v", a, tg)
	}
	w.apply("--now", day2)
	if got := guardReceived(sb, 5); got != 10 {
		t.Errorf("devices were shown %d, want 10 (the launch, and the reminder a day later)", got)
	}
}
