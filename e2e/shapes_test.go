package e2e

import (
	"strings"
	"testing"
	"time"

	"pushform/state"
)

// TestOKBodiesAreDelivered: a fully delivered 200 answered {} or
// {"results": []} is the spec's empty 200: delivered, nothing re-sent.
func TestOKBodiesAreDelivered(t *testing.T) {
	for _, body := range []string{"object", "results"} {
		t.Run(body, func(t *testing.T) {
			sb := startSandbox(t, rangeSeed(2), "--ok-body", body)
			w := newWorkspace(t, sb, `
notification "n" {
  user_ids = ["u00000", "u00001"]
  title    = "T"
  body     = "B"
  tag      = "n"
}
`)
			w.apply()
			for _, tg := range w.readState().Messages["notification.n"].AllTargets() {
				if tg.Outcome != state.Delivered {
					t.Fatalf("target %+v, want delivered", tg)
				}
			}
			w.mustRun(0, "plan", "--detailed-exitcode")
			if st := sb.stats(); st.SendRequests != 1 || st.Deliveries != 2 {
				t.Errorf("%d requests, %d deliveries; want 1 and 2", st.SendRequests, st.Deliveries)
			}
		})
	}
}

// TestUnreachableSinceEpochSeconds: unreachableSince in epoch seconds is
// read as seconds (told from milliseconds by magnitude).
func TestUnreachableSinceEpochSeconds(t *testing.T) {
	for _, format := range []string{"epoch-s", "epoch-ms"} {
		t.Run(format, func(t *testing.T) {
			sb := startSandbox(t, `
api_key "k-test-canary-0123456789" { environment = "test" }
user "gone" {
  device "gone-phone" {
    environment = "test"
    push_token  = false
    last_seen   = "2026-11-01T10:00:00Z"
  }
}
`, "--since-format", format)
			w := newWorkspace(t, sb, `
notification "n" {
  user_ids = ["gone"]
  title    = "T"
  body     = "B"
}
`)
			w.apply()
			tg := w.readState().Messages["notification.n"].Targets["gone"]
			want := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
			if tg.Outcome != state.Skipped || tg.UnreachableSince == nil || !tg.UnreachableSince.Equal(want) {
				t.Fatalf("target %+v, want skipped, unreachable since %s", tg, want)
			}
		})
	}
}

// TestIssueReasonUnderDetail: a 400 whose issue says where by a JSON
// pointer and why under detail names the block and the reason.
func TestIssueReasonUnderDetail(t *testing.T) {
	sb := startSandbox(t, fiveSeed, "--max-length", "20", "--issues-shape", "pointer-detail")
	w := newWorkspace(t, sb, `
notification "p1" {
  user_ids = ["u1"]
  title    = "Fine"
  body     = "Fine"
}

notification "p2" {
  user_ids = ["u2"]
  title    = "Fine"
  body     = "Fine"
}

notification "p3" {
  user_ids = ["u3"]
  title    = "A title far longer than twenty"
  body     = "Fine"
}
`)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "notification.p3 (main.hcl:") || !strings.Contains(r.stderr, "title: is 30 characters long; at most 20 are allowed") {
		t.Fatalf("the error must name the block with the service's reason:\n%s", r.stderr)
	}
	tg := w.readState().Messages["notification.p3"].Targets["u3"]
	if tg.Outcome != state.Failed || !strings.Contains(tg.Message, "is 30 characters long") {
		t.Errorf("target %+v", tg)
	}
}
