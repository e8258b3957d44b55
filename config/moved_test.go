package config

import (
	"reflect"
	"strings"
	"testing"
)

// movedConfig declares the targets the moves of TestMovedTo end at.
const movedConfig = svc + `
campaign "onboarding" {
  notification "welcome" {
    user_ids = ["u"]
    title    = "t"
    body     = "b"
  }
}
notification "orders_v2" {
  for_each = toset(["A-1", "A-2"])
  user_ids = [each.key]
  title    = "t"
  body     = "b"
}
notification "single" {
  for_each = toset(["a"])
  user_ids = [each.key]
  title    = "t"
  body     = "b"
}
notification "one" {
  user_ids = ["u"]
  title    = "t"
  body     = "b"
}
badge "count" {
  device_ids  = ["d"]
  badge_count = 0
}
`

const movedBlocks = `
moved {
  from = notification.welcome
  to   = notification.welcome_v2
}
moved {
  from = notification.welcome_v2
  to   = campaign.onboarding.notification.welcome
}
moved {
  from = notification.orders
  to   = notification.orders_v2
}
moved {
  from = notification.lonely
  to   = notification.single["a"]
}
moved {
  from = notification.many["x"]
  to   = notification.one
}
moved {
  from = badge.old
  to   = badge.count
}
moved {
  from = badge.old
  to   = badge.count
}
`

func TestMovedTo(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.hcl": movedConfig, "moved.hcl": movedBlocks}, Options{})
	if len(cfg.Moved) != 7 || cfg.Moved[0] != (Moved{From: "notification.welcome", To: "notification.welcome_v2", Pos: Pos{"moved.hcl", 2, 1}}) {
		t.Fatalf("moved = %+v", cfg.Moved)
	}
	tests := []struct{ in, want string }{
		{"notification.welcome", "campaign.onboarding.notification.welcome"},
		{"notification.welcome_v2", "campaign.onboarding.notification.welcome"},
		{`notification.orders["A-1"]`, `notification.orders_v2["A-1"]`},
		{`notification.orders["gone"]`, `notification.orders_v2["gone"]`},
		{"notification.orders", "notification.orders_v2"},
		{"notification.lonely", `notification.single["a"]`},
		{`notification.lonely["a"]`, ""},
		{`notification.many["x"]`, "notification.one"},
		{`notification.many["y"]`, ""},
		{"notification.many", ""},
		{"badge.old", "badge.count"},
		{"notification.old", ""},
		{"campaign.onboarding.notification.welcome", ""},
		{`notification.ordersX["A-1"]`, ""},
	}
	for _, tt := range tests {
		got, ok := cfg.MovedTo(tt.in)
		want := tt.want
		if want == "" {
			want = tt.in
		}
		if got != want || ok != (tt.want != "") {
			t.Errorf("MovedTo(%s) = %s, %v; want %s, %v", tt.in, got, ok, want, tt.want != "")
		}
	}
}

func TestMovedToChainThroughWholeAndInstance(t *testing.T) {
	cfg := &Config{Moved: []Moved{
		{From: "notification.b[\"x\"]", To: "notification.c"},
		{From: "notification.a", To: "notification.b"},
	}}
	for in, want := range map[string]string{
		`notification.a["x"]`: "notification.c",
		`notification.a["y"]`: `notification.b["y"]`,
		`notification.b["x"]`: "notification.c",
	} {
		if got, ok := cfg.MovedTo(in); got != want || !ok {
			t.Errorf("MovedTo(%s) = %s, %v; want %s", in, got, ok, want)
		}
	}
	// A hand-built cycle ends instead of spinning.
	cyclic := &Config{Moved: []Moved{{From: "badge.a", To: "badge.b"}, {From: "badge.b", To: "badge.a"}}}
	if _, ok := cyclic.MovedTo("badge.a"); !ok {
		t.Error("cycle: not moved")
	}
}

func TestMovedRules(t *testing.T) {
	mv := func(from, to string) string { return "moved {\n  from = " + from + "\n  to   = " + to + "\n}\n" }
	tests := []struct {
		name, src, summary string
		line               int
		other              string // the other block's file:line, expected in the detail
	}{
		{"string address", mv(`"notification.x"`, "notification.one"), "Invalid moved address", 2, ""},
		{"template address", mv(`"notification.${local.x}"`, "notification.one"), "Invalid moved address", 2, ""},
		{"topic", mv("topic.deals", "notification.one"), "Invalid moved address", 2, ""},
		{"campaign", mv("campaign.onboarding", "notification.one"), "Invalid moved address", 2, ""},
		{"too long", mv("notification.one.two", "notification.one"), "Invalid moved address", 2, ""},
		{"attribute after key", mv(`notification.x["k"].y`, "notification.one"), "Invalid moved address", 2, ""},
		{"two keys", mv(`notification.x["k"]["l"]`, "notification.one"), "Invalid moved address", 2, ""},
		{"computed key", mv("notification.x[local.k]", "notification.one"), "Invalid moved address", 2, ""},
		{"bool key", mv("notification.x[true]", "notification.one"), "Invalid moved address", 2, ""},
		{"fractional key", mv("notification.x[1.5]", "notification.one"), "Invalid moved address", 2, ""},
		{"missing to", "moved {\n  from = notification.x\n}\n", "Missing required argument", 1, ""},
		{"unknown argument", "moved {\n  from = notification.x\n  to = notification.one\n  why = 1\n}\n", "Unsupported argument", 4, ""},
		{"numeric key", mv("notification.x[0]", "notification.one"), "Numeric instance key", 2, ""},
		{"kinds differ", mv("badge.x", "notification.one"), "Invalid moved block", 1, ""},
		{"to itself", mv("notification.x", "notification.x"), "Redundant moved block", 1, ""},
		{"two destinations", mv("notification.x", "notification.one") + mv("notification.x", "notification.single"), "Ambiguous moved blocks", 5, "moved.hcl:1"},
		{"whole and instance", mv("notification.x", "notification.y") + mv(`notification.x["k"]`, "notification.one"), "Ambiguous moved blocks", 5, "moved.hcl:1"},
		{"two sources", mv("notification.x", "notification.one") + mv("notification.y", "notification.one"), "Ambiguous moved blocks", 5, "moved.hcl:1"},
		{"two sources into a whole block", mv("notification.x", "notification.single") + mv("notification.y", `notification.single["a"]`), "Ambiguous moved blocks", 5, "moved.hcl:1"},
		{"cycle", mv("notification.x", "notification.y") + mv("notification.y", "notification.x"), "Cyclic moved blocks", 5, "moved.hcl:1"},
		{"cycle of three", mv("notification.x", "notification.y") + mv("notification.y", "notification.z") + mv("notification.z", "notification.x"), "Cyclic moved blocks", 9, "moved.hcl:1, moved.hcl:5"},
		{"cycle through a key", mv("notification.x", "notification.y") + mv(`notification.y["k"]`, `notification.x["k"]`), "Cyclic moved blocks", 5, "moved.hcl:1"},
		{"from still declared", mv("notification.one", "notification.single"), "Moved object still exists", 1, "main.hcl:"},
		{"instance still declared", mv(`notification.single["a"]`, "notification.one"), "Moved object still exists", 1, "main.hcl:"},
		{"to not declared", mv("notification.x", "notification.nowhere"), "Moved object missing", 1, ""},
		{"to instance not declared", mv("notification.x", `notification.single["b"]`), "Moved object missing", 1, ""},
		{"to without for_each key", mv("notification.x", `notification.one["a"]`), "Moved object missing", 1, ""},
		{"chain ends nowhere", mv("notification.x", "notification.y") + mv("notification.y", "notification.z"), "Moved object missing", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": movedConfig, "moved.hcl": tt.src}, Options{})
			for _, d := range diags {
				if d.Summary == tt.summary && d.Subject != nil && d.Subject.Filename == "moved.hcl" && d.Subject.Start.Line == tt.line &&
					strings.Contains(d.Detail, tt.other) {
					return
				}
			}
			t.Errorf("want %q at moved.hcl:%d naming %q; got:%s", tt.summary, tt.line, tt.other, describe(diags))
		})
	}
}

// TestMovedGood: valid moves give no diagnostics at all.
func TestMovedGood(t *testing.T) {
	_, diags := load(t, map[string]string{"main.hcl": movedConfig + `
notification "keyed" {
  for_each = toset(["new"])
  user_ids = [each.key]
  title    = "t"
  body     = "b"
}
`, "moved.hcl": movedBlocks + `
moved {
  from = notification.keyed["old"]
  to   = notification.keyed["new"]
}
`}, Options{})
	if len(diags) > 0 {
		t.Errorf("diagnostics:%s", describe(diags))
	}
	cfg := mustLoad(t, map[string]string{"main.hcl": movedConfig}, Options{})
	if cfg.Moved != nil {
		t.Errorf("no moved blocks: %+v", cfg.Moved)
	}
	if got, ok := cfg.MovedTo("notification.one"); got != "notification.one" || ok {
		t.Errorf("MovedTo without moves = %s, %v", got, ok)
	}
	if !reflect.DeepEqual(cfg.Moved, []Moved(nil)) {
		t.Error("Moved not nil")
	}
}
