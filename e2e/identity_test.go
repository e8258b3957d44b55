package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// One identity per notification (issue 37): a person keeps the variant
// they got, or the holdout, whatever changes in weights, holdout, salt or
// address; content moved to another kind of target is refused; state
// prune and test-send cannot undo "once". Each test logs its figures
// ("devices with two variants: N"), the same run against the binary of
// an earlier pushform gives the before figures.

// newsBlock is a notification in two untagged variants (a device keeps
// both when it is sent both); %[1]s is the address's name, %[2]s its
// targets, %[3]d and %[4]d the weights, %[5]s more attributes (holdout,
// salt).
const newsBlock = `
notification %[1]q {
  user_ids = %[2]s
  variant "a" {
    weight = %[3]d
    title  = "Spring sale"
    body   = "20%% off"
  }
  variant "b" {
    weight = %[4]d
    title  = "20%% off everything"
    body   = "Until Sunday"
  }
  %[5]s
}
`

// variantTitles are the titles of newsBlock's variants.
var variantTitles = []string{"Spring sale", "20% off everything"}

// inboxCounts counts, over the devices that received anything, those that
// show two or more of titles (two variants) and those shown anything
// twice or more (two copies), and returns every device's view.
func inboxCounts(t *testing.T, sb *sandbox, titles []string) (twoVariants, twoCopies int, views map[string]deviceView) {
	t.Helper()
	var list struct {
		DeviceIDs []string `json:"deviceIds"`
	}
	sb.get("/_sandbox/devices", &list)
	views = sb.devices(list.DeviceIDs)
	for _, d := range views {
		seen := map[string]bool{}
		for _, e := range d.Inbox {
			for _, title := range titles {
				if e.Title == title {
					seen[title] = true
				}
			}
		}
		if len(seen) >= 2 {
			twoVariants++
		}
		if d.Received >= 2 {
			twoCopies++
		}
	}
	return twoVariants, twoCopies, views
}

// TestVariantWeightsChangeKeepsAssignment: weights 50/50 applied to 20
// users, then 5/95: nobody is sent the other variant (before: 11 of 20
// devices showed both). 200 users added later are assigned by the new
// weights; then variant b is dropped, and its people are sent nothing.
func TestVariantWeightsChangeKeepsAssignment(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(newsBlock, "news", guardUsers(20), 50, 50, ""))
	w.apply()
	w.write(fmt.Sprintf(newsBlock, "news", guardUsers(20), 5, 95, ""), sb)
	before := sb.stats()
	if p := w.savedPlan(); p.Summary.Targets != 0 || len(p.Shapes) != 1 {
		t.Errorf("plan after the weights changed: %d targets, %d shapes to record; want none (nobody new to assign) and the new shape", p.Summary.Targets, len(p.Shapes))
	}
	w.apply()
	two, copies, _ := inboxCounts(t, sb, variantTitles)
	t.Logf("weights 50/50 -> 5/95 on 20 users: %d devices with two variants, %d with two copies, %d requests sent by the second apply", two, copies, sb.stats().SendRequests-before.SendRequests)
	if two != 0 || copies != 0 {
		t.Fatalf("%d devices show two variants, %d two copies; want 0", two, copies)
	}
	// New people are assigned by the new weights: 5/95.
	w.write(fmt.Sprintf(newsBlock, "news", guardUsers(220), 5, 95, ""), sb)
	p := w.savedPlan()
	got := map[string]int{}
	for _, c := range p.Changes {
		got[c.Address] = len(c.Send)
	}
	if a, b := got["notification.news.variant.a"], got["notification.news.variant.b"]; a+b != 200 || a > 25 {
		t.Errorf("200 new users: %d to a, %d to b; want about 10 and 190", a, b)
	}
	w.apply()
	if two, copies, _ := inboxCounts(t, sb, variantTitles); two != 0 || copies != 0 {
		t.Fatalf("after adding users: %d devices show two variants, %d two copies", two, copies)
	}
	// Variant b dropped: its people had the notification, and are sent
	// no other variant; the export still says they got b.
	dropped := fmt.Sprintf(newsBlock, "news", guardUsers(220), 5, 95, "")
	i, j := strings.Index(dropped, `  variant "b"`), strings.Index(dropped, "  \n}")
	w.write(dropped[:i]+dropped[j:], sb)
	before = sb.stats()
	w.apply()
	w.mustRun(0, "plan", "--detailed-exitcode")
	two, copies, _ = inboxCounts(t, sb, variantTitles)
	t.Logf("variant b dropped: %d devices with two variants, %d with two copies, %d requests", two, copies, sb.stats().SendRequests-before.SendRequests)
	if two != 0 || copies != 0 || sb.stats().SendRequests != before.SendRequests {
		t.Fatalf("variant b dropped: %d devices show two variants, %d two copies, %d requests", two, copies, sb.stats().SendRequests-before.SendRequests)
	}
	var x struct {
		Assignments []struct{ Target, Variant string }
	}
	if err := json.Unmarshal([]byte(w.mustRun(0, "history", "notification.news", "--variants", "--json").stdout), &x); err != nil {
		t.Fatal(err)
	}
	byVariant := map[string]int{}
	for _, a := range x.Assignments {
		byVariant[a.Variant]++
	}
	if byVariant["a"]+byVariant["b"] != 220 || byVariant["b"] < 150 {
		t.Errorf("the export after b was dropped: %v", byVariant)
	}
}

// holdoutSeed has 20,000 users h00000.. with one device each, hd00000...
const holdoutSeed = `
api_key "k-test-canary-0123456789" { environment = "test" }
user_range "h%05d" {
  count       = 20000
  device      = "hd%05d"
  environment = "test"
}
`

// TestHoldoutChangesKeepAssignment: the holdout of 20,000 users goes
// from 10% to 30% to 1%: a device shows one variant or nothing, and a
// held-out person is never sent either (before: 2,902 devices showed
// both variants, and 1,787 of the 1,992 held out were sent one).
func TestHoldoutChangesKeepAssignment(t *testing.T) {
	sb := startSandbox(t, holdoutSeed, "--quiet")
	users := `flatten([for j in range(20) : [for i in range(1000) : format("h%05d", j * 1000 + i)]])`
	w := newWorkspace(t, sb, fmt.Sprintf(newsBlock, "news", users, 50, 50, `holdout = "10%"`))
	w.apply()
	heldOut := map[string]bool{}
	for _, id := range holdoutIDs(t, w) {
		heldOut["hd"+strings.TrimPrefix(id, "h")] = true
	}
	if n := len(heldOut); n < 1800 || n > 2200 {
		t.Fatalf("a 10%% holdout of 20,000 held out %d", n)
	}
	for _, h := range []string{"30%", "1%"} {
		w.write(fmt.Sprintf(newsBlock, "news", users, 50, 50, fmt.Sprintf("holdout = %q", h)), sb)
		if p := w.savedPlan(); p.Summary.Targets != 0 || len(p.Shapes) != 1 {
			t.Errorf("plan after the holdout changed to %s: %d targets, %d shapes to record; want none (nobody new to assign) and the new shape", h, p.Summary.Targets, len(p.Shapes))
		}
		w.apply()
	}
	two, copies, views := inboxCounts(t, sb, variantTitles)
	shownHeldOut := 0
	for id, d := range views {
		if heldOut[id] && d.Received > 0 {
			shownHeldOut++
		}
	}
	t.Logf("holdout 10%% -> 30%% -> 1%% on 20,000 users: %d devices with two variants, %d with two copies, %d of %d held out shown something", two, copies, shownHeldOut, len(heldOut))
	if two != 0 || copies != 0 || shownHeldOut != 0 {
		t.Fatalf("%d devices show two variants, %d two copies, %d held-out devices were sent a variant; want 0", two, copies, shownHeldOut)
	}
	if got := len(views); got != 20000-len(heldOut) {
		t.Errorf("%d devices were shown the notification, want the %d not held out", got, 20000-len(heldOut))
	}
}

// TestRenameWithVariantsKeepsAssignment: a notification with variants
// (and a holdout, or none) renamed without a moved block, its salt (the
// address) changing with it, sends nothing: every person keeps the
// variant they got (before: 11 of 20 devices showed both without a
// holdout, 8 with one). A salt change and a moved block to a third name
// send nothing either (before: 16 and 19 in all without a holdout, 13
// and 17 with one).
func TestRenameWithVariantsKeepsAssignment(t *testing.T) {
	for _, holdout := range []string{"", `holdout = "10%"`} {
		t.Run(fmt.Sprintf("holdout=%t", holdout != ""), func(t *testing.T) {
			sb := startSandbox(t, guardsSeed, "--quiet")
			w := newWorkspace(t, sb, fmt.Sprintf(newsBlock, "news", guardUsers(20), 50, 50, holdout))
			w.apply()
			before := sb.stats()
			steps := []struct{ what, block string }{
				{"renamed without a moved block", fmt.Sprintf(newsBlock, "news_v2", guardUsers(20), 50, 50, holdout)},
				{"salt changed", fmt.Sprintf(newsBlock, "news_v2", guardUsers(20), 50, 50, holdout+"\n  salt = \"spring-2026\"")},
				{"moved", fmt.Sprintf(newsBlock, "news_v3", guardUsers(20), 50, 50, holdout+"\n  salt = \"spring-2027\"") +
					"moved {\n  from = notification.news_v2\n  to   = notification.news_v3\n}\n"},
			}
			for _, s := range steps {
				w.write(s.block, sb)
				if n := w.planJSON().Summary["targets"]; n != 0 {
					t.Errorf("%s: the plan sends to %d targets", s.what, n)
				}
				w.apply()
				two, copies, _ := inboxCounts(t, sb, variantTitles)
				t.Logf("%s: %d devices with two variants, %d with two copies (cumulative), %d requests sent", s.what, two, copies, sb.stats().SendRequests-before.SendRequests)
				if two != 0 || copies != 0 {
					t.Errorf("%s: %d devices show two variants, %d two copies; want 0", s.what, two, copies)
				}
				w.mustRun(0, "plan", "--detailed-exitcode")
			}
			st := w.readState()
			if st.Messages["notification.news_v3.variant.a"] == nil || holdout != "" && st.Messages["notification.news_v3.holdout"] == nil {
				t.Errorf("the state does not record the assignment under the last name: %v", st.Addresses())
			}
		})
	}
}

// couponTo is an untagged notification to user_ids or device_ids.
const couponTo = `
notification %q {
  %s = %s
  title = "Coupon"
  body  = "Your 10%% coupon"
}
`

func guardDevices(n int) string {
	return fmt.Sprintf(`[for i in range(%d) : format("gd%%04d", i)]`, n)
}

// TestTargetKindChangeRefused: content sent to 20 users and planned for
// their 20 devices, at the same address or another, is warned about and
// refused, nothing sent (before: every device was sent it again, no
// warning); --allow-resend sends it, as asked.
func TestTargetKindChangeRefused(t *testing.T) {
	for _, name := range []string{"coupon", "coupon_devices"} {
		t.Run(name, func(t *testing.T) {
			sb := startSandbox(t, guardsSeed, "--quiet")
			w := newWorkspace(t, sb, fmt.Sprintf(couponTo, "coupon", "user_ids", guardUsers(20)))
			w.apply()
			w.write(fmt.Sprintf(couponTo, name, "device_ids", guardDevices(20)), sb)
			before := sb.stats()
			plan := w.mustRun(0, "plan")
			if !strings.Contains(plan.stdout, "devices may show it twice") || !strings.Contains(plan.stdout, "--allow-resend") {
				t.Errorf("plan does not warn")
			}
			r := w.run("apply", "--auto-approve")
			_, copies, _ := inboxCounts(t, sb, []string{"Coupon"})
			t.Logf("user_ids -> device_ids (%s): apply exit %d, %d requests, %d devices with two copies", name, r.code, sb.stats().SendRequests-before.SendRequests, copies)
			if r.code != 1 || !strings.Contains(r.stderr, "devices may show it twice") || !strings.Contains(r.stderr, "Nothing was sent") {
				t.Errorf("apply's refusal: exit %d\n%s", r.code, r.stderr)
			}
			if n := sb.stats().SendRequests - before.SendRequests; n != 0 || copies != 0 {
				t.Fatalf("a refused apply sent %d requests; %d devices show two copies", n, copies)
			}
			w.mustRun(0, "plan", "--allow-resend", "--out", "resend.plan")
			w.mustRun(0, "apply", "resend.plan")
			if _, copies, _ := inboxCounts(t, sb, []string{"Coupon"}); copies != 20 {
				t.Errorf("--allow-resend: %d devices show two copies, want the 20 asked for", copies)
			}
			w.mustRun(0, "plan", "--detailed-exitcode")
		})
	}
}

// TestStatePruneGuards: state prune --before a future time, or one that
// drops records younger than a day, is refused without --force (before:
// --before 2099-01-01 was accepted and the re-added block sent again).
func TestStatePruneGuards(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	block := fmt.Sprintf(couponBlock, guardUsers(5))
	w := newWorkspace(t, sb, block)
	w.apply()
	w.write("", sb)
	w.apply() // forgotten: the deliveries are in the ledger only
	for _, before := range []string{"2099-01-01", "2000-01-01T00:00:00Z"} {
		r := w.run("state", "prune", "--before", before)
		t.Logf("state prune --before %s: exit %d", before, r.code)
		if before == "2000-01-01T00:00:00Z" {
			if r.code != 0 || !strings.Contains(r.stdout, "nothing was dropped") {
				t.Errorf("prune of nothing: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			continue
		}
		if r.code != 1 || !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stderr, "future") {
			t.Errorf("state prune --before %s: exit %d\n%s%s", before, r.code, r.stdout, r.stderr)
		}
	}
	w.write(block, sb)
	a, tg := w.planJSON().action("notification.y")
	t.Logf("the re-added block then plans %s, sending to %d targets", a, tg["send"])
	if a != "already-delivered" || tg["send"] != 0 {
		t.Fatalf("after the refused prune, the re-added block plans %s %v", a, tg)
	}
	w.write("", sb)
	// Records younger than a day need --force too, at a time past them.
	r := w.run("state", "prune", "--before", time.Now().UTC().Format(time.RFC3339Nano))
	if r.code != 1 || !strings.Contains(r.stderr, "younger than a day") {
		t.Fatalf("prune of today's records: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.mustRun(0, "state", "prune", "--before", "2099-01-01", "--force")
	w.write(block, sb)
	before := sb.stats()
	w.apply()
	t.Logf("after state prune --force, the re-added block sent %d requests", sb.stats().SendRequests-before.SendRequests)
	if n := sb.stats().SendRequests - before.SendRequests; n != 1 {
		t.Errorf("after a forced prune the re-added block sent %d requests, want 1 (the records were dropped on purpose)", n)
	}
}

// TestTestSendOnce: test-send sends each id once, refuses users mixed
// with devices (the user's device would show two copies) and more ids
// than one request takes, before sending (before: --user g0001 --user
// g0001 --device gd0001 put three copies on gd0001).
func TestTestSendOnce(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(couponBlock, guardUsers(3)))
	r := w.run("test-send", "notification.y", "--user", "g0001", "--user", "g0001", "--device", "gd0001")
	d := sb.device("gd0001")
	t.Logf("test-send --user g0001 --user g0001 --device gd0001: exit %d, gd0001 shown %d", r.code, d.Received)
	if r.code != 1 || d.Received != 0 || !strings.Contains(r.stderr, "--user") || !strings.Contains(r.stderr, "--device") {
		t.Fatalf("mixed test-send: exit %d, gd0001 shown %d\n%s", r.code, d.Received, r.stderr)
	}
	r = w.mustRun(0, "test-send", "notification.y", "--user", "g0001", "--user", "g0001")
	if d := sb.device("gd0001"); d.Received != 1 || strings.Count(r.stdout, "user g0001:") != 1 {
		t.Fatalf("--user g0001 twice: gd0001 shown %d\n%s", d.Received, r.stdout)
	}
	w.mustRun(0, "test-send", "notification.y", "--device", "gd0002", "--device", "gd0002")
	if d := sb.device("gd0002"); d.Received != 1 {
		t.Fatalf("--device gd0002 twice: shown %d", d.Received)
	}
	args := []string{"test-send", "notification.y"}
	for i := range 501 {
		args = append(args, "--device", fmt.Sprintf("gd%04d", i))
	}
	before := sb.stats()
	r = w.run(args...)
	if r.code != 1 || !strings.Contains(r.stderr, "500") || sb.stats().SendRequests != before.SendRequests {
		t.Fatalf("501 devices: exit %d, %d requests\n%s", r.code, sb.stats().SendRequests-before.SendRequests, r.stderr)
	}
}

// holdoutIDs are the targets the state records under notification.news's
// holdout.
func holdoutIDs(t *testing.T, w *workspace) []string {
	t.Helper()
	m := w.readState().Messages["notification.news.holdout"]
	if m == nil {
		t.Fatal("the state records no holdout")
	}
	ids, _ := m.SortedTargets()
	return ids
}

// TestVariantAssignmentKeptPG: with the state in PostgreSQL, two
// checkouts changing weights, holdout, salt and name in turn send nobody
// a second variant, and a held-out person nothing.
func TestVariantAssignmentKeptPG(t *testing.T) {
	p := newPGState(t)
	sb := startSandbox(t, guardsSeed, "--quiet")
	users := guardUsers(200)
	one := newPGWorkspace(t, sb, fmt.Sprintf(newsBlock, "news", users, 50, 50, `holdout = "10%"`), p)
	other := newPGWorkspace(t, sb, "", p)
	one.apply()
	heldOut := map[string]bool{}
	for _, id := range holdoutIDs(t, one) {
		heldOut["gd"+strings.TrimPrefix(id, "g")] = true
	}
	before := sb.stats()
	for i, block := range []string{
		fmt.Sprintf(newsBlock, "news", users, 5, 95, `holdout = "30%"`),
		fmt.Sprintf(newsBlock, "news", users, 95, 5, "holdout = \"1%\"\n  salt = \"s2\""),
		fmt.Sprintf(newsBlock, "news_v2", users, 50, 50, `holdout = "10%"`),
	} {
		w := []*workspace{other, one}[i%2]
		w.write(block, sb)
		if n := w.planJSON().Summary["targets"]; n != 0 {
			t.Errorf("step %d: the plan sends to %d targets", i+1, n)
		}
		w.apply()
		w.mustRun(0, "plan", "--detailed-exitcode")
	}
	two, copies, views := inboxCounts(t, sb, variantTitles)
	shown := 0
	for id, d := range views {
		if heldOut[id] && d.Received > 0 {
			shown++
		}
	}
	t.Logf("PostgreSQL, weights, holdout, salt and name changed: %d devices with two variants, %d with two copies, %d held out shown something, %d requests", two, copies, shown, sb.stats().SendRequests-before.SendRequests)
	if two != 0 || copies != 0 || shown != 0 || sb.stats().SendRequests != before.SendRequests {
		t.Fatalf("%d devices show two variants, %d two copies, %d held out were sent one, %d requests; want none", two, copies, shown, sb.stats().SendRequests-before.SendRequests)
	}
	if st := p.read(t); st.Messages["notification.news_v2.holdout"] == nil || st.Messages["notification.news.holdout"] != nil {
		t.Errorf("the state in PostgreSQL: %v", st.Addresses())
	}
}
