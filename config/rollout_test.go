package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestRolloutDiagnostics: each mistake in a rollout block gets a
// diagnostic at its line that says what is expected.
func TestRolloutDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		line        int
		summary     string
		detail      string
	}{
		{"not a percentage", `stages = ["1", "100%"]`, 5, "Invalid stages", "stage 1: a percentage is a number followed by %"},
		{"zero", `stages = ["0%", "100%"]`, 5, "Invalid stages", "from more than 0% to 100%"},
		{"over 100", `stages = ["10%", "150%"]`, 5, "Invalid stages", "stage 2: a percentage here is from"},
		{"order", `stages = ["10%", "5%", "100%"]`, 5, "Invalid stages", "stage 2 (5%) must be larger than stage 1 (10%)"},
		{"not ending at 100", `stages = ["1%", "50%"]`, 5, "Invalid stages", `the last stage is 50%: it must be "100%"`},
		{"number", `stages = [1, 100]`, 5, "Invalid stages", "each stage is a percentage in quotes"},
		{"empty", `stages = []`, 5, "Invalid stages", "at least one stage"},
		{"gate", "stages = [\"100%\"]\n    max_failure_rate = \"2\"", 6, "Invalid max_failure_rate", "a percentage is a number followed by %"},
		{"gate over 100", "stages = [\"100%\"]\n    max_failure_rate = \"101%\"", 6, "Invalid max_failure_rate", "from 0% to 100%"},
		{"wait", "stages = [\"100%\"]\n    wait = \"soon\"", 6, "Invalid wait", "a duration is a number with a unit"},
		{"missing stages", `wait = "1h"`, 4, "Missing required argument", `"stages" is required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := svc + "notification \"n\" {\n  user_ids = [\"u1\"]\n  rollout {\n    " + tc.block + "\n  }\n  title = \"t\"\n  body  = \"b\"\n}\n"
			_, diags := load(t, map[string]string{"main.hcl": src}, Options{})
			found := false
			for _, d := range diags {
				if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) && d.Subject != nil && d.Subject.Start.Line == tc.line+2 {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s at line %d containing %q; got:%s", tc.summary, tc.line+2, tc.detail, describe(diags))
			}
		})
	}
}

// TestRolloutDecoded: a rollout on a notification, one inherited from a
// campaign, a salt, and a badge that keeps none.
func TestRolloutDecoded(t *testing.T) {
	src := svc + `
notification "n" {
  user_ids = ["u1"]
  title    = "t"
  body     = "b"
  salt     = "notification.old"
  rollout {
    stages           = ["0.5%", "10%", "100%"]
    wait             = "30m"
    max_failure_rate = "2%"
  }
}
campaign "c" {
  rollout { stages = ["50%", "100%"] }
  notification "m" {
    user_ids = ["u1"]
    title    = "t"
    body     = "b"
  }
  badge "b" {
    user_ids    = ["u1"]
    badge_count = 0
  }
}
`
	cfg := mustLoad(t, map[string]string{"main.hcl": src}, Options{})
	by := map[string]*Message{}
	for _, m := range cfg.Messages {
		by[m.Address] = m
	}
	n := by["notification.n"]
	if n.Rollout == nil || len(n.Rollout.Stages) != 3 || n.Rollout.Stages[0] != 0.005 || n.Rollout.Wait != 30*time.Minute ||
		n.Rollout.MaxFailureRate != 0.02 || n.Salt != "notification.old" {
		t.Errorf("notification.n: %+v salt %q", n.Rollout, n.Salt)
	}
	m := by["campaign.c.notification.m"]
	if m.Rollout == nil || m.Rollout.Stages[0] != 0.5 || m.Rollout.MaxFailureRate >= 0 || m.Salt != m.Address {
		t.Errorf("campaign.c.notification.m: %+v salt %q", m.Rollout, m.Salt)
	}
	if b := by["campaign.c.badge.b"]; b.Rollout != nil {
		t.Errorf("badge inherited a rollout: %+v", b.Rollout)
	}
	if FormatPercent(0.005) != "0.5%" || FormatPercent(0.07) != "7%" {
		t.Errorf("FormatPercent: %s %s", FormatPercent(0.005), FormatPercent(0.07))
	}
}

// TestVariantDiagnostics: weights, variant content, a holdout's
// percentage and its audience are checked at validate time.
func TestVariantDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, targets, body string
		summary, detail     string
	}{
		{"zero weight", `user_ids = ["u1"]`, "variant \"a\" {\nweight = 0\ntitle = \"t\"\nbody = \"b\"\n}", "Invalid weight", "whole number from 1"},
		{"fraction", `user_ids = ["u1"]`, "variant \"a\" {\nweight = 1.5\ntitle = \"t\"\nbody = \"b\"\n}", "Invalid weight", "got 1.5"},
		{"no weight", `user_ids = ["u1"]`, "variant \"a\" {\ntitle = \"t\"\nbody = \"b\"\n}", "Missing required argument", `"weight" is required`},
		{"no body", `user_ids = ["u1"]`, "variant \"a\" {\nweight = 1\ntitle = \"t\"\n}", "Incomplete variant", `variant "a" needs a title and a body`},
		{"twice", `user_ids = ["u1"]`, "variant \"a\" {\n weight = 1\n title = \"t\"\n body = \"b\"\n}\nvariant \"a\" {\n weight = 1\n title = \"t\"\n body = \"b\"\n}", "Duplicate variant", `one variant "a"`},
		{"holdout percent", `user_ids = ["u1"]`, `holdout = "5"` + "\n" + `title = "t"` + "\n" + `body = "b"`, "Invalid holdout", "a percentage is a number followed by %"},
		{"holdout all", `user_ids = ["u1"]`, `holdout = "100%"` + "\n" + `title = "t"` + "\n" + `body = "b"`, "Invalid holdout", "leaves no audience"},
		{"holdout topics", `topics = ["news"]`, `holdout = "5%"` + "\n" + `title = "t"` + "\n" + `body = "b"`, "Holdout with no audience", "topics notification has no list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := svc + "topic \"news\" {}\nnotification \"n\" {\n  " + tc.targets + "\n" + tc.body + "\n}\n"
			_, diags := load(t, map[string]string{"main.hcl": src}, Options{})
			found := false
			for _, d := range diags {
				if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) && d.Subject != nil {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s containing %q; got:%s", tc.summary, tc.detail, describe(diags))
			}
		})
	}
}

// TestVariantsDecoded: variants take the notification's content where
// they set none.
func TestVariantsDecoded(t *testing.T) {
	src := svc + `
notification "n" {
  user_ids = ["u1"]
  body     = "Shared body"
  tag      = "t"
  variant "a" {
    weight = 3
    title  = "A"
  }
  variant "b" {
    weight = 1
    title  = "B"
    body   = "Own body"
  }
  holdout = "2.5%"
}
`
	cfg := mustLoad(t, map[string]string{"main.hcl": src}, Options{})
	m := cfg.Messages[0]
	if len(m.Variants) != 2 || m.Holdout != 0.025 {
		t.Fatalf("variants %+v holdout %v", m.Variants, m.Holdout)
	}
	a, b := m.Variants[0], m.Variants[1]
	if a.Name != "a" || a.Weight != 3 || a.Content.Title != "A" || a.Content.Body != "Shared body" || a.Content.Tag != "t" ||
		b.Content.Body != "Own body" || b.Weight != 1 {
		t.Errorf("variants %+v", m.Variants)
	}
}

// FuzzParsePercent: any string is read as a fraction in range or an
// error, never a panic; what it reads, FormatPercent writes back.
func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"5%", "0.5%", "100%", "0%", "-1%", "1e2%", "NaN%", "Inf%", "%", "5", " 7 %"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePercent(s, true)
		if err != nil {
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("ParsePercent(%q) = %v", s, v)
		}
		back, err := ParsePercent(FormatPercent(v), true)
		if err != nil || math.Abs(back-v) > 1e-9 {
			t.Fatalf("%q: %v -> %q -> %v, %v", s, v, FormatPercent(v), back, err)
		}
	})
}
