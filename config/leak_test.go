package config

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

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
	environ := []string{"PF_KEY=" + key, "PUSHFORM_VAR_k=" + key, "PUSHFORM_VAR_b=" + base64.URLEncoding.EncodeToString([]byte("\x00"+key)), "PUSHFORM_PG_CONN_STR=postgres://u:" + strings.ReplaceAll(pw, ":", "%3A") + "@db/app"}
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
	// The same configuration without the secret in a value loads.
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
