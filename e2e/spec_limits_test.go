package e2e

import (
	"fmt"
	"strings"
	"testing"

	"pushform/state"
)

// sixtyCampaign is 60 one-user notifications (u00000...), each with a
// body of bodyLen characters: small enough to share one request, which
// together they make too large for a body limit of 64 KiB.
func sixtyCampaign(bodyLen int) string {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "notification \"n%02d\" {\n  user_ids = [\"u%05d\"]\n  title    = \"N%02d\"\n  body     = format(\"%%0%dd\", %d)\n  tag      = \"n%02d\"\n}\n\n", i, i, i, bodyLen, i, i)
	}
	return b.String()
}

// TestSpecBodyLimit: 60 notifications packed into one request over the
// service's 64 KiB body limit, answered 413 or a request-level 400: the
// request is sent again in halves until it fits; all 60 devices get their
// notification once, nothing fails, and the next plan has nothing to do.
func TestSpecBodyLimit(t *testing.T) {
	for _, answer := range []string{"413", "400"} {
		t.Run(answer, func(t *testing.T) {
			sb := startSandbox(t, rangeSeed(60), "--max-body-bytes", "65536", "--too-large-answer", answer)
			w := newWorkspace(t, sb, sixtyCampaign(1200))
			if p := w.planJSON(); p.Summary["requests"] != 1 {
				t.Fatalf("the 60 notifications must share one request: %v", p.Summary)
			}
			r := w.apply("--json")
			splits := 0
			for _, e := range jsonEvents(t, r.stdout) {
				if e["type"] == "split" {
					splits++
					if e["too_large"] != true {
						t.Errorf("split event not marked too large: %v", e)
					}
				}
				if e["type"] == "error" {
					t.Errorf("error event: %v", e)
				}
			}
			if splits == 0 {
				t.Errorf("no split event:\n%s", r.stdout)
			}
			onceEach(t, sb, 60)
			st := w.readState()
			for i := range 60 {
				if tg := st.Messages[fmt.Sprintf("notification.n%02d", i)].Targets[fmt.Sprintf("u%05d", i)]; tg.Outcome != state.Delivered {
					t.Fatalf("n%02d: %+v", i, tg)
				}
			}
			w.mustRun(0, "plan", "--detailed-exitcode")
		})
	}
}

// TestSpecBodyLimitAlone: one notification too large even alone, among
// 59 that fit: it alone fails, with the service's words, naming its
// block; the others are delivered once; the next apply sends only it.
func TestSpecBodyLimitAlone(t *testing.T) {
	sb := startSandbox(t, rangeSeed(60), "--max-body-bytes", "65536")
	campaign := strings.Replace(sixtyCampaign(1200), `format("%01200d", 7)`, `join("", [for i in range(7) : format("%010000d", i)])`, 1)
	w := newWorkspace(t, sb, campaign)
	r := w.mustRun(1, "apply", "--auto-approve")
	if !strings.Contains(r.stderr, "notification.n07") || !strings.Contains(r.stderr, "413") {
		t.Fatalf("the error must name the block too large:\n%s", r.stderr)
	}
	tg := w.readState().Messages["notification.n07"].Targets["u00007"]
	if tg.Outcome != state.Failed || !strings.Contains(tg.Message, "too large") || !strings.Contains(tg.Message, "over the limit of 65536 bytes") {
		t.Fatalf("the one too large: %+v", tg)
	}
	var received struct {
		DeviceIDs []string `json:"deviceIds"`
	}
	sb.get("/_sandbox/devices", &received)
	if st := sb.stats(); len(received.DeviceIDs) != 59 || st.Deliveries != 59 {
		t.Fatalf("%d devices reached by %d deliveries, want the 59 others once", len(received.DeviceIDs), st.Deliveries)
	}
	if d := sb.device("d00007"); d.Received != 0 {
		t.Fatalf("d00007: %+v", d)
	}
}

// TestSpec429Burst: five 429s in a row, then two 503s: the 429s are
// waits, not tries, so the default five tries are enough; every device
// gets the campaign once and apply exits 0.
func TestSpec429Burst(t *testing.T) {
	sb := startSandbox(t, rangeSeed(1500), "--send-fault", "429x5,503x2")
	w := newWorkspace(t, sb, launchCampaign)
	r := w.apply("--parallelism", "1", "--json")
	waits, retries := 0, 0
	for _, e := range jsonEvents(t, r.stdout) {
		switch e["type"] {
		case "wait":
			waits++
		case "retry":
			retries++
		case "error":
			t.Errorf("error event: %v", e)
		}
	}
	if waits != 5 || retries != 2 {
		t.Errorf("%d waits and %d retries, want the 5 429s waited out and the 2 503s retried", waits, retries)
	}
	onceEach(t, sb, 1500)
	w.mustRun(0, "plan", "--detailed-exitcode")
}

// TestSpec429BudgetSpent: the service keeps answering 429 longer than
// --rate-limit-wait allows: nothing fails; the request waiting and the
// one not started are recorded not sent, apply exits 1 saying how many;
// the next apply sends them, each once.
func TestSpec429BudgetSpent(t *testing.T) {
	sb := startSandbox(t, rangeSeed(600), "--send-fault", "429x4")
	w := newWorkspace(t, sb, `
notification "all" {
  user_ids = [for i in range(600) : format("u%05d", i)]
  title    = "All"
  body     = "Everyone"
  tag      = "all"
}
`)
	r := w.mustRun(1, "apply", "--auto-approve", "--parallelism", "1", "--rate-limit-wait", "2s")
	if !strings.Contains(r.stderr, "600 targets were not sent") || !strings.Contains(r.stderr, "--rate-limit-wait") || !strings.Contains(r.stderr, "the next apply sends them") {
		t.Fatalf("the error must say how many were not sent and why:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "failed (") || strings.Contains(r.stdout, " 1 failed") {
		t.Errorf("a 429 failed something:\n%s", r.stdout)
	}
	for _, tg := range w.readState().Messages["notification.all"].AllTargets() {
		if tg.Outcome != state.Failed || !strings.HasPrefix(tg.Message, "not sent: ") {
			t.Fatalf("target %+v, want recorded not sent", tg)
		}
	}
	if h := w.mustRun(0, "history", "--user", "u00000"); !strings.Contains(h.stdout, "not sent: ") {
		t.Errorf("history does not show the target not sent:\n%s", h.stdout)
	}
	if st := sb.stats(); st.Deliveries != 0 {
		t.Fatalf("%d deliveries while rate limited", st.Deliveries)
	}
	w.apply()
	onceEach(t, sb, 600)
	w.mustRun(0, "plan", "--detailed-exitcode")
}
