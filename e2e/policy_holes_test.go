package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestSavedOverrideCoversWhatWasReviewed: an override recorded in a saved
// plan lets through the failures its plan showed, not others a changed
// policy finds when apply checks the policies again.
func TestSavedOverrideCoversWhatWasReviewed(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	const campaign = `
notification "a" {
  user_ids    = ["g0001", "g0002"]
  title       = "Sale"
  body        = "Now"
  open_to_url = "http://shop.example.com/sale"
}

notification "b" {
  user_ids = ["g0003"]
  title    = "TODO title"
  body     = "Now"
}

policy "content" {
  for_each_change = true
  condition       = CONDITION
  error_message   = "${change.address} fails the content rules"
}
`
	https := `change.content.open_to_url == null ? true : startswith(change.content.open_to_url, "https://")`
	w := newWorkspace(t, sb, strings.Replace(campaign, "CONDITION", https, 1))
	w.mustRun(0, "plan", "--out", "p.plan", "--override-policy", "content", "--override-reason", "the http link of a is fine")

	// The policy is made stricter after the review: b fails it too, and
	// the override granted for a does not cover b.
	w.write(strings.Replace(campaign, "CONDITION", `!endswith(change.content.title, "title") && (`+https+`)`, 1), sb)
	r := w.mustRun(1, "apply", "p.plan")
	if !strings.Contains(r.stdout, "notification.b fails the content rules") || !strings.Contains(r.stderr, "nothing was sent") ||
		!strings.Contains(r.stderr, "override of content covers the failures its plan showed") {
		t.Errorf("apply of a plan whose overridden policy fails anew:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("apply sent %d requests beyond what the override was reviewed for", st.SendRequests)
	}

	// The policy as reviewed: the override holds.
	w.write(strings.Replace(campaign, "CONDITION", https, 1), sb)
	w.mustRun(0, "apply", "p.plan")
	if st := sb.stats(); st.Targets != 3 {
		t.Errorf("the reviewed plan sent %d targets, want 3", st.Targets)
	}
}

// TestPlanFromAClockAhead: a saved plan that says it was made later than
// apply's clock (the planning machine's clock was ahead) is refused: its
// age cannot be told, and it would not expire until that clock's time.
func TestPlanFromAClockAhead(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, `
notification "sale" {
  user_ids = ["g0001"]
  title    = "Spring sale"
  body     = "20% off"
}
`)
	w.mustRun(0, "plan", "--out", "p.plan")
	plan := readPlanMap(t, w, "p.plan")
	made, err := time.Parse(time.RFC3339Nano, plan["made_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	plan["made_at"] = made.AddDate(1, 0, 0).Format(time.RFC3339Nano)
	writePlanMap(t, w, "ahead.plan", plan)
	r := w.mustRun(1, "apply", "ahead.plan")
	if !strings.Contains(r.stderr, "after this machine's clock") || !strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("apply of a plan made a year ahead:\n%s", r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Fatalf("apply sent %d requests", st.SendRequests)
	}
	w.mustRun(0, "apply", "p.plan")
}

// TestPolicyOverALocalOfTheRecipients: a policy's condition over a local
// that reads the recipients list sees the list, on plan and on the apply
// of the saved plan (it was "not known", so such a policy always denied).
func TestPolicyOverALocalOfTheRecipients(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	const campaign = `
data "recipients" "all" {}

locals {
  everyone = data.recipients.all.user_ids
}

notification "all" {
  user_ids = local.everyone
  title    = "Hello"
  body     = "Everyone"
}

policy "audience" {
  condition     = length(local.everyone) <= LIMIT
  error_message = "${length(local.everyone)} recipients, more than LIMIT"
}
`
	w := newWorkspace(t, sb, strings.Replace(campaign, "LIMIT", "1000", 2))
	r := w.mustRun(1, "plan")
	if !strings.Contains(r.stdout, "1500 recipients, more than 1000") {
		t.Errorf("plan:\n%s\n%s", r.stdout, r.stderr)
	}
	w.write(strings.Replace(campaign, "LIMIT", "2000", 2), sb)
	w.mustRun(0, "plan", "--out", "p.plan")
	w.mustRun(0, "apply", "p.plan")
	if st := sb.stats(); st.Targets != 1500 {
		t.Errorf("sent %d targets, want 1500", st.Targets)
	}
}
