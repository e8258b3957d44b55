package config

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/internal/testutil"
	"pushform/secret"
)

func TestSecretInValueIsAnError(t *testing.T) {
	const key = "k-test-CANARY-0123456789"
	const pw = "pg-canary-pass:w0rd"
	service := `service {
  base_url    = "https://push.example.com/v1"
  api_key_env = "PF_KEY"
  environment = "test"
}
backend "pg" {}
variable "k" { default = "" }
variable "b" { default = "" }
`
	environ := []string{"PF_KEY=" + key, "PUSHFORM_VAR_k=" + key, "PUSHFORM_VAR_unused=" + key, "PUSHFORM_VAR_b=" + base64.URLEncoding.EncodeToString([]byte("\x00"+key)), "PUSHFORM_PG_CONN_STR=postgres://u:" + strings.ReplaceAll(pw, ":", "%3A") + "@db/app"}
	cases := []struct{ name, block, what, attr string }{
		{"title", `notification "n" {
  user_ids = ["alice"]
  title    = var.k
  body     = "b"
}`, "The API key (PF_KEY)", "title"},
		{"lower-case body", `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "your key: ${lower(var.k)}"
}`, "The API key (PF_KEY)", "body"},
		{"base64 url", `notification "n" {
  user_ids    = ["alice"]
  title       = "t"
  body        = "b"
  open_to_url = "https://shop.example.com/x?t=${var.b}"
}`, "The API key (PF_KEY)", "open_to_url"},
		{"split by zero-width spaces", `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
  tag      = "${substr(var.k, 0, 5)}\u200b${substr(var.k, 5, -1)}"
}`, "The API key (PF_KEY)", "tag"},
		{"target id", `notification "n" {
  user_ids = ["alice", upper(var.k)]
  title    = "t"
  body     = "b"
}`, "The API key (PF_KEY)", "user_ids"},
		{"for_each key", `notification "n" {
  for_each = toset(["a", var.k, "b"])
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
}`, "The API key (PF_KEY)", "for_each"},
		{"database password", `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "the password is pg-canary-pass:w0rd"
}`, "The database password (PUSHFORM_PG_CONN_STR)", "body"},
		{"campaign description", `campaign "c" {
  description = "key ${var.k}"
}`, "The API key (PF_KEY)", "description"},
		{"variant title", variantWith(`title  = var.k`), "The API key (PF_KEY)", `variant "a".title`},
		{"variant body", variantWith(`body   = "key ${var.k}"`), "The API key (PF_KEY)", `variant "a".body`},
		{"variant open_to_url", variantWith(`open_to_url = "https://shop.example.com/?k=${var.k}"`), "The API key (PF_KEY)", `variant "a".open_to_url`},
		{"salt", `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
  salt     = var.k
  rollout {
    stages = ["50%", "100%"]
    wait   = "1h"
  }
}`, "The API key (PF_KEY)", "salt"},
		{"rollout stage", `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
  rollout {
    stages = ["50%", "100%"]
    wait   = var.k
  }
}`, "The API key (PF_KEY)", "rollout.wait"},
		{"campaign test_devices", `campaign "c" {
  test_devices = ["dev-1", var.k]
}`, "The API key (PF_KEY)", "test_devices"},
		{"time zone map key", `time_zones {
  by_user = { (var.k) = "UTC" }
}`, "The API key (PF_KEY)", "by_user"},
		{"topic description", `topic "deals" { description = "x${var.k}" }`, "The API key (PF_KEY)", "description"},
		{"local", `locals { joined = join(",", ["a", var.k]) }`, "The API key (PF_KEY)", "joined"},
		{"a variable's value, used nowhere", `variable "unused" { default = "" }`, "The API key (PF_KEY)", "var.unused"},
		{"each.value", `notification "n" {
  for_each = { a = var.k }
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
}`, "The API key (PF_KEY)", "for_each"},
		// A label is written in the file, never evaluated: it names an
		// address, printed in plans and stored in the state as it is.
		{"notification label", `notification "k-test-canary-0123456789" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
}`, "The API key (PF_KEY)", "the label of the notification block"},
		{"variant label", strings.Replace(variantWith(`title = "t"`), `variant "a"`, `variant "K-TEST-canary-0123456789"`, 1), "The API key (PF_KEY)", "the label of the variant block"},
		{"campaign label", `campaign "k-test-canary-0123456789" {
  notification "n" {
    user_ids = ["alice"]
    title    = "t"
    body     = "b"
  }
}`, "The API key (PF_KEY)", "the label of the campaign block"},
		{"label in a campaign", `campaign "c" {
  badge "k-test-canary-0123456789" {
    user_ids    = ["alice"]
    badge_count = 0
  }
}`, "The API key (PF_KEY)", "the label of the badge block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(service+tc.block+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			l := NewLoader()
			l.Backends = pgSecrets{}
			_, diags := l.Load(dir, Options{Environ: environ})
			want := tc.what + " appears in " + tc.attr
			found := false
			for _, d := range diags {
				if d.Summary == want && d.Subject != nil && d.Subject.Filename == "main.hcl" && d.Subject.Start.Line > 8 {
					found = true
				}
			}
			if !found {
				t.Errorf("no %q diagnostic with a position:\n%v", want, diags)
			}
			var out bytes.Buffer
			if err := l.WriteDiagnostics(&out, diags, 0, false); err != nil {
				t.Fatal(err)
			}
			text := strings.ToLower(out.String())
			for _, bad := range []string{strings.ToLower(key), strings.ToLower(base64.StdEncoding.EncodeToString([]byte(key))[:20]), pw} {
				if strings.Contains(text, bad) {
					t.Errorf("the diagnostics show the secret:\n%s", out.String())
				}
			}
			if !strings.Contains(out.String(), "main.hcl line") {
				t.Errorf("the diagnostics do not point at the file:\n%s", out.String())
			}
		})
	}
	// The same configuration without the secret in a value loads (its
	// variables hold none).
	environ = []string{"PF_KEY=" + key}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(service+`notification "n" {
  user_ids = ["alice"]
  title    = "Key facts about k-test"
  body     = "aW4gdGhlIGNvbmZpZ3VyYXRpb24gZmlsZQ=="
}
`), 0o644)
	if _, diags := NewLoader().Load(dir, Options{Environ: environ}); diags.HasErrors() {
		t.Errorf("a configuration without the key fails: %v", diags)
	}
}

// TestSecretInMovedAddress: a key that is a valid identifier may name an
// address in a moved block, by reference rather than by a string: plans
// print it and the state stores it, so it is checked as a label is.
func TestSecretInMovedAddress(t *testing.T) {
	const key = "k_test_canary_0123456789"
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": `service {
  base_url    = "https://push.example.com/v1"
  api_key_env = "PF_KEY"
  environment = "test"
}
moved {
  from = notification.K_TEST_canary_0123456789
  to   = notification.n
}
notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
}
`})
	_, diags := NewLoader().Load(dir, Options{Environ: []string{"PF_KEY=" + key}})
	found := false
	for _, d := range diags {
		found = found || d.Summary == "The API key (PF_KEY) appears in from"
	}
	if !found {
		t.Errorf("no diagnostic for the key in a moved block's from:\n%v", diags)
	}
}

// variantWith is a notification with variants, a holding attr.
func variantWith(attr string) string {
	return `notification "n" {
  user_ids = ["alice"]
  title    = "t"
  body     = "b"
  variant "a" {
    weight = 1
    ` + attr + `
  }
  variant "b" {
    weight = 1
  }
}`
}

// TestSecretInServiceTestDevices: the service block is walked as any
// other (its test devices are printed by test-send and kept in the
// ledger).
func TestSecretInServiceTestDevices(t *testing.T) {
	const key = "k-test-CANARY-0123456789"
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": `variable "k" { default = "" }
service {
  api_key_env  = "PF_KEY"
  environment  = "test"
  test_devices = [var.k]
}
`})
	_, diags := NewLoader().Load(dir, Options{Environ: []string{"PF_KEY=" + key, "PUSHFORM_VAR_k=" + key}})
	if !hasSecretDiag(diags, "The API key (PF_KEY) appears in test_devices", 5) {
		t.Errorf("no diagnostic at test_devices:\n%v", diags)
	}
}

// TestSecretWalkCoversNewAttributes proves the secret check generic: an
// attribute and a nested block the language does not have yet, added to
// the schema and to nothing else, are checked, in a message, a campaign
// and a top-level block, and the diagnostic names the attribute and
// points at it.
func TestSecretWalkCoversNewAttributes(t *testing.T) {
	restore := extendSchemas()
	defer restore()
	const key = "k-test-CANARY-0123456789"
	environ := []string{"PF_KEY=" + key, "PUSHFORM_VAR_k=" + key}
	const head = `variable "k" { default = "" }
service {
  api_key_env = "PF_KEY"
  environment = "test"
}
`
	for _, tc := range []struct {
		name, block, attr string
		line              int
	}{
		{"message attribute", "notification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body = \"b\"\n  future_attr = { deep = [upper(var.k)] }\n}\n", "future_attr", 10},
		{"nested block", "notification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body = \"b\"\n  future_block \"x\" {\n    level = \"v-${var.k}\"\n  }\n}\n", `future_block "x".level`, 11},
		{"campaign attribute", "campaign \"c\" {\n  future_attr = var.k\n}\n", "future_attr", 7},
		{"top-level block", "future_settings {\n  level = [var.k]\n}\n", "level", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testutil.WriteFiles(t, map[string]string{"main.hcl": head + tc.block})
			l := NewLoader()
			_, diags := l.Load(dir, Options{Environ: environ})
			if !hasSecretDiag(diags, "The API key (PF_KEY) appears in "+tc.attr, tc.line) {
				t.Errorf("not found:\n%v", diags)
			}
			var out bytes.Buffer
			l.WriteDiagnostics(&out, diags, 0, false)
			if strings.Contains(strings.ToLower(out.String()), strings.ToLower(key)) {
				t.Errorf("the diagnostics show the key:\n%s", out.String())
			}
		})
	}
}

// TestSecretReadThroughDataSource: a value that reads a data source is
// unknown when Load walks the configuration; it is checked once the
// recipients are fetched (Resolve).
func TestSecretReadThroughDataSource(t *testing.T) {
	const key = "k-test-CANARY-0123456789"
	// Two halves, neither the key alone: only the body joins them.
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": `variable "k1" { default = "" }
variable "k2" { default = "" }
service {
  api_key_env = "PF_KEY"
  environment = "test"
}
data "recipients" "all" {}
notification "n" {
  user_ids = data.recipients.all.user_ids
  title    = "t"
  body     = "${var.k1}${var.k2} for ${length(data.recipients.all.user_ids)} people"
}
`})
	l := NewLoader()
	cfg, diags := l.Load(dir, Options{Environ: []string{"PF_KEY=" + key, "PUSHFORM_VAR_k1=" + key[:12], "PUSHFORM_VAR_k2=" + key[12:]}})
	if diags.HasErrors() {
		t.Fatalf("Load: %v", diags)
	}
	_, diags = l.Resolve(cfg, map[string][]string{"all": {"alice"}})
	if !hasSecretDiag(diags, "The API key (PF_KEY) appears in body", 11) {
		t.Errorf("Resolve: %v", diags)
	}
}

// hasSecretDiag reports whether diags has an error with summary at line.
func hasSecretDiag(diags hcl.Diagnostics, summary string, line int) bool {
	for _, d := range diags {
		if d.Summary == summary && d.Subject != nil && d.Subject.Filename == "main.hcl" && d.Subject.Start.Line == line {
			return true
		}
	}
	return false
}

// A time with a UTC offset is not mistaken for a key: the diagnostic
// shows it as written.
func TestTimeWithOffsetIsShown(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`service { environment = "test" }
notification "n" {
  user_ids    = ["a"]
  title       = "t"
  body        = "b"
  send_after  = "2026-11-27T08:00:00+01:00"
  send_before = "2026-11-27T07:00:00+01:00"
}
`), 0o644)
	l := NewLoader()
	_, diags := l.Load(dir, Options{})
	var out bytes.Buffer
	if err := l.WriteDiagnostics(&out, diags, 0, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`send_before = "2026-11-27T07:00:00+01:00"`, "(2026-11-27T07:00:00+01:00) must be after send_after (2026-11-27T08:00:00+01:00)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "***") {
		t.Errorf("a time was masked:\n%s", out.String())
	}
}

// pgSecrets stands for backend.Registry (which imports config): a "pg"
// block whose password is that of the URL in PUSHFORM_PG_CONN_STR.
type pgSecrets struct{}

func (pgSecrets) CheckBackend(*Backend) hcl.Diagnostics { return nil }

func (pgSecrets) BackendSecrets(b *Backend, getenv func(string) string) []BackendSecret {
	if b.Type != "pg" {
		return nil
	}
	return []BackendSecret{{What: "the database password (PUSHFORM_PG_CONN_STR)", Values: secret.ConnPasswords(getenv("PUSHFORM_PG_CONN_STR"))}}
}
