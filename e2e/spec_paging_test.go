package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pushform/state"
)

// Issue 38: the shapes a third implementation of the service chose where
// the spec says "not shown", each served by a sandbox process, each
// ending with 0 targets lost and 0 shown twice, or a clear stop before
// anything is sent.

// launchCampaign sends one tagged notification to the recipients list.
const launchCampaign = `
data "recipients" "all" {}

notification "launch" {
  user_ids = data.recipients.all.user_ids
  title    = "Launch"
  body     = "It is here"
  tag      = "launch"
}
`

// onceEach checks that every one of the n devices of rangeSeed(n)
// received the campaign exactly once: n devices reached by n deliveries.
func onceEach(t *testing.T, sb *sandbox, n int) {
	t.Helper()
	var received struct {
		DeviceIDs []string `json:"deviceIds"`
	}
	sb.get("/_sandbox/devices", &received)
	if st := sb.stats(); len(received.DeviceIDs) != n || st.Deliveries != n {
		t.Fatalf("%d devices reached by %d deliveries; want %d of each: none lost, none shown twice", len(received.DeviceIDs), st.Deliveries, n)
	}
}

// delivered counts the targets of addr the state records delivered.
func delivered(t *testing.T, w *workspace, addr string) int {
	t.Helper()
	n := 0
	if m := w.readState().Messages[addr]; m != nil {
		for _, tg := range m.AllTargets() {
			if tg.Outcome == state.Delivered {
				n++
			}
		}
	}
	return n
}

// TestSpecPagingSchemes: the list paged by a cursor in a header beside a
// total in another (the X-Next-Cursor and X-Total-Count), by an
// explicit end flag beside a stale cursor, by offset and limit, and by
// page and per_page: one streamed apply sends all 2,878, each once, and
// the next plan has nothing to do.
func TestSpecPagingSchemes(t *testing.T) {
	for _, paging := range []string{"header", "has-more", "offset", "page"} {
		t.Run(paging, func(t *testing.T) {
			sb := startSandbox(t, rangeSeed(2878), "--recipients-paging", paging)
			w := newWorkspace(t, sb, launchCampaign)
			w.apply()
			onceEach(t, sb, 2878)
			if n := delivered(t, w, "notification.launch"); n != 2878 {
				t.Fatalf("the state records %d delivered, want 2,878", n)
			}
			if r := w.mustRun(0, "recipients"); len(strings.Fields(r.stdout)) != 2878 {
				t.Fatalf("recipients lists %d ids, want 2,878", len(strings.Fields(r.stdout)))
			}
			w.mustRun(0, "plan", "--detailed-exitcode")
			w.apply()
			onceEach(t, sb, 2878)
		})
	}
}

// TestSpecSignOfMoreStopsBeforeSending: a first page of 1,000 whose
// header says the list holds 2,878 and that names no way on: plan and
// apply, streamed or not, stop before sending anything, naming the
// request id, the total seen and what was served.
func TestSpecSignOfMoreStopsBeforeSending(t *testing.T) {
	sb := startSandbox(t, rangeSeed(2878), "--recipients-paging", "total-only")
	reqID := regexp.MustCompile(`request id req-[0-9a-f]{24}`)
	check := func(what string, r result) {
		t.Helper()
		for _, want := range []string{"the list holds 2,878 user ids (header X-Total-Count) and 1,000 were served", "names no next page pushform can follow"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: the error does not say %q:\n%s", what, want, r.stderr)
			}
		}
		if !reqID.MatchString(r.stderr) {
			t.Errorf("%s: the error names no request id:\n%s", what, r.stderr)
		}
		if st := sb.stats(); st.SendRequests != 0 {
			t.Fatalf("%s: %d send requests: nothing may be sent", what, st.SendRequests)
		}
	}
	w := newWorkspace(t, sb, launchCampaign)
	check("plan", w.mustRun(1, "plan"))
	check("apply, streamed", w.mustRun(1, "apply", "--auto-approve"))
	check("apply --json, streamed", w.mustRun(1, "apply", "--auto-approve", "--json"))
	// A block that reads the list other than as a bare reference is
	// planned whole before anything is sent: not streamed.
	w.write(`
data "recipients" "all" {}

notification "launch" {
  user_ids = [for id in data.recipients.all.user_ids : id if id != "nobody"]
  title    = "Launch"
  body     = "It is here"
}
`, sb)
	check("apply, not streamed", w.mustRun(1, "apply", "--auto-approve"))
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state")); err == nil {
		t.Errorf("a state was written although nothing was sent")
	}
}

// TestSpecListFailsHalfway: the list's third page fails every try of a
// streamed apply (five 503s) after two pages went out: the error names
// the page, how many ids were listed and how many targets were sent; the
// state holds exactly what the devices got; the next apply, the service
// back to normal, sends the rest: 3,000 devices, each once.
func TestSpecListFailsHalfway(t *testing.T) {
	sb := startSandbox(t, rangeSeed(3000), "--recipients-paging", "header", "--recipients-fault", "503x5@3")
	w := newWorkspace(t, sb, launchCampaign)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "recipients page 3, after 2,000 user ids listed") || !strings.Contains(r.stderr, "503") {
		t.Fatalf("the error does not name the page and the ids listed:\n%s", r.stderr)
	}
	st := sb.stats()
	sent := regexp.MustCompile(`([0-9,]+) targets? (?:were|was) sent`).FindStringSubmatch(r.stderr)
	if sent == nil || sent[1] != commas(st.Deliveries) {
		t.Fatalf("the error does not say the %d targets sent:\n%s", st.Deliveries, r.stderr)
	}
	if n := delivered(t, w, "notification.launch"); n != st.Deliveries || n == 0 || n > 2000 {
		t.Fatalf("the state records %d delivered, the devices got %d: want the same, from the first two pages", n, st.Deliveries)
	}
	w.apply()
	onceEach(t, sb, 3000)
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// commas formats n as pushform prints counts.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
