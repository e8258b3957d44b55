package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestCampaignRepeatAndPause: a campaign's repeat_after and enabled reach
// its messages unless they set their own: an hour later the reminder goes
// again, the paused blocks send nothing, and history lists both
// deliveries of the reminder. The hours pass in the embedded sandbox.
func TestCampaignRepeatAndPause(t *testing.T) {
	sb := startEmbedded(t, seed)
	w := newWorkspace(t, sb, `
campaign "reminders" {
  repeat_after = "1h"

  notification "cart" {
    user_ids = ["alice"]
    title    = "Your cart"
    body     = "Still waiting"
  }

  notification "paused" {
    user_ids = ["alice"]
    title    = "Paused"
    body     = "Not now"
    enabled  = false
  }
}

campaign "off" {
  enabled = false

  notification "quiet" {
    user_ids = ["bob"]
    title    = "Quiet"
    body     = "Not now"
  }

  notification "loud" {
    user_ids = ["bob"]
    title    = "Loud"
    body     = "This one goes"
    enabled  = true
  }
}
`)
	_, at := aheadOfClock()
	p := w.planJSON("--now", at(0))
	for addr, want := range map[string]string{
		"campaign.reminders.notification.cart": "create", "campaign.reminders.notification.paused": "disabled",
		"campaign.off.notification.quiet": "disabled", "campaign.off.notification.loud": "create",
	} {
		if a, _ := p.action(addr); a != want {
			t.Errorf("%s: action %q, want %q", addr, a, want)
		}
	}
	w.apply("--now", at(0))
	w.apply("--now", at(30*time.Minute))
	check := func(when string, alice, bob int) {
		t.Helper()
		titles := func(id string) []string {
			var out []string
			for _, e := range sb.device(id).Inbox {
				out = append(out, e.Title)
			}
			return out
		}
		if a, b := sb.device("alice-phone").Received, sb.device("bob-phone").Received; a != alice || b != bob {
			t.Errorf("%s: alice-phone shows %d %v (want %d), bob-phone %d %v (want %d)", when, a, titles("alice-phone"), alice, b, titles("bob-phone"), bob)
		}
	}
	check("within the hour", 1, 1)
	w.apply("--now", at(2*time.Hour))
	check("two hours later", 2, 1)
	r := w.mustRun(0, "history", "--user", "alice")
	if strings.Count(r.stdout, `"Your cart"`) != 2 || strings.Contains(r.stdout, "Paused") {
		t.Errorf("history --user alice:\n%s", r.stdout)
	}
}
