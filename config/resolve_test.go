package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// writeDir writes files into a new temporary directory.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const resolveConfig = svc + `
data "recipients" "all" {}
data "recipients" "vip" {}
topic "deals" {}
locals {
  everyone = data.recipients.all.user_ids
  count    = length(local.everyone)
  greeting = "Hello"
}
notification "bare" {
  user_ids = data.recipients.all.user_ids
  title    = local.greeting
  body     = "b"
}
notification "most" {
  user_ids = setsubtract(data.recipients.all.user_ids, ["bob"])
  title    = "t"
  body     = "b"
}
campaign "c" {
  notification "counted" {
    for_each = toset(["x", "y"])
    user_ids = data.recipients.vip.user_ids
    title    = "${each.key}: ${local.count} people"
    body     = "b"
  }
  badge "static" {
    device_ids  = ["d1"]
    badge_count = 1
  }
}
notification "topic" {
  topics = ["deals"]
  title  = "t"
  body   = "b"
}
`

// TestResolveMatchesLoad checks that Load then Resolve gives what Load with
// the recipients gives.
func TestResolveMatchesLoad(t *testing.T) {
	dir := writeDir(t, map[string]string{"main.hcl": resolveConfig})
	recipients := map[string][]string{"all": {"alice", "bob", "carol"}, "vip": {"carol"}}
	for _, tt := range []struct {
		name string
		r    map[string][]string
	}{
		{"all fetched", recipients},
		{"one missing", map[string][]string{"all": {"alice"}}},
		{"empty lists", map[string][]string{"all": {}, "vip": {}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, diags := NewLoader().Load(dir, Options{Recipients: tt.r})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			l := NewLoader()
			cfg, diags := l.Load(dir, Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			got, diags := l.Resolve(cfg, tt.r)
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", describe(diags))
			}
			if len(got.Messages) != len(want.Messages) {
				t.Fatalf("%d messages, want %d", len(got.Messages), len(want.Messages))
			}
			for i := range want.Messages {
				if !reflect.DeepEqual(got.Messages[i], want.Messages[i]) {
					t.Errorf("%s:\n got %+v\nwant %+v", want.Messages[i].Address, got.Messages[i], want.Messages[i])
				}
			}
			if !reflect.DeepEqual(got.Service, want.Service) || !reflect.DeepEqual(got.DataSources, want.DataSources) {
				t.Errorf("config differs: %+v", got)
			}
		})
	}
}

// TestResolveEvaluatesOnlyWhatReadsData: Resolve reads no file, leaves cfg
// alone, shares messages that do not depend on recipients and the fetched
// slice of a bare reference.
func TestResolveEvaluatesOnlyWhatReadsData(t *testing.T) {
	dir := writeDir(t, map[string]string{"main.hcl": resolveConfig})
	l := NewLoader()
	cfg, diags := l.Load(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if err := os.RemoveAll(dir); err != nil { // nothing is read again
		t.Fatal(err)
	}
	all := []string{"alice", "bob"}
	got, diags := l.Resolve(cfg, map[string][]string{"all": all, "vip": {"v"}})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", describe(diags))
	}
	for _, addr := range []string{"campaign.c.badge.static", "notification.topic"} {
		if findMessage(t, got, addr) != findMessage(t, cfg, addr) {
			t.Errorf("%s was evaluated again", addr)
		}
	}
	bare := findMessage(t, got, "notification.bare")
	if bare == findMessage(t, cfg, "notification.bare") || bare.Targets.Unknown || &bare.Targets.IDs[0] != &all[0] || bare.Content.Title != "Hello" {
		t.Errorf("bare = %+v, want the fetched slice itself", bare)
	}
	if m := findMessage(t, got, `campaign.c.notification.counted["y"]`); m.Content.Title != "y: 2 people" || !reflect.DeepEqual(m.Targets.IDs, []string{"v"}) {
		t.Errorf("counted = %+v", m)
	}
	if m := findMessage(t, got, "notification.most"); !reflect.DeepEqual(m.Targets.IDs, []string{"alice"}) {
		t.Errorf("most = %+v", m.Targets)
	}
	for _, m := range cfg.Messages {
		if m.Targets.Recipients != "" && !m.Targets.Unknown {
			t.Errorf("Resolve changed the loaded %s", m.Address)
		}
	}
}

// TestResolveReportsOnlyNewDiagnostics: warnings Load printed are not
// repeated; what the recipients bring is reported with its position.
func TestResolveReportsOnlyNewDiagnostics(t *testing.T) {
	dir := writeDir(t, map[string]string{"main.hcl": svc + `
data "recipients" "all" {}
notification "typo" {
  topics = ["dealz"]
  title  = "t"
  body   = "b"
}
notification "first" {
  user_ids = ["u"]
  title    = element(data.recipients.all.user_ids, 0)
  body     = "b"
}
notification "twice" {
  user_ids = concat(data.recipients.all.user_ids, ["alice"])
  title    = "t"
  body     = "b"
}
`})
	l := NewLoader()
	cfg, diags := l.Load(dir, Options{})
	if diags.HasErrors() || len(diags) != 1 || diags[0].Summary != "Undeclared topic" {
		t.Fatalf("load:%s", describe(diags))
	}
	_, diags = l.Resolve(cfg, map[string][]string{"all": {}})
	if len(diags) != 1 || diags[0].Summary != "Error in function call" || diags[0].Subject.Start.Line != 13 {
		t.Errorf("empty recipients:%s", describe(diags))
	}
	_, diags = l.Resolve(cfg, map[string][]string{"all": {"alice"}})
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Duplicate id" {
		t.Errorf("alice twice:%s", describe(diags))
	}
}

func TestResolveRefusesAForeignConfig(t *testing.T) {
	dir := writeDir(t, map[string]string{"main.hcl": resolveConfig})
	cfg, _ := NewLoader().Load(dir, Options{})
	l := NewLoader()
	if _, diags := l.Resolve(cfg, nil); !diags.HasErrors() {
		t.Error("Resolve of a Config this Loader did not load: no error")
	}
	l.Load(dir, Options{})
	if _, diags := l.Resolve(cfg, nil); !diags.HasErrors() || !strings.Contains(diags[0].Detail, "last Load") {
		t.Errorf("Resolve of an older Config:%s", describe(diags))
	}
}

// TestResolvedScope: once Resolve has the recipients, the locals that read
// them are known to what reads the configuration's scope after the plan:
// a policy's condition and pushform test's asserts.
func TestResolvedScope(t *testing.T) {
	for _, blocks := range []string{
		// No block reads the list but through a bare reference.
		`notification "n" {
  user_ids = data.recipients.all.user_ids
  title    = "t"
  body     = "b"
}`,
		// A block reads a local of the list.
		`notification "n" {
  user_ids = local.audience
  title    = "t"
  body     = "b"
}`,
	} {
		dir := writeDir(t, map[string]string{"main.hcl": svc + `
data "recipients" "all" {}
locals {
  audience = data.recipients.all.user_ids
  greeting = "hi"
}
policy "small" {
  condition     = length(local.audience) <= 2
  error_message = "too many"
}
policy "plain" {
  condition     = local.greeting == "hi"
  error_message = "no list"
}
` + blocks})
		l := NewLoader()
		cfg, diags := l.Load(dir, Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		resolved, diags := l.Resolve(cfg, map[string][]string{"all": {"ann", "bob", "cy"}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		expr, _ := hclParseExpr(t, "length(local.audience)")
		policies := l.ResolvedPolicies(cfg, map[string][]string{"all": {"ann", "bob", "cy"}})
		for name, scope := range map[string]*hcl.EvalContext{"Scope": l.Scope(), "policy": policies[0].Scope} {
			v, d := expr.Value(scope)
			if d.HasErrors() || !v.IsKnown() || v.AsBigFloat().String() != "3" {
				t.Errorf("%s: length(local.audience) = %#v %v, want 3", name, v, d)
			}
		}
		if cfg.Policies[0].Scope == policies[0].Scope || resolved.Policies[0].Scope != cfg.Policies[0].Scope {
			t.Error("ResolvedPolicies changed the policies of the loaded configuration")
		}
		if policies[1] != cfg.Policies[1] {
			t.Error("a policy that reads no data source was given the list")
		}
	}
}

func hclParseExpr(t *testing.T, src string) (hcl.Expression, hcl.Diagnostics) {
	t.Helper()
	e, d := hclsyntax.ParseExpression([]byte(src), "x.hcl", hcl.InitialPos)
	if d.HasErrors() {
		t.Fatal(d)
	}
	return e, d
}
