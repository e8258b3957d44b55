package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"pushform/state"
)

// fiveSeed has five users with one test device each.
const fiveSeed = `
api_key "k-test-canary-0123456789" { environment = "test" }
user "u1" {
  device "d1" { environment = "test" }
}
user "u2" {
  device "d2" { environment = "test" }
}
user "u3" {
  device "d3" { environment = "test" }
}
user "u4" {
  device "d4" { environment = "test" }
}
user "u5" {
  device "d5" { environment = "test" }
}
`

// TestPackedRequestIsolatesInvalid: five one-user notifications share one
// request and one of them is longer than the service accepts. One apply
// delivers the four, records the fifth failed with the service's message
// and the 400's request id, names only its block, and exits 1; the next
// apply sends nothing for the four.
func TestPackedRequestIsolatesInvalid(t *testing.T) {
	sb := startSandbox(t, fiveSeed, "--max-length", "40")
	var campaign strings.Builder
	for i := 1; i <= 5; i++ {
		body := fmt.Sprintf("Short body %d", i)
		if i == 3 {
			body = "This body is far longer than the service accepts today."
		}
		fmt.Fprintf(&campaign, "notification \"n%d\" {\n  user_ids = [\"u%d\"]\n  title    = \"N%d\"\n  body     = %q\n  tag      = \"n%d\"\n}\n\n", i, i, i, body, i)
	}
	w := newWorkspace(t, sb, campaign.String())
	if p := w.planJSON(); p.Summary["requests"] != 1 {
		t.Fatalf("the five notifications must share one request: %v", p.Summary)
	}

	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "notification.n3 (main.hcl:") || !strings.Contains(r.stderr, "body: is 55 characters long") {
		t.Fatalf("the error must name the invalid block with the service's message:\n%s", r.stderr)
	}
	for _, ok := range []string{"n1", "n2", "n4", "n5"} {
		if strings.Contains(r.stderr, "notification."+ok+" ") {
			t.Errorf("a valid block is blamed:\n%s", r.stderr)
		}
	}
	for _, d := range []string{"d1", "d2", "d4", "d5"} {
		if v := sb.device(d); v.Received != 1 {
			t.Errorf("%s received %d, want 1: %+v", d, v.Received, v)
		}
	}
	if v := sb.device("d3"); v.Received != 0 {
		t.Errorf("d3 received the invalid notification: %+v", v)
	}

	st := w.readState()
	bad := st.Messages["notification.n3"].Targets["u3"]
	if bad.Outcome != state.Failed || !strings.Contains(bad.Message, "is 55 characters long") || bad.RequestID == "" {
		t.Fatalf("the invalid notification's target: %+v", bad)
	}
	var entry struct {
		Status int `json:"status"`
	}
	sb.get("/_sandbox/log/"+bad.RequestID, &entry)
	if entry.Status != http.StatusBadRequest {
		t.Errorf("request %s of the failed target is a %d in the service's log, want the 400", bad.RequestID, entry.Status)
	}
	for _, n := range []string{"1", "2", "4", "5"} {
		tg := st.Messages["notification.n"+n].Targets["u"+n]
		if tg.Outcome != state.Delivered || tg.RequestID == bad.RequestID || tg.Message != "" {
			t.Errorf("u%s: %+v; want delivered by the request that delivered it", n, tg)
		}
	}

	before := sb.stats()
	r = w.mustRun(1, "apply", "--auto-approve", "--json")
	for _, e := range jsonEvents(t, r.stdout) {
		if e["type"] == "request" && fmt.Sprint(e["addresses"]) != "[notification.n3]" {
			t.Errorf("the next apply sends more than the invalid block: %v", e)
		}
	}
	if after := sb.stats(); after.Deliveries != before.Deliveries {
		t.Errorf("the next apply delivered %d more", after.Deliveries-before.Deliveries)
	}
	p := w.planJSON()
	for _, n := range []string{"1", "2", "4", "5"} {
		if a, _ := p.action("notification.n" + n); a != "no-op" {
			t.Errorf("notification.n%s: %s, want no-op", n, a)
		}
	}
	if a, tg := p.action("notification.n3"); a != "retry" || tg["retry"] != 1 {
		t.Errorf("notification.n3: %s %v, want a retry of its failed target", a, tg)
	}
}

// TestTagChanges: spec 2.1 rule 5 replaces only a notification with the
// same tag. A tag change with the content is a resend the device shows
// beside the earlier one; a change of the tag alone sends nothing.
func TestTagChanges(t *testing.T) {
	sb := startSandbox(t, seed)
	campaign := func(body, tag string) string {
		return fmt.Sprintf("notification \"promo\" {\n  user_ids = [\"alice\"]\n  title    = \"Sale\"\n  body     = %q\n  tag      = %q\n}\n", body, tag)
	}
	w := newWorkspace(t, sb, campaign("20% off", "promo-a"))
	w.apply()

	// Only the tag: nothing to send, and the plan says how to anyway.
	w.write(campaign("20% off", "promo-b"), sb)
	p := w.planJSON()
	warn := strings.Join(p.Warnings, "\n")
	if a, tg := p.action("notification.promo"); a != "no-op" || tg["tag_only"] != 1 ||
		!strings.Contains(warn, `only the tag changed, from "promo-a" to "promo-b"`) || !strings.Contains(warn, "--replace notification.promo") {
		t.Fatalf("tag-only change: %s %v %q", a, tg, p.Warnings)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
	w.apply()
	if d := sb.device("alice-phone"); d.Received != 1 {
		t.Fatalf("a tag-only change sent something: %+v", d)
	}

	// The body too: a resend with the duplicate warning, and the device
	// shows both, as the warning said.
	w.write(campaign("30% off", "promo-b"), sb)
	p = w.planJSON()
	if a, _ := p.action("notification.promo"); a != "resend" || !strings.Contains(strings.Join(p.Warnings, "\n"), `the tag changed from "promo-a" to "promo-b"`) {
		t.Fatalf("tag and body changed: %s %q", a, p.Warnings)
	}
	w.apply()
	if d := sb.device("alice-phone"); len(d.Inbox) != 2 {
		t.Fatalf("alice-phone must show both (tags promo-a and promo-b): %+v", d)
	}

	// Same tag, new body: a replace, no warning; still two on the device.
	w.write(campaign("40% off", "promo-b"), sb)
	p = w.planJSON()
	if a, _ := p.action("notification.promo"); a != "replace" || len(p.Warnings) != 0 {
		t.Fatalf("same tag, body changed: %s %q", a, p.Warnings)
	}
	w.apply()
	d := sb.device("alice-phone")
	bodies := []string{}
	for _, e := range d.Inbox {
		bodies = append(bodies, e.Tag+"="+e.Body)
	}
	if fmt.Sprint(bodies) != "[promo-a=20% off promo-b=40% off]" && fmt.Sprint(bodies) != "[promo-b=40% off promo-a=20% off]" {
		t.Fatalf("alice-phone shows %v", bodies)
	}
}

// TestSharedTagOverlapWarns: two notifications with one tag reach the same
// user through a recipients list known only at plan time.
func TestSharedTagOverlapWarns(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
data "recipients" "all" {}

notification "a" {
  user_ids = data.recipients.all.user_ids
  title    = "A"
  body     = "a"
  tag      = "promo"
}

notification "b" {
  user_ids = ["alice"]
  title    = "B"
  body     = "b"
  tag      = "promo"
}
`)
	p := w.planJSON()
	want := `notification.b: shares tag "promo" with notification.a, and both reach 1 of the same users`
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], want) || !strings.Contains(p.Warnings[0], "shared_tag = true") {
		t.Fatalf("warnings %q, want %q", p.Warnings, want)
	}
}

// TestAuthErrorShownOnce: a rejected key is printed once, and the
// request's targets are recorded failed with the 401's request id.
func TestAuthErrorShownOnce(t *testing.T) {
	sb := startSandbox(t, `
api_key "k-someone-else" { environment = "test" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
`)
	w := newWorkspace(t, sb, `
notification "n" {
  user_ids = ["alice"]
  title    = "T"
  body     = "B"
}
`)
	r := w.mustRun(1, "apply", "--auto-approve")
	if n := strings.Count(r.stderr, "rejected the API key"); n != 1 {
		t.Fatalf("the 401 is printed %d times:\n%s", n, r.stderr)
	}
	tg := w.readState().Messages["notification.n"].Targets["alice"]
	if tg.Outcome != state.Failed || !strings.HasPrefix(tg.RequestID, "req-") || !strings.Contains(r.stderr, tg.RequestID) {
		t.Fatalf("target %+v; stderr:\n%s", tg, r.stderr)
	}
}

// TestUnreadableAnswersAreNotResentForever: a service whose 200 cannot be
// read may have delivered each time. Each apply sends the tagged target
// once (no retry in the run), and after --max-unknown-resends such
// requests the plan holds it, naming the requests.
func TestUnreadableAnswersAreNotResentForever(t *testing.T) {
	var sends atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/push-notifications/send") {
			http.NotFound(w, r)
			return
		}
		n := sends.Add(1)
		w.Header().Set("x-request-id", fmt.Sprintf("req-garbled-%d", n))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		fmt.Fprint(w, `{"results":"delivered, more or less"}`)
	}))
	t.Cleanup(srv.Close)
	w := newWorkspace(t, &sandbox{t: t, base: srv.URL + "/v1", root: srv.URL}, `
notification "n" {
  topics = ["a", "b"]
  title  = "T"
  body   = "B"
  tag    = "n"
}
`)
	for run := int64(1); run <= 3; run++ {
		w.mustRun(1, "apply", "--auto-approve")
		if got := sends.Load(); got != run {
			t.Fatalf("after %d applies the service got %d requests: an unreadable 200 must not be retried in the run", run, got)
		}
	}
	p := w.planJSON()
	if a, tg := p.action("notification.n"); a != "no-op" || tg["held"] != 2 ||
		!strings.Contains(strings.Join(p.Warnings, "\n"), "req-garbled-3") {
		t.Fatalf("after 3 unanswered requests: %s %v %q", a, tg, p.Warnings)
	}
	w.mustRun(0, "apply", "--auto-approve")
	if got := sends.Load(); got != 3 {
		t.Fatalf("a held target was sent again (%d requests)", got)
	}
	if p := w.planJSON("--max-unknown-resends", "4"); p.Summary["requests"] != 1 {
		t.Fatalf("--max-unknown-resends 4 must send it again: %v", p.Summary)
	}
	// New content under the same tag replaces whatever the devices show:
	// it cannot show twice, so the held target gets it (issue 22, 5).
	w.write(`
notification "n" {
  topics = ["a", "b"]
  title  = "T2"
  body   = "B"
  tag    = "n"
}
`, &sandbox{t: t, base: srv.URL + "/v1", root: srv.URL})
	if p := w.planJSON(); p.Summary["requests"] != 1 || p.Summary["replace"] != 1 {
		t.Fatalf("a same-tag replace of a held target: %v %q", p.Summary, p.Warnings)
	}
	w.mustRun(1, "apply", "--auto-approve")
	if got := sends.Load(); got != 4 {
		t.Fatalf("the replace was not sent (%d requests)", got)
	}
}
