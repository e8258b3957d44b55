package config

import (
	"testing"
	"time"
)

const guardsConfig = svc + `
frequency_cap {
  max = 3
  per = "1d"
}
data "recipients" "r" {}
campaign "bf" {
  send_rate   = "10000/minute"
  max_targets = 5
  frequency_cap {
    max = 1
    per = "12h"
  }
  notification "doors" {
    user_ids    = data.recipients.r.user_ids
    title       = "Doors open"
    body        = "Now"
    send_after  = "2026-11-27T08:00:00Z"
    send_before = "2026-11-27T20:00:00Z"
    send_rate   = "600/minute"
    max_targets = 3
    tag         = "bf-2026"
    shared_tag  = true
  }
}
badge "b" {
  for_each    = toset(["d1", "d2"])
  device_ids  = [each.key]
  badge_count = 0
  send_rate   = "2/s"
}
`

func TestGuardsDecoded(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.hcl": guardsConfig}, Options{})
	if fc := cfg.FrequencyCap; fc == nil || fc.Max != 3 || fc.Per != 24*time.Hour || fc.Pos.Line != 5 {
		t.Errorf("frequency_cap = %+v", fc)
	}
	c := cfg.Campaigns["bf"]
	if c.SendRate == nil || *c.SendRate != (Rate{10000, time.Minute}) || c.MaxTargets != 5 ||
		c.SendRatePos.Line != 11 || c.MaxTargetsPos.Line != 12 || c.FrequencyCap == nil || c.FrequencyCap.Max != 1 || c.FrequencyCap.Per != 12*time.Hour {
		t.Errorf("campaign = %+v", c)
	}
	m := findMessage(t, cfg, "campaign.bf.notification.doors")
	after := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	before := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	if m.SendAfter == nil || !m.SendAfter.Equal(after) || m.SendBefore == nil || !m.SendBefore.Equal(before) ||
		m.SendRate == nil || m.SendRate.String() != "600/minute" || m.MaxTargets != 3 || m.MaxTargetsPos.Line != 24 || !m.SharedTag {
		t.Errorf("doors = %+v", m)
	}
	for _, addr := range []string{`badge.b["d1"]`, `badge.b["d2"]`} {
		if b := findMessage(t, cfg, addr); b.SendRate == nil || *b.SendRate != (Rate{2, time.Second}) || b.MaxTargets != 0 || b.SharedTag {
			t.Errorf("%s = %+v", addr, b)
		}
	}
}

// TestAudienceCheckedWhenRecipientsArrive: max_targets over a recipients
// list is an error of Resolve, pointing at the attribute.
func TestAudienceCheckedWhenRecipientsArrive(t *testing.T) {
	l := NewLoader()
	cfg, diags := l.Load(writeDir(t, map[string]string{"main.hcl": guardsConfig}), Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	tests := []struct {
		ids   []string
		lines []int // lines of the errors, in order
	}{
		{[]string{"a", "b", "c"}, nil},
		{[]string{"a", "b", "c", "d"}, []int{24}},
		{[]string{"a", "b", "c", "d", "e", "f"}, []int{12, 24}},
	}
	for _, tt := range tests {
		_, diags := l.Resolve(cfg, map[string][]string{"r": tt.ids})
		var lines []int
		for _, d := range diags {
			if d.Summary != "Audience over max_targets" {
				t.Errorf("unexpected diagnostic:%s", describe(diags))
				continue
			}
			lines = append(lines, d.Subject.Start.Line)
		}
		if len(lines) != len(tt.lines) || (len(lines) > 0 && (lines[0] != tt.lines[0] || lines[len(lines)-1] != tt.lines[len(tt.lines)-1])) {
			t.Errorf("%d recipients: errors at lines %v, want %v:%s", len(tt.ids), lines, tt.lines, describe(diags))
		}
	}
}
