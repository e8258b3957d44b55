package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const testKey = "sk4eC39HqLyjWDarjtT1zdp7dc"

// TestDiagnosticsNeverShowSecrets: a diagnostic about a line that holds a
// secret quotes the line with the secret masked, in plain and colour
// output, and no summary or detail (what validate --json prints) holds it.
func TestDiagnosticsNeverShowSecrets(t *testing.T) {
	service := func(attrs string) string { return "service {\n  environment = \"test\"\n" + attrs + "}\n" }
	tests := []struct {
		name    string
		files   map[string]string
		opts    Options
		summary string
		line    string // the start of the quoted line, e.g. "   3:   base_url ="
		secrets []string
	}{
		{"key as userinfo of base_url", map[string]string{"main.hcl": service("  base_url = \"https://" + testKey + "@push.example.com/v1\"\n")}, Options{},
			"Invalid base_url", "   3:   base_url = \"", []string{testKey}},
		{"password in base_url", map[string]string{"main.hcl": service("  base_url = \"https://push:hunter2@push.example.com/v1\"\n")}, Options{},
			"Invalid base_url", "   3:   base_url = \"", []string{"hunter2"}},
		{"key in base_url query", map[string]string{"main.hcl": service("  base_url = \"https://push.example.com/v1?key=hunter2\"\n")}, Options{},
			"Invalid base_url", "   3:   base_url = \"", []string{"hunter2"}},
		{"key in base_url path", map[string]string{"main.hcl": service("  base_url = \"https://push.example.com/" + testKey + "/v1\"\n")}, Options{},
			"Invalid base_url", "   3:   base_url = \"", []string{testKey}},
		{"key built in a template", map[string]string{"main.hcl": service("  base_url = \"https://${\"" + testKey + "\"}@push.example.com/v1\"\n")}, Options{},
			"Invalid base_url", "   3:   base_url = \"", []string{testKey}},
		{"key in api_key_env", map[string]string{"main.hcl": service("  api_key_env = \"sk_live_" + testKey + "\"\n")}, Options{},
			"API key in configuration", "   3:   api_key_env = \"", []string{testKey}},
		{"escaped key in api_key_env", map[string]string{"main.hcl": service("  api_key_env = \"sk\\u005flive\\u005F" + testKey[:4] + "\\u0048" + testKey[5:] + "\"\n")}, Options{},
			"API key in configuration", "   3:   api_key_env = \"", []string{testKey[5:], "u005flive"}},
		{"plain key in api_key_env", map[string]string{"main.hcl": service("  api_key_env = \"k-test-canary-0123456789\"\n")}, Options{},
			"Invalid api_key_env", "   3:   api_key_env = \"", []string{"canary"}},
		{"api_key", map[string]string{"main.hcl": service("  api_key = \"k-test-canary-0123456789\"\n")}, Options{},
			"API key in configuration", "   3:   api_key = \"", []string{"canary"}},
		{"key in a comment", map[string]string{"main.hcl": "service {\n  environment = \"staging\" # key: " + testKey + "\n}\n"}, Options{},
			"Invalid environment", "   2:   environment = \"staging\" # key: ", []string{testKey}},
		{"key in a file name", map[string]string{"main.hcl": service("") + "locals {\n  a = file(\"" + testKey + ".txt\")\n}\n"}, Options{},
			"Error in function call", "   5:   a = file(\"", []string{testKey}},
		{"key in a variable", map[string]string{"main.hcl": service("") + "variable \"k\" {}\nnotification \"n\" {\n  user_ids = var.k\n  badge_count = 1\n}\n"},
			Options{Environ: []string{"PUSHFORM_VAR_k=sk_live_" + testKey}}, "Invalid user_ids", "   6:   user_ids = var.k", []string{testKey}},
		{"key in a variables file", map[string]string{"main.hcl": service(""), "k.vars": "api_key = \"k-test-canary-0123456789\"\n"},
			Options{VarFiles: []string{"k.vars"}}, "Value for undeclared variable", "   1: api_key = \"", []string{"canary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			l := NewLoader()
			_, diags := l.Load(dir, tt.opts)
			found := false
			for _, d := range diags {
				found = found || d.Summary == tt.summary
				for _, s := range tt.secrets {
					if strings.Contains(d.Summary+d.Detail, s) {
						t.Errorf("%q quotes %q: %s", d.Summary, s, d.Detail)
					}
				}
			}
			if !found {
				t.Fatalf("no %q:%s", tt.summary, describe(diags))
			}
			for _, color := range []bool{false, true} {
				var buf bytes.Buffer
				if err := l.WriteDiagnostics(&buf, diags, 0, color); err != nil {
					t.Fatal(err)
				}
				out := buf.String()
				plain := strings.NewReplacer("\x1b[1;4m", "", "\x1b[0m", "", "\x1b[1;31m", "", "\x1b[1;33m", "").Replace(out)
				if !strings.Contains(plain, tt.line) {
					t.Errorf("color=%v: the line %q is not quoted:\n%s", color, tt.line, out)
				}
				for _, s := range tt.secrets {
					if strings.Contains(out, s) {
						t.Errorf("color=%v: output shows %q:\n%s", color, s, out)
					}
				}
			}
		})
	}
}

// TestRedactionKeepsPositions: masking replaces bytes one for one, so
// lines and carets stay where they were, and leaves ordinary files alone.
func TestRedactionKeepsPositions(t *testing.T) {
	src := "service {\n  base_url = \"https://u:p@x.example/v1\" # see https://wiki.example/k?t=" + testKey + "\n  api_key = <<EOT\nk-test-canary\nEOT\n}\n" + testKey + " = 1\n"
	got := newRedaction().source([]byte(src))
	if len(got) != len(src) || bytes.Count(got, []byte{'\n'}) != strings.Count(src, "\n") {
		t.Fatalf("length or lines changed:\n%s", got)
	}
	for _, s := range []string{"u:p@", testKey, "canary"} {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("%q survived:\n%s", s, got)
		}
	}
	for _, s := range []string{"service {", "  base_url = \"", "# see ", "  api_key = <<EOT", " = 1"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("%q was masked:\n%s", s, got)
		}
	}
	paths, _ := filepath.Glob("../examples/*/*.hcl")
	golden, _ := filepath.Glob("testdata/golden/*/*.hcl")
	for _, p := range append(paths, golden...) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got := newRedaction().source(src)
		if filepath.Base(p) == "sandbox.hcl" {
			continue // sandbox seeds declare api_key blocks: masked on purpose
		}
		if !bytes.Equal(got, src) && !strings.Contains(string(src), "api_key_env = \"sk_live") && !strings.Contains(string(src), "postgres://") {
			t.Errorf("%s changed by redaction:\n%s", p, got)
		}
	}
}

func TestRedactText(t *testing.T) {
	r := newRedaction()
	r.note("k-test-canary-0123456789")
	for in, want := range map[string]string{
		"no file " + testKey + ".txt here":           "no file **************************.txt here",
		"key k-test-canary-0123456789 echoed":        "key ************************ echoed",
		"see https://u:pw@h.example/v1?k=1#f please": "see https://****@h.example/v1****** please",
		"plain https://push.example.com/v1 stays":    "plain https://push.example.com/v1 stays",
		"2147483647 and 2026-11-27T08:00:00Z stay":   "2147483647 and 2026-11-27T08:00:00Z stay",
	} {
		if got := r.text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
	d := &hcl.Diagnostic{Summary: "s " + testKey, Detail: "d k-test-canary-0123456789"}
	r.diags(hcl.Diagnostics{d})
	if strings.Contains(d.Summary+d.Detail, "canary") || strings.Contains(d.Summary, testKey) {
		t.Errorf("diags not scrubbed: %+v", d)
	}
}
