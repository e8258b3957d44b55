package config

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// fuzzSeeds are the examples, the golden configurations and a few
// hand-written files covering every block kind.
func fuzzSeeds(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/*/*.hcl")
	golden, _ := filepath.Glob("testdata/golden/*/*.hcl")
	for _, p := range append(seeds, golden...) {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("service {\n  environment = \"test\"\n}\nnotification \"n\" {\n  for_each = { for i in range(3) : tostring(i) => i }\n  user_ids = [each.key]\n  badge_count = each.value\n}\n"))
	f.Add([]byte("locals { a = local.a }"))
	f.Add([]byte("${"))
	f.Add([]byte("service {\n  environment = \"test\"\n}\nbackend \"pg\" {\n  conn_str_env = \"PG\"\n  schema_name = \"s\"\n  state_name = \"x\"\n}\nfrequency_cap {\n  max = 3\n  per = \"1d2h\"\n}\n"))
	f.Add([]byte("service {\n  environment = \"test\"\n}\nmoved {\n  from = notification.a[\"k\"]\n  to = campaign.c.notification.b[\"k\"]\n}\nmoved {\n  from = badge.x\n  to = badge.y\n}\ncampaign \"c\" {\n  send_rate = \"5/s\"\n  repeat_after = \"1h\"\n  enabled = true\n  max_targets = 2\n  frequency_cap {\n    max = 1\n    per = \"1h\"\n  }\n  notification \"b\" {\n    for_each = toset([\"k\"])\n    user_ids = [\"u\", \"v\"]\n    title = \"t\"\n    body = \"b\"\n    tag = \"t\"\n    shared_tag = true\n    enabled = false\n    repeat_after = \"7d\"\n    send_after = \"2026-01-01T00:00:00Z\"\n    send_before = \"2026-01-02T00:00:00Z\"\n  }\n}\nbadge \"y\" {\n  device_ids = [\"d\"]\n  badge_count = 0\n}\n"))
	f.Add([]byte("service {\n  environment = \"test\"\n  base_url = \"https://" + testKey + "@push.example.com/v1\" # " + testKey + "\n  api_key = <<EOT\n" + testKey + "\nEOT\n}\n"))
}

// FuzzLoad feeds one file's bytes through the parser, decoder, evaluator
// and diagnostic writer: whatever the input, Load must return, never
// panic, and moved blocks must resolve.
func FuzzLoad(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		l := NewLoader()
		l.maxIterations = 50_000 // the caps' mechanism, at sizes that keep fuzzing fast
		l.maxBytes = 8 << 20
		cfg, diags := l.Load(dir, Options{})
		if !diags.HasErrors() && cfg == nil {
			t.Fatal("no errors and no config")
		}
		var got bytes.Buffer
		if err := l.WriteDiagnostics(&got, diags, 80, true); err != nil {
			t.Fatal(err)
		}
		// The same text as HCL's own writer, which is slow on many
		// diagnostics: compared while that stays cheap.
		if len(diags)*len(src) < 1<<16 {
			var want bytes.Buffer
			if err := hcl.NewDiagnosticTextWriter(&want, l.Files(), 80, true).WriteDiagnostics(diags); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("diagnostics differ from HCL's writer:\n got %q\nwant %q", got.String(), want.String())
			}
		}
		if cfg != nil {
			for _, m := range cfg.Moved {
				cfg.MovedTo(m.From)
			}
			cfg.TagGroups()
		}
	})
}

// FuzzRedact: masking keeps every byte position and line, only writes
// '*', is idempotent, and never lets the canary key through.
func FuzzRedact(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		got := newRedaction().source(src)
		if len(got) != len(src) {
			t.Fatalf("length %d, want %d", len(got), len(src))
		}
		for i := range src {
			if got[i] != src[i] && (got[i] != '*' || src[i] == '\n' || src[i] == '\r') {
				t.Fatalf("byte %d: %q became %q", i, src[i], got[i])
			}
		}
		if again := newRedaction().source(got); !bytes.Equal(again, got) {
			t.Fatalf("not idempotent:\n%s\n%s", got, again)
		}
		if bytes.Contains(got, []byte(testKey)) {
			t.Fatalf("the key survived:\n%s", got)
		}
	})
}
