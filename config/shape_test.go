package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/internal/testutil"
)

// shapeBase is a notification with something of everything the language
// has: each case below edits one thing of it.
const shapeBase = `
data "recipients" "opted_in" {}
data "recipients" "vip" {}
variable "title" { default = "Spring sale" }
locals { url = "https://shop.example.com/sale" }
topic "deals" { description = "Daily deals" }

frequency_cap {
  max = 3
  per = "24h"
}
time_zones {
  by_user = { alice = "Europe/Berlin", bob = "UTC" }
  default = "UTC"
}
quiet_hours {
  from = "21:00"
  to   = "08:00"
}

campaign "spring" {
  description  = "Spring sale"
  send_rate    = "600/minute"
  repeat_after = "30d"

  notification "n" {
    user_ids    = ["alice", "bob"]
    title       = var.title
    body        = "20% off"
    open_to_url = local.url
    tag         = "spring"
    send_after  = "2026-03-01T08:00:00Z"
    max_targets = 1000
    salt        = "spring-2026"
    holdout     = "5%"
    rollout {
      stages           = ["10%", "100%"]
      wait             = "1h"
      max_failure_rate = "2%"
    }
    variant "a" {
      weight = 50
      title  = "Spring sale"
    }
    variant "b" {
      weight = 50
      body   = "Everything 20% off"
    }
  }

  notification "everyone" {
    user_ids = data.recipients.opted_in.user_ids
    title    = "Hello"
    body     = "To everyone"
  }
}
`

// shapesOf loads files and returns each message's shape by address.
func shapesOf(t *testing.T, files map[string]string, opts Options) map[string]string {
	t.Helper()
	cfg := mustLoad(t, files, opts)
	out := map[string]string{}
	for _, m := range cfg.Messages {
		if m.Shape == "" {
			t.Fatalf("%s has no shape", m.Address)
		}
		out[m.Address] = m.Shape
	}
	return out
}

// TestShapeCoversWhatDecidesASend: every edit of what decides who gets
// what and when changes the shape of the message it applies to; an edit
// of layout, of a declaration or of what a data source holds does not.
func TestShapeCoversWhatDecidesASend(t *testing.T) {
	const addr = "campaign.spring.notification.n"
	base := shapesOf(t, map[string]string{"main.hcl": svc + shapeBase}, Options{})
	cases := []struct {
		name, old, new string
		changes        bool
	}{
		{"title", `title       = var.title`, `title       = "Spring sale!"`, true},
		{"body", `body        = "20% off"`, `body        = "25% off"`, true},
		{"open_to_url", `open_to_url = local.url`, `open_to_url = "https://shop.example.com/x"`, true},
		{"tag", `tag         = "spring"`, `tag         = "spring-2"`, true},
		{"static user_ids grow", `user_ids    = ["alice", "bob"]`, `user_ids    = ["alice", "bob", "carol"]`, true},
		{"send_after", `send_after  = "2026-03-01T08:00:00Z"`, `send_after  = "2026-03-02T08:00:00Z"`, true},
		{"send_before added", `send_after  = "2026-03-01T08:00:00Z"`, "send_after  = \"2026-03-01T08:00:00Z\"\n    send_before = \"2026-03-09T08:00:00Z\"", true},
		{"repeat_after", `max_targets = 1000`, "max_targets = 1000\n    repeat_after = \"7d\"", true},
		{"max_targets", `max_targets = 1000`, `max_targets = 2000`, true},
		{"salt", `salt        = "spring-2026"`, `salt        = "spring-2027"`, true},
		{"holdout", `holdout     = "5%"`, `holdout     = "30%"`, true},
		{"max_failure_rate", `max_failure_rate = "2%"`, `max_failure_rate = "50%"`, true},
		{"stages", `stages           = ["10%", "100%"]`, `stages           = ["50%", "100%"]`, true},
		{"wait", `wait             = "1h"`, `wait             = "1m"`, true},
		{"variant weight", "weight = 50\n      title", "weight = 5\n      title", true},
		{"variant title", `title  = "Spring sale"`, `title  = "Spring!"`, true},
		{"variant order", "variant \"a\" {\n      weight = 50\n      title  = \"Spring sale\"\n    }\n    variant \"b\" {\n      weight = 50\n      body   = \"Everything 20% off\"\n    }",
			"variant \"b\" {\n      weight = 50\n      body   = \"Everything 20% off\"\n    }\n    variant \"a\" {\n      weight = 50\n      title  = \"Spring sale\"\n    }", true},
		{"campaign send_rate", `send_rate    = "600/minute"`, `send_rate    = "6000/minute"`, true},
		{"campaign repeat_after", `repeat_after = "30d"`, `repeat_after = "3d"`, true},
		{"frequency_cap", `max = 3`, `max = 30`, true},
		{"time_zones", `alice = "Europe/Berlin"`, `alice = "Asia/Tokyo"`, true},
		{"quiet_hours", `from = "21:00"`, `from = "22:00"`, true},
		{"variable default", `variable "title" { default = "Spring sale" }`, `variable "title" { default = "Spring sale 2" }`, true},
		{"local", `locals { url = "https://shop.example.com/sale" }`, `locals { url = "https://shop.example.com/sale2" }`, true},

		{"attribute order and spacing", "title       = var.title\n    body        = \"20% off\"", "body = \"20% off\"\n\n    title = var.title # the title", false},
		{"the same value written another way", `title       = var.title`, `title       = "Spring ${"sale"}"`, false},
		{"list or tuple", `user_ids    = ["alice", "bob"]`, `user_ids    = tolist(["alice", "bob"])`, false},
		{"topic description", `description = "Daily deals"`, `description = "Deals, daily"`, false},
		{"an unused variable", `locals { url`, "variable \"unused\" { default = 1 }\nlocals { url", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(shapeBase, tc.old) {
				t.Fatalf("the base has no %q", tc.old)
			}
			got := shapesOf(t, map[string]string{"main.hcl": svc + strings.Replace(shapeBase, tc.old, tc.new, 1)}, Options{})
			if changed := got[addr] != base[addr]; changed != tc.changes {
				t.Errorf("shape changed: %v, want %v", changed, tc.changes)
			}
		})
	}
}

// TestShapeLeavesOutDataSources: an audience read from a data source is
// in the shape as its source, never as its ids: the list may grow, or be
// known or not, and the shape stays; another source is another shape.
// The split into files does not matter either.
func TestShapeLeavesOutDataSources(t *testing.T) {
	const addr = "campaign.spring.notification.everyone"
	files := map[string]string{"main.hcl": svc + shapeBase}
	unknown := shapesOf(t, files, Options{})
	small := shapesOf(t, files, Options{Recipients: map[string][]string{"opted_in": {"alice"}, "vip": {}}})
	large := shapesOf(t, files, Options{Recipients: map[string][]string{"opted_in": {"alice", "bob", "carol"}, "vip": {"dave"}}})
	if unknown[addr] != small[addr] || small[addr] != large[addr] {
		t.Errorf("the shape follows the recipients: %s, %s, %s", unknown[addr], small[addr], large[addr])
	}
	l := NewLoader()
	cfg, diags := l.Load(testutil.WriteFiles(t, files), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	resolved, diags := l.Resolve(cfg, map[string][]string{"opted_in": {"alice", "bob"}, "vip": nil})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, m := range resolved.Messages {
		if m.Shape != unknown[m.Address] {
			t.Errorf("%s: Resolve changed the shape", m.Address)
		}
	}

	// Through a local and a function, as much as directly.
	via := func(expr string) string {
		t.Helper()
		return shapesOf(t, map[string]string{"main.hcl": svc + strings.Replace(shapeBase, "user_ids = data.recipients.opted_in.user_ids", "user_ids = "+expr, 1) +
			"locals {\n  all = data.recipients.opted_in.user_ids\n  vip = data.recipients.vip.user_ids\n}\n"}, Options{})[addr]
	}
	for _, other := range []string{"data.recipients.vip.user_ids", "local.vip", `concat(local.vip, ["x"])`} {
		if via(other) == unknown[addr] {
			t.Errorf("user_ids = %s has the shape of data.recipients.opted_in", other)
		}
	}
	if via(`concat(local.all, ["x"])`) == via(`concat(local.vip, ["x"])`) {
		t.Error("two data sources through a local and concat have one shape")
	}

	split := shapesOf(t, map[string]string{
		"a.hcl": svc + shapeBase[:strings.Index(shapeBase, "campaign")],
		"b.hcl": shapeBase[strings.Index(shapeBase, "campaign"):],
	}, Options{})
	for a, s := range unknown {
		if split[a] != s {
			t.Errorf("%s: the shape changes when the blocks move to another file", a)
		}
	}
}

// TestShapeCoversNewAttributes proves the shape generic: an attribute and
// a nested block the language does not have yet, added to the schema and
// to nothing else, are in the shape, in a message block, in a campaign
// block and at the top level.
func TestShapeCoversNewAttributes(t *testing.T) {
	restore := extendSchemas()
	defer restore()
	shape := func(files string) string {
		t.Helper()
		cfg := mustLoad(t, map[string]string{"main.hcl": svc + files}, Options{})
		return cfg.Messages[0].Shape
	}
	for _, tc := range []struct{ name, tmpl string }{
		{"attribute", "notification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body = \"b\"\n  future_attr = %s\n}\n"},
		{"nested block", "notification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body = \"b\"\n  future_block \"x\" {\n    level = %s\n  }\n}\n"},
		{"campaign attribute", "campaign \"c\" {\n  future_attr = %s\n  notification \"n\" {\n    user_ids = [\"a\"]\n    title = \"t\"\n    body = \"b\"\n  }\n}\n"},
		{"top-level block", "future_settings {\n  level = %s\n}\nnotification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body = \"b\"\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, two, again := shape(strings.Replace(tc.tmpl, "%s", `"one"`, 1)), shape(strings.Replace(tc.tmpl, "%s", `"two"`, 1)), shape(strings.Replace(tc.tmpl, "%s", `"one"`, 1))
			if one == two {
				t.Errorf("the shape does not cover it")
			}
			if one != again {
				t.Errorf("the shape is not stable: %s, %s", one, again)
			}
		})
	}
}

// extendSchemas adds to the language what it does not have: future_attr
// in message and campaign blocks, a future_block in message blocks, a
// future_settings block at the top level. The decoders know none of them.
func extendSchemas() (restore func()) {
	msg, camp, root := *messageSchema, *campaignSchema, *rootSchema
	m, c, r := msg, camp, root
	m.Attributes = append(append([]hcl.AttributeSchema(nil), msg.Attributes...), hcl.AttributeSchema{Name: "future_attr"})
	m.Blocks = append(append([]hcl.BlockHeaderSchema(nil), msg.Blocks...), hcl.BlockHeaderSchema{Type: "future_block", LabelNames: []string{"name"}})
	c.Attributes = append(append([]hcl.AttributeSchema(nil), camp.Attributes...), hcl.AttributeSchema{Name: "future_attr"})
	r.Blocks = append(append([]hcl.BlockHeaderSchema(nil), root.Blocks...), hcl.BlockHeaderSchema{Type: "future_settings"})
	*messageSchema, *campaignSchema, *rootSchema = m, c, r
	return func() { *messageSchema, *campaignSchema, *rootSchema = msg, camp, root }
}

// TestShapeInCampaign: a message moved into a campaign that sets nothing
// keeps its shape (a state mv needs no review); a campaign setting
// changes it.
func TestShapeInCampaign(t *testing.T) {
	const n = "notification \"n\" {\n  user_ids = [\"a\"]\n  title    = \"t\"\n  body     = \"b\"\n}\n"
	shape := func(files string) string {
		t.Helper()
		return mustLoad(t, map[string]string{"main.hcl": svc + files}, Options{}).Messages[0].Shape
	}
	alone, wrapped, set := shape(n), shape("campaign \"c\" {\n"+n+"}\n"), shape("campaign \"c\" {\n  send_rate = \"10/second\"\n"+n+"}\n")
	if alone != wrapped {
		t.Error("a campaign that sets nothing changes the shape")
	}
	if wrapped == set {
		t.Error("a campaign's send_rate is not in its messages' shape")
	}
}

// TestShapeBudgetOfItsOwn: the walk evaluates what the decoders did with
// an allowance of its own: a configuration within the budget is walked
// whole, however much of it the decoders took.
func TestShapeBudgetOfItsOwn(t *testing.T) {
	shape := func(n int) string {
		t.Helper()
		l := NewLoader()
		l.maxIterations = 100
		cfg, diags := l.Load(testutil.WriteFiles(t, map[string]string{"main.hcl": svc + fmt.Sprintf(`
notification "n" {
  user_ids = [for i in range(%d) : format("u%%d", i)]
  title    = "t"
  body     = "b"
}
`, n)}), Options{})
		if diags.HasErrors() {
			t.Fatalf("range(%d): %v", n, diags)
		}
		return cfg.Messages[0].Shape
	}
	if shape(70) == shape(71) {
		t.Error("the walk ran out of the budget the decoders used: the static list is not in the shape")
	}
}

// TestShapeOfAValueReadFromData: an attribute that reads a data source is
// in the shape by how it is computed, with every part that reads none by
// its value: a literal, a variable, a local or a template beside the data
// source is reviewed, while what the source holds is not.
func TestShapeOfAValueReadFromData(t *testing.T) {
	const addr = "notification.n"
	const base = `
data "recipients" "all" {}
variable "long" { default = "7d" }
locals {
  all   = data.recipients.all.user_ids
  every = length(local.all) >= 0 ? var.long : "1d"
}
notification "n" {
  user_ids     = concat(data.recipients.all.user_ids, ["vip-1"])
  title        = "Hello"
  body         = templatefile("body.tmpl", { n = length(local.all) })
  repeat_after = length(data.recipients.all.user_ids) >= 0 ? "7d" : "1d"
  salt         = local.every
}
`
	files := func(main, tmpl string) map[string]string {
		return map[string]string{"main.hcl": svc + main, "body.tmpl": tmpl}
	}
	want := shapesOf(t, files(base, "Hi ${n}"), Options{})[addr]
	cases := []struct {
		name, old, new, tmpl string
		changes              bool
	}{
		{"a literal beside the data source", `? "7d" : "1d"`, `? "1h" : "1d"`, "", true},
		{"the other branch", `? "7d" : "1d"`, `? "7d" : "2d"`, "", true},
		{"a comparison", `) >= 0 ? "7d"`, `) >= 1 ? "7d"`, "", true},
		{"a static id in a concat", `["vip-1"]`, `["vip-1", "vip-2"]`, "", true},
		{"a variable beside data", `default = "7d"`, `default = "1h"`, "", true},
		{"a local that reads data", `: "1d"
}`, `: "2d"
}`, "", true},
		{"the template read with data", "", "", "Hi ${n}!", true},
		{"a comment and layout", `repeat_after = length(`, "repeat_after = length( # how often\n", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			main := strings.Replace(base, c.old, c.new, 1)
			if main == base && c.old != "" {
				t.Fatalf("%q is not in the configuration", c.old)
			}
			tmpl := "Hi ${n}"
			if c.tmpl != "" {
				tmpl = c.tmpl
			}
			got := shapesOf(t, files(main, tmpl), Options{})[addr]
			if (got != want) != c.changes {
				t.Errorf("shape changed: %v, want %v", got != want, c.changes)
			}
		})
	}
	grown := shapesOf(t, files(base, "Hi ${n}"), Options{Recipients: map[string][]string{"all": {"a", "b", "c"}}})[addr]
	if grown != want {
		t.Error("the shape follows what the data source holds")
	}
}
