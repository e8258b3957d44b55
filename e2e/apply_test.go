package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const seed = `
api_key "k-test-canary-0123456789" { environment = "test" }
api_key "k-prod" { environment = "production" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
user "bob" {
  device "bob-phone" { environment = "test" }
}
user "carol" {
  device "carol-phone" {
    environment = "test"
    permission  = false
  }
}
user "dave" {
  device "dave-phone" {
    environment = "test"
    push_token  = false
    last_seen   = "2026-11-01T10:00:00Z"
  }
}
`

// failingSeed adds a user whose only device fails every delivery.
const failingSeed = seed + `
user "erin" {
  device "erin-phone" {
    environment = "test"
    fail        = "APNs: BadDeviceToken"
  }
}
`

func TestCreateThenNoChanges(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "First message"
  tag      = "hello"
}
`)
	r := w.mustRun(0, "plan")
	if !strings.Contains(r.stdout, "+ notification.hello will be created: 2 users (alice, bob)") ||
		!strings.Contains(r.stdout, "Plan: 1 to create, 0 to replace, 0 to forget; 2 targets in 1 request.") {
		t.Fatalf("plan output:\n%s", r.stdout)
	}
	w.mustRun(2, "plan", "--detailed-exitcode")
	r = w.apply()
	if !strings.Contains(r.stdout, "2 delivered") {
		t.Fatalf("apply output:\n%s", r.stdout)
	}
	if d := sb.device("alice-phone"); d.Received != 1 || len(d.Inbox) != 1 || d.Inbox[0].Body != "First message" {
		t.Fatalf("alice-phone: %+v", d)
	}
	r = w.mustRun(0, "plan", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("second plan:\n%s", r.stdout)
	}
	before := sb.stats().SendRequests
	r = w.apply()
	if !strings.Contains(r.stdout, "Nothing to send.") || sb.stats().SendRequests != before {
		t.Fatalf("second apply sent something:\n%s", r.stdout)
	}
	// State file: 0600, request ids, no key.
	path := filepath.Join(w.dir, "pushform.state")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi.Mode(), err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), testKey) || !strings.Contains(string(raw), "req-") {
		t.Fatalf("state file content:\n%s", raw)
	}
	r = w.mustRun(0, "state", "show", "notification.hello")
	if !strings.Contains(r.stdout, "alice") || !strings.Contains(r.stdout, "req-") {
		t.Fatalf("state show:\n%s", r.stdout)
	}
}

func TestTaggedChangeReplaces(t *testing.T) {
	sb := startSandbox(t, seed)
	campaign := func(body string) string {
		return `
notification "promo" {
  user_ids = ["alice"]
  title    = "Promo"
  body     = "` + body + `"
  tag      = "promo-1"
}
`
	}
	w := newWorkspace(t, sb, campaign("Everything 20% off"))
	w.apply()
	w.write(campaign("Everything 30% off"), sb)
	p := w.planJSON()
	if a, tg := p.action("notification.promo"); a != "replace" || tg["replace"] != 1 {
		t.Fatalf("action %s %v", a, tg)
	}
	r := w.mustRun(0, "plan")
	if !strings.Contains(r.stdout, `"Everything [-20%-]{+30%+} off"`) {
		t.Fatalf("plan lacks the word diff:\n%s", r.stdout)
	}
	w.apply()
	d := sb.device("alice-phone")
	if len(d.Inbox) != 1 || d.Inbox[0].Body != "Everything 30% off" || d.Received != 2 {
		t.Fatalf("alice-phone after replace: %+v", d)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

func TestUntaggedChangeWarnsAndResends(t *testing.T) {
	sb := startSandbox(t, seed)
	campaign := func(body string) string {
		return `
notification "news" {
  user_ids = ["bob"]
  title    = "News"
  body     = "` + body + `"
}
`
	}
	w := newWorkspace(t, sb, campaign("Version one"))
	w.apply()
	w.write(campaign("Version two"), sb)
	r := w.mustRun(0, "plan")
	if !strings.Contains(r.stdout, "! notification.news will be sent again without a tag") || !strings.Contains(r.stdout, "Warning:") {
		t.Fatalf("plan:\n%s", r.stdout)
	}
	w.apply()
	d := sb.device("bob-phone")
	if len(d.Inbox) != 2 || d.Received != 2 {
		t.Fatalf("bob-phone should show both: %+v", d)
	}
}

func TestRecipientsGrowAndReregistration(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
data "recipients" "opted_in" {}

notification "all" {
  user_ids = data.recipients.opted_in.user_ids
  title    = "To everyone"
  body     = "Hello all"
  tag      = "all-1"
}

notification "named" {
  user_ids = ["alice", "dave"]
  title    = "Named"
  body     = "Hello you"
}
`)
	w.apply()
	before := sb.stats()
	// carol grants the permission: the recipients list grows by one.
	sb.patch("carol-phone", `{"permission": true}`)
	p := w.planJSON()
	if a, tg := p.action("notification.all"); a != "send-new" || tg["new"] != 1 || tg["send"] != 1 {
		t.Fatalf("after carol opted in: %s %v", a, tg)
	}
	if a, _ := p.action("notification.named"); a != "no-op" {
		t.Fatalf("dave was skipped and is not reachable: %s", a)
	}
	w.apply()
	after := sb.stats()
	if after.SendRequests != before.SendRequests+1 || after.Targets != before.Targets+1 {
		t.Fatalf("sent %d requests / %d targets, want 1 / 1", after.SendRequests-before.SendRequests, after.Targets-before.Targets)
	}
	if d := sb.device("carol-phone"); d.Received != 1 {
		t.Fatalf("carol-phone: %+v", d)
	}
	// dave reinstalls the app: a new push token makes him reachable again.
	sb.patch("dave-phone", `{"push_token": true}`)
	p = w.planJSON()
	if a, tg := p.action("notification.named"); a != "retry" || tg["reachable"] != 1 {
		t.Fatalf("after dave re-registered: %s %v", a, tg)
	}
	w.apply()
	if d := sb.device("dave-phone"); d.Received != 2 { // "all" reaches him too now
		t.Fatalf("dave-phone: %+v", d)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

func TestFailedTargetIsRetried(t *testing.T) {
	sb := startSandbox(t, failingSeed)
	w := newWorkspace(t, sb, `
notification "n" {
  user_ids = ["alice", "erin"]
  title    = "Hi"
  body     = "There"
  tag      = "n"
}
`)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stdout, "1 delivered") || !strings.Contains(r.stdout, "BadDeviceToken") {
		t.Fatalf("apply:\n%s\n%s", r.stdout, r.stderr)
	}
	p := w.planJSON()
	if a, tg := p.action("notification.n"); a != "retry" || tg["retry"] != 1 || tg["send"] != 1 {
		t.Fatalf("plan after failure: %s %v", a, tg)
	}
	before := sb.stats()
	w.mustRun(1, "apply", "--auto-approve")
	if got := sb.stats().Targets - before.Targets; got != 1 {
		t.Fatalf("retry sent %d targets, want only erin", got)
	}
}

func TestStaleSavedPlanIsRefused(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
notification "a" {
  user_ids = ["alice"]
  title    = "A"
  body     = "a"
}
`)
	w.mustRun(0, "plan", "--out", "first.plan")
	w.mustRun(0, "plan", "--out", "second.plan")
	if fi, err := os.Stat(filepath.Join(w.dir, "first.plan")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("plan file mode: %v", err)
	}
	w.mustRun(0, "apply", "first.plan")
	r := w.mustRun(1, "apply", "second.plan")
	if !strings.Contains(r.stderr, "make a new plan") {
		t.Fatalf("stale plan not refused clearly:\n%s", r.stderr)
	}
	if d := sb.device("alice-phone"); d.Received != 1 {
		t.Fatalf("alice got %d notifications", d.Received)
	}
	r = w.mustRun(0, "show", "first.plan")
	if !strings.Contains(r.stdout, "notification.a will be created") {
		t.Fatalf("show:\n%s", r.stdout)
	}
}

func TestBadgeConverges(t *testing.T) {
	sb := startSandbox(t, seed)
	campaign := func(n string) string {
		return `
badge "count" {
  device_ids  = ["alice-phone", "bob-phone"]
  badge_count = ` + n + `
}
`
	}
	w := newWorkspace(t, sb, campaign("5"))
	w.apply()
	if d := sb.device("bob-phone"); d.Badge == nil || *d.Badge != 5 {
		t.Fatalf("bob-phone badge %+v", d)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	w.write(campaign("0"), sb)
	if a, tg := w.planJSON().action("badge.count"); a != "update" || tg["send"] != 2 {
		t.Fatalf("badge change: %s %v", a, tg)
	}
	w.apply()
	if d := sb.device("alice-phone"); d.Badge == nil || *d.Badge != 0 {
		t.Fatalf("alice-phone badge %+v", d)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}

func TestBatchesOf500(t *testing.T) {
	sb := startSandbox(t, seed+`
user_range "u%04d" {
  count       = 1200
  device      = "d%04d"
  environment = "test"
}
`)
	w := newWorkspace(t, sb, `
notification "big" {
  # range() stops at 1024 values: build the 1,200 ids in two parts.
  user_ids = concat([for i in range(600) : format("u%04d", i)], [for i in range(600, 1200) : format("u%04d", i)])
  title    = "Big"
  body     = "Campaign"
}
`)
	p := w.planJSON()
	if p.Summary["requests"] != 3 || p.Summary["targets"] != 1200 {
		t.Fatalf("summary %v", p.Summary)
	}
	before := sb.stats().SendRequests
	r := w.apply("--json")
	if got := sb.stats().SendRequests - before; got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if first["type"] != "version" || last["type"] != "summary" {
		t.Fatalf("apply --json lines:\n%s", r.stdout)
	}
}

func TestServerRejectionNamesTheBlock(t *testing.T) {
	// The spec leaves length bounds unshown, so validate cannot know them:
	// the service's 400 must lead the user back to the block.
	sb := startSandbox(t, seed, "--max-length", "40")
	w := newWorkspace(t, sb, `
notification "ok" {
  user_ids = ["alice"]
  title    = "Fine"
  body     = "Fine"
}

notification "wordy" {
  user_ids = ["bob"]
  title    = "Wordy"
  body     = "This body is far longer than the service accepts today."
}
`)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "400") || !strings.Contains(r.stderr, "notification.wordy (main.hcl:14): body: is 55 characters long") {
		t.Fatalf("a 400 must name the block:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "notification.ok (") {
		t.Fatalf("the valid block is blamed too:\n%s", r.stderr)
	}
	p := w.planJSON()
	if a, tg := p.action("notification.wordy"); a != "retry" || tg["retry"] != 1 {
		t.Fatalf("rejected targets must stay failed for the next plan: %s %v", a, tg)
	}
}

// TestSavedPlanRefusesPlanFlags: next to a saved plan, every flag that
// shapes a plan is refused (exit 1, nothing sent), and the plan then
// applies as made, with the variables it was made with.
func TestSavedPlanRefusesPlanFlags(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
variable "who" {
  type = string
}

notification "a" {
  user_ids = [var.who]
  title    = "A"
  body     = "a"
}

notification "b" {
  user_ids = ["bob"]
  title    = "B"
  body     = "b"
}
`)
	if err := os.WriteFile(filepath.Join(w.dir, "v.pfvars"), []byte("who = \"bob\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustRun(0, "plan", "--var", "who=alice", "--out", "p.plan")
	refused := []struct {
		args []string
		what string
	}{
		{[]string{"--var", "who=bob"}, "variables"},
		{[]string{"--var-file", "v.pfvars"}, "variables"},
		{[]string{"--target", "notification.a"}, "--target"},
		{[]string{"--replace", "notification.b"}, "--replace"},
		{[]string{"--resume", "notification.b"}, "--resume"},
		{[]string{"--allow-resend"}, "--allow-resend"},
		{[]string{"--refresh=false"}, "--refresh"},
		{[]string{"--refresh=true"}, "--refresh"},
		{[]string{"--now", "2026-01-01T00:00:00Z"}, "--now"},
		{[]string{"--retry-unknown"}, "--retry-unknown"},
		{[]string{"--max-unknown-resends", "5"}, "--max-unknown-resends"},
	}
	for _, c := range refused {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := w.mustRun(1, append([]string{"apply", "p.plan"}, c.args...)...)
			if want := "Can't set " + c.what + " when applying a saved plan"; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		})
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("refused applies sent %d requests", st.SendRequests)
	}
	// The plan's own --var applies: alice, not an error for the missing variable.
	w.mustRun(0, "apply", "p.plan", "--parallelism", "2")
	if a, b := sb.device("alice-phone").Received, sb.device("bob-phone").Received; a != 1 || b != 1 {
		t.Errorf("alice received %d, bob %d; want 1 each", a, b)
	}
}

// TestPlanNeedsNoAPIKey: a pull request's commands run with no API key in
// the environment: plan --refresh=false plans from the recipients list the
// state recorded (and says how old it is); show and state read the state.
func TestPlanNeedsNoAPIKey(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
data "recipients" "all" {}

notification "a" {
  user_ids = data.recipients.all.user_ids
  title    = "A"
  body     = "a"
}
`)
	w.apply()
	w.write(`
data "recipients" "all" {}

notification "a" {
  user_ids = data.recipients.all.user_ids
  title    = "A"
  body     = "a"
}

notification "b" {
  user_ids = ["alice"]
  title    = "B"
  body     = "b"
}
`, sb)
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "PF_KEY=") {
			env = append(env, kv)
		}
	}
	w.env = env
	before := sb.stats()
	r := w.mustRun(2, "plan", "--refresh=false", "--out", "pr.plan", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "Planned from the recipients list recorded in the state") || !strings.Contains(r.stdout, "notification.b will be created") {
		t.Errorf("plan --refresh=false without a key:\n%s", r.stdout)
	}
	w.mustRun(0, "show", "pr.plan", "--markdown")
	w.mustRun(0, "state", "list")
	w.mustRun(0, "state", "show", "notification.a")
	if r := w.mustRun(1, "plan"); !strings.Contains(r.stderr, "PF_KEY is empty") || !strings.Contains(r.stderr, "--refresh=false plans from the list") {
		t.Errorf("plan that needs the key:\n%s", r.stderr)
	}
	if after := sb.stats(); after != before {
		t.Errorf("commands without a key reached the service: %+v -> %+v", before, after)
	}
}
