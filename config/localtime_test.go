package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestLocalDelivery checks time_zones, quiet_hours, deliver_at_local and
// ignore_quiet_hours: the top level's, a campaign's overriding them, and
// a message's own.
func TestLocalDelivery(t *testing.T) {
	src := svc + `
time_zones {
  by_user = { for r in csvdecode(file("users.csv")) : r.user_id => r.tz }
  default = "America/New_York"
}
quiet_hours {
  from = "21:00"
  to   = "08:00"
}
campaign "asia" {
  deliver_at_local = "2026-12-01 09:30"
  time_zones { default = "Asia/Tokyo" }
  quiet_hours {
    from = "22:00"
    to   = "07:00"
  }
  notification "n" {
    user_ids = ["a"]
    title    = "t"
    body     = "b"
  }
  badge "b" {
    user_ids    = ["a"]
    badge_count = 1
  }
}
notification "urgent" {
  user_ids           = ["a", "b"]
  title              = "t"
  body               = "b"
  deliver_at_local   = "07:05"
  ignore_quiet_hours = true
}
`
	cfg := mustLoad(t, map[string]string{"main.hcl": src, "users.csv": "user_id,tz\na,Europe/Berlin\nb,UTC\n"}, Options{})
	tz := cfg.TimeZones
	if tz == nil || tz.Default().String() != "America/New_York" || len(tz.Users.IDs) != 2 {
		t.Fatalf("time_zones: %+v", tz)
	}
	if z, ok := tz.Users.Find("a"); !ok || tz.Zones[z].String() != "Europe/Berlin" {
		t.Fatalf("zone of a: %d %v", z, ok)
	}
	if q := cfg.QuietHours; q == nil || q.From != 21*60 || q.To != 8*60 || !q.Contains(23*60) || !q.Contains(7*60+59) || q.Contains(8*60) || q.Contains(12*60) {
		t.Fatalf("quiet_hours: %+v", cfg.QuietHours)
	}
	byAddr := map[string]*Message{}
	for _, m := range cfg.Messages {
		byAddr[m.Address] = m
	}
	n := byAddr["campaign.asia.notification.n"]
	if n.DeliverAtLocal == nil || n.DeliverAtLocal.String() != "2026-12-01 09:30" || n.TimeZones.Default().String() != "Asia/Tokyo" || n.QuietHours.From != 22*60 {
		t.Errorf("campaign.asia.notification.n: %+v %+v %+v", n.DeliverAtLocal, n.TimeZones, n.QuietHours)
	}
	if b := byAddr["campaign.asia.badge.b"]; b.DeliverAtLocal != nil {
		t.Errorf("a badge inherited deliver_at_local %s", b.DeliverAtLocal)
	}
	u := byAddr["notification.urgent"]
	if u.DeliverAtLocal == nil || u.DeliverAtLocal.String() != "07:05" || !u.IgnoreQuietHours || u.TimeZones != cfg.TimeZones || u.QuietHours != cfg.QuietHours {
		t.Errorf("notification.urgent: %+v ignore=%v", u.DeliverAtLocal, u.IgnoreQuietHours)
	}
}

func TestLocalDeliveryDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown zone in by_user", `
time_zones {
  by_user = { alice = "Europe/Berlin", bob = "Mars/Olympus", carol = "Mars/Olympus" }
}`, []string{`main.hcl:6 Unknown time zone: by_user maps "bob", "carol" to "Mars/Olympus"`}},
		{"unknown default", `
time_zones { default = "Local" }`, []string{`main.hcl:5 Unknown time zone: default must be an IANA time zone name`}},
		{"bad quiet_hours", `
quiet_hours {
  from = "9pm"
  to   = "08:00"
}`, []string{`main.hcl:6 Invalid from: quiet_hours from: a time of day is written HH:MM`}},
		{"empty quiet_hours", `
quiet_hours {
  from = "08:00"
  to   = "08:00"
}`, []string{`main.hcl:5 Empty quiet_hours`}},
		{"two time_zones blocks", `
time_zones { default = "UTC" }
time_zones { default = "UTC" }`, []string{`main.hcl:6 Duplicate time_zones block`}},
		{"bad deliver_at_local", `
notification "n" {
  user_ids         = ["a"]
  title            = "t"
  body             = "b"
  deliver_at_local = "9am"
}`, []string{`main.hcl:9 Invalid deliver_at_local: deliver_at_local is a wall-clock time, "09:00"`}},
		{"deliver_at_local on a badge", `
badge "b" {
  user_ids         = ["a"]
  badge_count      = 0
  deliver_at_local = "09:00"
}`, []string{`main.hcl:8 Unsupported argument in badge block: A badge update is never held`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": svc + tt.src}, Options{})
			got := describe(diags)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnostics:\n%s\nwant one containing %q", got, w)
				}
			}
		})
	}
}

// TestZoneNames: the names that validate are the embedded database's
// zones and links; what is no place (the machine's zone, files of a
// zoneinfo directory, Factory) is refused in default and in by_user alike.
func TestZoneNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"Europe/Berlin", true}, {"US/Pacific", true}, {"Etc/GMT-14", true}, {"UTC", true}, {"Asia/Kolkata", true},
		{"Local", false}, {"localtime", false}, {"posixrules", false}, {"Factory", false}, {"", false},
		{"Europe/berlin", false}, {"/etc/localtime", false}, {"../zoneinfo/UTC", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, src := range []string{
				fmt.Sprintf("time_zones {\n  default = %q\n}\n", tt.name),
				fmt.Sprintf("time_zones {\n  by_user = { alice = %q }\n}\n", tt.name),
			} {
				_, diags := load(t, map[string]string{"main.hcl": svc + src}, Options{})
				if got := describe(diags); strings.Contains(got, "Unknown time zone") == tt.ok {
					t.Errorf("%s:\n%s", src, got)
				}
			}
		})
	}
}

// FuzzParseLocalTime: whatever parses formats back to itself, and a time
// of day is always within a day.
func FuzzParseLocalTime(f *testing.F) {
	for _, s := range []string{"09:00", "23:59", "2026-12-01 09:00", "24:00", "9:00", "2026-02-30 09:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLocalTime(s)
		if err != nil {
			return
		}
		if l.Clock < 0 || l.Clock >= 24*60 {
			t.Fatalf("%q: clock %d", s, l.Clock)
		}
		if l.String() != s {
			t.Fatalf("%q formats back as %q", s, l.String())
		}
	})
}
