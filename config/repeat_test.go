package config

import (
	"testing"
	"time"
)

// TestEnabledAndRepeatAfter checks the values of enabled and repeat_after:
// defaults, a message's own, a campaign's inherited unless overridden, and
// per for_each instance.
func TestEnabledAndRepeatAfter(t *testing.T) {
	src := svc + `
campaign "weekly" {
  enabled      = false
  repeat_after = "7d"
  notification "inherits" {
    user_ids = ["u"]
    title    = "t"
    body     = "b"
  }
  badge "own" {
    device_ids   = ["d"]
    badge_count  = 0
    enabled      = true
    repeat_after = "1d12h"
  }
}
campaign "plain" {
  notification "paused" {
    user_ids = ["u"]
    title    = "t"
    body     = "b"
    enabled  = false
  }
}
notification "default" {
  user_ids = ["u"]
  title    = "t"
  body     = "b"
}
notification "hourly" {
  user_ids     = ["u"]
  title        = "t"
  body         = "b"
  repeat_after = "1h"
  enabled      = "true"
}
notification "each" {
  for_each     = { a = "30m", b = "2h" }
  user_ids     = [each.key]
  title        = "t"
  body         = "b"
  repeat_after = each.value
  enabled      = each.key == "a"
}
`
	cfg := mustLoad(t, map[string]string{"main.hcl": src}, Options{})
	type want struct {
		disabled bool
		repeat   time.Duration
	}
	wants := map[string]want{
		"campaign.weekly.notification.inherits": {true, 7 * 24 * time.Hour},
		"campaign.weekly.badge.own":             {false, 36 * time.Hour},
		"campaign.plain.notification.paused":    {true, 0},
		"notification.default":                  {false, 0},
		"notification.hourly":                   {false, time.Hour},
		`notification.each["a"]`:                {false, 30 * time.Minute},
		`notification.each["b"]`:                {true, 2 * time.Hour},
	}
	if len(cfg.Messages) != len(wants) {
		t.Fatalf("got %d messages, want %d", len(cfg.Messages), len(wants))
	}
	for _, m := range cfg.Messages {
		w, ok := wants[m.Address]
		if !ok {
			t.Errorf("unexpected message %s", m.Address)
			continue
		}
		if m.Disabled != w.disabled || m.RepeatAfter != w.repeat {
			t.Errorf("%s: Disabled=%v RepeatAfter=%v, want %v %v", m.Address, m.Disabled, m.RepeatAfter, w.disabled, w.repeat)
		}
	}
	if c := cfg.Campaigns["weekly"]; !c.Disabled || c.RepeatAfter != 7*24*time.Hour {
		t.Errorf("campaign weekly: Disabled=%v RepeatAfter=%v", c.Disabled, c.RepeatAfter)
	}
	if c := cfg.Campaigns["plain"]; c.Disabled || c.RepeatAfter != 0 {
		t.Errorf("campaign plain: Disabled=%v RepeatAfter=%v", c.Disabled, c.RepeatAfter)
	}
}

// TestRepeatAfterFromRecipients: a value that reads a data source is known
// once Resolve has the recipients, and a campaign's setting still holds.
func TestRepeatAfterFromRecipients(t *testing.T) {
	src := svc + `
data "recipients" "r" {}
campaign "c" {
  repeat_after = "1h"
  notification "n" {
    user_ids = data.recipients.r.user_ids
    title    = "t"
    body     = "b"
    enabled  = length(data.recipients.r.user_ids) > 1
  }
}
`
	l := NewLoader()
	dir := writeDir(t, map[string]string{"main.hcl": src})
	cfg, diags := l.Load(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	out, diags := l.Resolve(cfg, map[string][]string{"r": {"a"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	m := out.Messages[0]
	if !m.Disabled || m.RepeatAfter != time.Hour {
		t.Errorf("Disabled=%v RepeatAfter=%v, want true 1h", m.Disabled, m.RepeatAfter)
	}
}
