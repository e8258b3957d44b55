package command

import (
	"regexp"
	"strings"
	"testing"

	"pushform/internal/testutil"
)

// PUSHFORM_LOG=debug logs every exchange on stderr, with counts and
// request ids, never a target id or the key.
func TestDebugLog(t *testing.T) {
	dir := testutil.Quickstart(t)
	code, out, errOut := runIn(t, dir, "", []string{"PUSHFORM_LOG=debug"}, "apply", "--auto-approve")
	if code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	line := regexp.MustCompile(`(?m)^\S+Z \[DEBUG\] (GET|POST) /push-notifications/(recipients|send)( page=\d+)? status=200 request_id=req-\w+ duration=\S+( ids_sent=\d+)? ids_received=\d+$`)
	lines := line.FindAllString(errOut, -1)
	if len(lines) < 2 || !strings.Contains(errOut, "POST /push-notifications/send") {
		t.Fatalf("want a debug line per exchange, got:\n%s", errOut)
	}
	for _, secret := range []string{"alice", "bob", "carol", "sandbox-test-key", "sandbox-production-key"} {
		if strings.Contains(errOut, secret) {
			t.Errorf("debug log shows %q:\n%s", secret, errOut)
		}
	}
	// Without the variable, nothing is logged.
	_, _, errOut = runIn(t, dir, "", nil, "plan")
	if strings.Contains(errOut, "[DEBUG]") {
		t.Errorf("debug lines without PUSHFORM_LOG:\n%s", errOut)
	}
}
