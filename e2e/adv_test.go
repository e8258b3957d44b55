package e2e

import (
	"strings"
	"testing"
)

// Holes found by trying the promises of issue 37 with features combined
// (h/adv). Each test fails on the commit before its fix.

// TestScheduledRepeatReadFromDataAwaitsReview: repeat_after written as a
// condition on a data source (`length(data...) >= 0 ? "7d" : "1d"`) was
// in the shape as "unknown, read from data.recipients.all", so editing
// its literal to "1h" changed nothing a reviewer approved: three
// scheduled runs an hour apart put 4 copies on each device. Now the
// shape holds how such a value is computed: the runs await review (exit
// 4), one copy each.
func TestScheduledRepeatReadFromDataAwaitsReview(t *testing.T) {
	sb := startEmbedded(t, seed)
	const block = `
data "recipients" "all" {}
notification "weekly" {
  user_ids     = data.recipients.all.user_ids
  title        = "Weekly"
  body         = "Our picks"
  repeat_after = length(data.recipients.all.user_ids) >= 0 ? "%s" : "1d"
}
`
	w := newWorkspace(t, sb, strings.Replace(block, "%s", "7d", 1))
	w.apply("--now", "2030-01-01T00:00:00Z")
	w.write(strings.Replace(block, "%s", "1h", 1), sb)
	var codes []int
	for _, at := range []string{"2030-01-01T01:00:01Z", "2030-01-01T02:00:02Z", "2030-01-01T03:00:03Z"} {
		r := w.run("apply", "--scheduled", "--now", at)
		codes = append(codes, r.code)
		if r.code == 4 && !strings.Contains(r.stdout, "notification.weekly: changed since the reviewed apply") {
			t.Errorf("apply --scheduled does not say why:\n%s", r.stdout)
		}
	}
	received := sb.device("alice-phone").Received
	t.Logf("figures: 3 scheduled runs an hour apart after repeat_after 7d -> 1h behind a data source: exit codes %v, alice-phone received %d", codes, received)
	for _, c := range codes {
		if c != 4 {
			t.Errorf("apply --scheduled exited %d, want 4", c)
		}
	}
	if received != 1 {
		t.Errorf("alice-phone received %d, want 1: unreviewed repeats went out", received)
	}
}

// TestScheduledAfterListFailsHalfway: a reviewed apply (--auto-approve,
// so it streams) whose recipients list broke off on page 3 sent the
// first two pages, and then the cron's apply --scheduled released
// nothing, saying "the state was written before pushform recorded
// reviewed shapes" of a state one run old (exit 4): the shapes were
// recorded only once the plan was whole, never when the list broke off.
// Now a streamed apply accepts its shapes before its first request, as
// apply does: the scheduled run sends the rest, once each.
func TestScheduledAfterListFailsHalfway(t *testing.T) {
	sb := startSandbox(t, rangeSeed(3000), "--recipients-paging", "header", "--recipients-fault", "503x5@3")
	w := newWorkspace(t, sb, launchCampaign)
	w.mustRun(1, "apply", "--auto-approve")
	sent := sb.stats().Deliveries
	code, _, targets, r := w.scheduled(sb)
	t.Logf("figures: the reviewed apply sent %d before the list broke off; apply --scheduled then exited %d and sent %d", sent, code, targets)
	if code != 0 || targets != 3000-sent {
		t.Fatalf("apply --scheduled exited %d and sent %d, want 0 and %d:\n%s%s", code, targets, 3000-sent, r.stdout, r.stderr)
	}
	onceEach(t, sb, 3000)
}
