package config

import (
	"reflect"
	"testing"
)

func findMessage(t *testing.T, cfg *Config, addr string) *Message {
	t.Helper()
	for _, m := range cfg.Messages {
		if m.Address == addr {
			return m
		}
	}
	var got []string
	for _, m := range cfg.Messages {
		got = append(got, m.Address)
	}
	t.Fatalf("no message %s; have %q", addr, got)
	return nil
}

func TestVariablePrecedence(t *testing.T) {
	files := map[string]string{
		"main.hcl": svc + `
variable "greeting" {
  type    = string
  default = "from-default"
}
variable "count" {
  type    = number
  default = 1
}
notification "n" {
  user_ids    = ["u"]
  title       = var.greeting
  body        = "b"
  badge_count = var.count
}
`,
		"one.vars":  "greeting = \"from-file-1\"\ncount = 2\n",
		"two.vars":  "greeting = \"from-file-2\"\n",
		"env.vars2": "",
	}
	env := []string{"PUSHFORM_VAR_greeting=from-env", "PUSHFORM_VAR_count=7", "PUSHFORM_VAR_other=ignored", "HOME=/x"}
	tests := []struct {
		name      string
		opts      Options
		wantTitle string
		wantCount int
	}{
		{"default", Options{}, "from-default", 1},
		{"env over default", Options{Environ: env}, "from-env", 7},
		{"file over env", Options{Environ: env, VarFiles: []string{"one.vars"}}, "from-file-1", 2},
		{"later file wins", Options{Environ: env, VarFiles: []string{"one.vars", "two.vars"}}, "from-file-2", 2},
		{"flag over file", Options{Environ: env, VarFiles: []string{"one.vars"}, Vars: []string{"greeting=from-flag"}}, "from-flag", 2},
		{"later flag wins", Options{Vars: []string{"greeting=a", "greeting=b=c", "count=3"}}, "b=c", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := findMessage(t, mustLoad(t, files, tt.opts), "notification.n")
			if m.Content.Title != tt.wantTitle {
				t.Errorf("title = %q, want %q", m.Content.Title, tt.wantTitle)
			}
			if m.Content.BadgeCount == nil || *m.Content.BadgeCount != tt.wantCount {
				t.Errorf("badge_count = %v, want %d", m.Content.BadgeCount, tt.wantCount)
			}
		})
	}
}

func TestComplexVariableFromFlag(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.hcl": svc + `
variable "ids" { type = list(string) }
notification "n" {
  user_ids    = var.ids
  badge_count = 1
}
`}, Options{Vars: []string{`ids=["a","b"]`}})
	if got := findMessage(t, cfg, "notification.n").Targets.IDs; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("ids = %q", got)
	}
}

func TestForEachExpansion(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.hcl": svc + `
locals {
  orders = { "A-2" = { user = "bob" }, "A-1" = { user = "alice" } }
}
notification "shipped" {
  for_each = local.orders
  user_ids = [each.value.user]
  title    = "Order ${each.key}"
  body     = "for ${each.value.user}"
  tag      = "order-${each.key}"
}
campaign "spring" {
  badge "set" {
    for_each    = toset(["d2", "d1"])
    device_ids  = [each.value]
    badge_count = 0
  }
  notification "announce" {
    user_ids = ["u"]
    title    = "t"
    body     = "b"
  }
}
notification "none" {
  for_each    = {}
  user_ids    = ["u"]
  badge_count = 1
}
`}, Options{})
	var addrs []string
	for _, m := range cfg.Messages {
		addrs = append(addrs, m.Address)
	}
	want := []string{
		`campaign.spring.badge.set["d1"]`,
		`campaign.spring.badge.set["d2"]`,
		`campaign.spring.notification.announce`,
		`notification.shipped["A-1"]`,
		`notification.shipped["A-2"]`,
	}
	if !reflect.DeepEqual(addrs, want) {
		t.Fatalf("addresses = %q, want %q", addrs, want)
	}
	m := findMessage(t, cfg, `notification.shipped["A-2"]`)
	if m.Key != "A-2" || m.Name != "shipped" || m.Campaign != "" || m.Content.Title != "Order A-2" ||
		m.Content.Tag != "order-A-2" || !reflect.DeepEqual(m.Targets.IDs, []string{"bob"}) || m.Targets.Kind != TargetUsers {
		t.Errorf("message = %+v", m)
	}
	b := findMessage(t, cfg, `campaign.spring.badge.set["d1"]`)
	if b.Kind != KindBadge || b.Campaign != "spring" || b.Key != "d1" || !reflect.DeepEqual(b.Targets.IDs, []string{"d1"}) || *b.Content.BadgeCount != 0 {
		t.Errorf("badge = %+v", b)
	}
	if b.Pos.Filename != "main.hcl" || b.Pos.Line != 16 || b.TargetsPos.Line != 18 {
		t.Errorf("positions = %v %v", b.Pos, b.TargetsPos)
	}
}

func TestLocalsInAnyOrder(t *testing.T) {
	cfg := mustLoad(t, map[string]string{
		"a.hcl": svc + `
locals {
  title = upper(local.base)
}
notification "n" {
  user_ids = local.ids
  title    = local.title
  body     = local.body
}
`,
		"b.hcl": `
locals {
  body = "${local.title}!"
  base = "hi ${var.who}"
  ids  = distinct(concat(["a"], ["a", "b"]))
}
variable "who" { default = "you" }
`}, Options{})
	m := findMessage(t, cfg, "notification.n")
	if m.Content.Title != "HI YOU" || m.Content.Body != "HI YOU!" || !reflect.DeepEqual(m.Targets.IDs, []string{"a", "b"}) {
		t.Errorf("content = %+v targets = %+v", m.Content, m.Targets)
	}
}

func TestFunctions(t *testing.T) {
	cfg := mustLoad(t, map[string]string{
		"main.hcl": svc + `
locals {
  rows = csvdecode(file("data/users.csv"))
  conf = jsondecode(file("conf.json"))
}
notification "n" {
  user_ids = [for r in local.rows : r.id]
  title    = templatefile("body.tmpl", { name = local.conf.name, n = length(local.rows) })
  body     = format("%s has %d chars", join(",", sort(["b", "a"])), length("héllo"))
  tag      = replace(lower(trimspace("  A.B  ")), ".", "-")
}
`,
		"data/users.csv": "id,name\nu1,Ann\nu2,Ben\n",
		"conf.json":      `{"name": "Shop"}`,
		"body.tmpl":      "Hello from ${name} to ${n}%{ if n > 1 } users%{ endif }",
	}, Options{})
	m := findMessage(t, cfg, "notification.n")
	want := Content{Title: "Hello from Shop to 2 users", Body: "a,b has 5 chars", Tag: "a-b"}
	if m.Content != want {
		t.Errorf("content = %+v, want %+v", m.Content, want)
	}
	if !reflect.DeepEqual(m.Targets.IDs, []string{"u1", "u2"}) {
		t.Errorf("ids = %q", m.Targets.IDs)
	}
}

func TestDataSourceUnknownThenSupplied(t *testing.T) {
	files := map[string]string{"main.hcl": svc + `
data "recipients" "all" {}
data "recipients" "unused" {}
notification "everyone" {
  user_ids = data.recipients.all.user_ids
  title    = "t"
  body     = "b"
}
notification "most" {
  user_ids = setsubtract(data.recipients.all.user_ids, ["bob"])
  title    = "t"
  body     = "b"
}
`}
	cfg := mustLoad(t, files, Options{})
	if !reflect.DeepEqual(cfg.DataSources, []string{"all", "unused"}) {
		t.Errorf("data sources = %q", cfg.DataSources)
	}
	for _, addr := range []string{"notification.everyone", "notification.most"} {
		if tg := findMessage(t, cfg, addr).Targets; !tg.Unknown || tg.IDs != nil {
			t.Errorf("%s targets = %+v, want unknown", addr, tg)
		}
	}
	if r := findMessage(t, cfg, "notification.everyone").Targets.Recipients; r != "all" {
		t.Errorf("recipients = %q", r)
	}

	ids := []string{"alice", "bob", "carol"}
	cfg = mustLoad(t, files, Options{Recipients: map[string][]string{"all": ids, "unused": nil}})
	everyone := findMessage(t, cfg, "notification.everyone").Targets
	if everyone.Unknown || len(everyone.IDs) != 3 || &everyone.IDs[0] != &ids[0] {
		t.Errorf("everyone = %+v, want the supplied slice itself", everyone)
	}
	most := findMessage(t, cfg, "notification.most").Targets
	if most.Unknown || most.Recipients != "" || !reflect.DeepEqual(most.IDs, []string{"alice", "carol"}) {
		t.Errorf("most = %+v", most)
	}

	cfg = mustLoad(t, files, Options{Recipients: map[string][]string{"all": {}}})
	if tg := findMessage(t, cfg, "notification.most").Targets; tg.Unknown || len(tg.IDs) != 0 {
		t.Errorf("empty recipients: %+v", tg)
	}
}

func TestSandboxSeedIsNotConfiguration(t *testing.T) {
	seed := "api_key \"k\" { environment = \"test\" }\nuser \"alice\" {\n  device \"p\" { environment = \"test\" }\n}\n"
	cfg := mustLoad(t, map[string]string{
		"main.hcl":    "service {\n  environment = \"test\"\n  sandbox = \"sandbox.hcl\"\n}\n",
		"sandbox.hcl": seed,
	}, Options{})
	if cfg.Service.Sandbox != "sandbox.hcl" || cfg.Service.APIKeyEnv != DefaultAPIKeyEnv {
		t.Errorf("service = %+v", cfg.Service)
	}
	// Without the sandbox attribute the same file is configuration, and wrong.
	_, diags := load(t, map[string]string{"main.hcl": svc, "sandbox.hcl": seed}, Options{})
	if !diags.HasErrors() {
		t.Error("seed loaded as configuration gave no errors")
	}
}

func TestDiagnosticsDeduplicatedAcrossInstances(t *testing.T) {
	_, diags := load(t, map[string]string{"main.hcl": svc + `
notification "n" {
  for_each = toset(["a", "b", "c"])
  user_ids = [each.key]
  title    = "t"
}
`}, Options{})
	if n := len(diags); n != 1 {
		t.Errorf("got %d diagnostics, want 1:%s", n, describe(diags))
	}
}
