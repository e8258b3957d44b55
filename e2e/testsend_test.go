package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestTestSend: a test send reaches only the given device (test_devices
// by default), appears in history as a test send, and the later apply
// still delivers to that device's user; the ledger does not count it.
func TestTestSend(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	w := newWorkspace(t, sb, fmt.Sprintf(`
campaign "spring" {
  test_devices = ["gd0003"]
  notification "sale" {
    user_ids = %s
    title    = "Spring sale"
    body     = "20%% off"
    tag      = "spring"
  }
}
`, guardUsers(10)))
	r := w.mustRun(0, "test-send", "campaign.spring.notification.sale")
	reqID := regexp.MustCompile(`request id (req-\S+):`).FindStringSubmatch(r.stdout)
	if reqID == nil || !strings.Contains(r.stdout, "device gd0003: delivered") {
		t.Fatalf("test-send:\n%s", r.stdout)
	}
	if st := sb.stats(); st.SendRequests != 1 || st.Targets != 1 {
		t.Fatalf("a test send to one device: %+v", st)
	}
	if d := sb.device("gd0003"); d.Received != 1 || d.Inbox[0].Title != "Spring sale" {
		t.Fatalf("gd0003: %+v", d)
	}
	if d := sb.device("gd0004"); d.Received != 0 {
		t.Fatalf("gd0004 received the test send: %+v", d)
	}
	w.mustRun(0, "test-send", "campaign.spring.notification.sale", "--user", "g0005")
	if d := sb.device("gd0005"); d.Received != 1 {
		t.Fatalf("gd0005 after --user g0005: %+v", d)
	}
	h := w.mustRun(0, "history", "--device", "gd0003").stdout
	if !strings.Contains(h, "test send, delivered") || !strings.Contains(h, reqID[1]) {
		t.Errorf("history --device gd0003:\n%s", h)
	}
	if h := w.mustRun(0, "history", "campaign.spring.notification.sale").stdout; !strings.Contains(h, "(test send to 2 targets, not counted)") {
		t.Errorf("history of the address:\n%s", h)
	}
	// The test sends count as nothing: apply sends to all ten users.
	if a, tg := w.planJSON().action("campaign.spring.notification.sale"); a != "create" || tg["send"] != 10 {
		t.Fatalf("plan after test sends: %s %v", a, tg)
	}
	w.apply()
	if d := sb.device("gd0003"); d.Received != 2 {
		t.Errorf("gd0003 after apply: received %d, want the test and the real send", d.Received)
	}
	shownOnce(t, sb, 10, -1, "Spring sale") // the tag replaces the test copy
	w.mustRun(0, "plan", "--detailed-exitcode")
	if r := w.run("test-send", "campaign.spring.notification.nope"); r.code != 1 || !strings.Contains(r.stderr, "is not a notification or badge") {
		t.Errorf("unknown address: %d %s", r.code, r.stderr)
	}
	// An id from the command line is escaped for the terminal; a device
	// the service does not know is not delivered: exit 1.
	r = w.run("test-send", "campaign.spring.notification.sale", "--device", "gd\x1b[31mred")
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "\x1b") || !strings.Contains(r.stdout, `device gd\x1b[31mred: skipped`) {
		t.Errorf("a hostile device id: exit %d\n%q\n%q", r.code, r.stdout, r.stderr)
	}
}
