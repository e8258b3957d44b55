package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

const twoCampaigns = `
data "recipients" "all" {}

campaign "spring" {
  notification "announce" {
    user_ids = data.recipients.all.user_ids
    title    = "Spring"
    body     = "Sale"
    tag      = "spring"
  }
}

notification "solo" {
  user_ids = ["alice"]
  title    = "Solo"
  body     = "Only alice"
}
`

func TestTargetReplaceAndRefresh(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, twoCampaigns)

	// --target limits the plan and the apply to one campaign.
	p := w.planJSON("--target", "campaign.spring")
	if len(p.Changes) != 1 || p.Changes[0].Address != "campaign.spring.notification.announce" {
		t.Fatalf("--target plan: %+v", p.Changes)
	}
	w.apply("--target", "campaign.spring")
	if a, _ := w.planJSON().action("notification.solo"); a != "create" {
		t.Fatalf("solo was applied despite --target: %s", a)
	}
	r := w.mustRun(1, "plan", "--target", "campaign.sprng")
	if !strings.Contains(r.stderr, "--target campaign.sprng matches no address") {
		t.Fatalf("typo in --target:\n%s", r.stderr)
	}
	w.apply()

	// --replace sends an unchanged address again.
	if a, tg := w.planJSON("--replace", "notification.solo").action("notification.solo"); a != "replace" && a != "resend" || tg["send"] != 1 {
		t.Fatalf("--replace: %s %v", a, tg)
	}

	// --refresh=false plans with the recipients list recorded at the last
	// apply: carol opting in is not seen until a refresh.
	sb.patch("carol-phone", `{"permission": true}`)
	if a, _ := w.planJSON("--refresh=false").action("campaign.spring.notification.announce"); a != "no-op" {
		t.Fatalf("--refresh=false saw the new recipient: %s", a)
	}
	if a, tg := w.planJSON().action("campaign.spring.notification.announce"); a != "send-new" || tg["new"] != 1 {
		t.Fatalf("refresh: %s %v", a, tg)
	}
}

func TestRecipientsAndStateCommands(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, twoCampaigns)
	r := w.mustRun(0, "recipients", "--json")
	var got struct {
		FormatVersion string   `json:"format_version"`
		Count         int      `json:"count"`
		UserIDs       []string `json:"user_ids"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if ids := got.UserIDs; strings.Join(ids, ",") != "alice,bob" || got.Count != 2 || got.FormatVersion != "1" {
		t.Fatalf("recipients: %v (carol has no permission, dave no push token)", ids)
	}
	w.apply()
	r = w.mustRun(0, "state", "list")
	if !strings.Contains(r.stdout, "campaign.spring.notification.announce") || !strings.Contains(r.stdout, "notification.solo") {
		t.Fatalf("state list:\n%s", r.stdout)
	}
	w.mustRun(0, "state", "rm", "notification.solo")
	// state rm forgets the address, not that alice received it (issue 21).
	if a, _ := w.planJSON().action("notification.solo"); a != "already-delivered" {
		t.Fatalf("after state rm the ledger still knows alice has it: %s", a)
	}
	w.apply()
	if d := sb.device("alice-phone"); d.Received != 2 {
		t.Fatalf("alice-phone received %d, want 2", d.Received)
	}
	// Removing an address from the configuration forgets it; nothing is sent.
	w.write(strings.Replace(twoCampaigns, `notification "solo"`, `notification "solo_renamed"`, 1), sb)
	p := w.planJSON()
	if a, _ := p.action("notification.solo"); a != "forget" {
		t.Fatalf("removed address: %s", a)
	}
	before := sb.stats().SendRequests
	// Same content, same target: alice has it already; --allow-resend
	// sends it once more.
	if a, _ := p.action("notification.solo_renamed"); a != "already-delivered" {
		t.Fatalf("renamed address: %s", a)
	}
	w.apply("--allow-resend")
	if sb.stats().SendRequests != before+1 {
		t.Fatal("expected one request, for the renamed address")
	}
	r = w.mustRun(0, "state", "list")
	if strings.Contains(r.stdout, "notification.solo ") || !strings.Contains(r.stdout, "notification.solo_renamed") {
		t.Fatalf("state list after forget:\n%s", r.stdout)
	}
}
