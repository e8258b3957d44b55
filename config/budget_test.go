package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEvaluationCostIsCapped(t *testing.T) {
	// The for expressions at a cap of 10,000 (the mechanism; 1,000,000
	// costs seconds to reach).
	for _, tc := range []struct{ expr, want string }{
		{`[for a in range(1024) : [for b in range(1024) : [for c in range(1024) : c]]]`, "Configuration too costly to evaluate"},
		{`{ for a in range(1000) : a => [for b in range(1000) : b] }`, "walk more than 10,000 elements"},
		{`[for a in range(200) : [for b in range(60) : b]]`, "walk more than 10,000 elements"},
		{`concat([for a in range(1000) : [for b in range(6) : b]], [for a in range(1000) : [for b in range(3) : b]])`, "walk more than 10,000 elements"},
		{`setproduct(range(100), range(100), range(100))`, "setproduct would make more than 100,000 elements"},
		{`format("%0999999999d", 1)`, "width or precision in the format is more than 10,000"},
		{`formatlist("%.99999999999999999999f", [1])`, "width or precision in the format is more than 10,000"},
		{`indent(999999999, "a\nb")`, "indent takes at most 10,000 spaces"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("service { environment = \"test\" }\nlocals {\n  x = "+tc.expr+"\n}\n"), 0o644)
			start := time.Now()
			l := NewLoader()
			l.maxIterations = 10_000
			_, diags := l.Load(dir, Options{})
			took := time.Since(start)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("want an error saying %q, got %v", tc.want, diags)
			}
			if n := strings.Count(diags.Error(), tc.want); n != 1 {
				t.Errorf("the error is reported %d times: %v", n, diags)
			}
			if diags.HasErrors() {
				if s := diags[0].Subject; s == nil || filepath.Base(s.Filename) != "main.hcl" || s.Start.Line != 3 {
					t.Errorf("the error does not point at the expression (main.hcl line 3): %v", diags[0].Subject)
				}
			}
			if took > 10*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
	// A template's for directives spend from the same budget.
	t.Run("templatefile", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "t.tpl"), []byte("%{ for a in range(1024) }%{ for b in range(1024) }%{ for c in range(1024) }x%{ endfor }%{ endfor }%{ endfor }"), 0o644)
		os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("service { environment = \"test\" }\nlocals {\n  x = templatefile(\"t.tpl\", {})\n}\n"), 0o644)
		l := NewLoader()
		l.maxIterations = 10_000
		_, diags := l.Load(dir, Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "walk more than 10,000 elements") {
			t.Errorf("want the cap's error, got %v", diags)
		}
	})
	// Without a test's cap, Load spends from MaxIterations; what a
	// campaign file does stays well inside the caps.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`service { environment = "test" }
locals {
  ids   = [for i in range(1000) : format("user-%05d", i)]
  pairs = [for p in setproduct(local.ids, ["a", "b"]) : join("-", p)]
  text  = indent(2, "a\nb")
}
notification "n" {
  for_each = toset([for i in range(500) : tostring(i)])
  user_ids = [for i in range(20) : "u${each.key}-${i}"]
  title    = format("%-10s|", "t")
  body     = "b"
}
`), 0o644)
	l := NewLoader()
	if _, diags := l.Load(dir, Options{}); diags.HasErrors() {
		t.Errorf("an ordinary configuration fails: %v", diags)
	}
	if got := l.budget.limit.Load(); got != MaxIterations {
		t.Errorf("the cap is %d, want MaxIterations", got)
	}
	if used := l.budget.used.Load(); used < 1000+2000+500*20 {
		t.Errorf("the for expressions spent %d elements, fewer than they walk", used)
	}
}

// TestMeteredForKeepsReferences: the collection of a metered for is still
// seen by the walkers of hclsyntax, so locals are evaluated in the order
// they refer to each other and a for over data is evaluated again with the
// recipients.
func TestMeteredForKeepsReferences(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`service { environment = "test" }
locals {
  b = [for x in local.z : "${x}!"]
  z = ["p", "q"]
}
data "recipients" "r" {}
notification "n" {
  user_ids = [for u in data.recipients.r.user_ids : upper(u)]
  title    = join(",", local.b)
  body     = "b"
}
`), 0o644)
	l := NewLoader()
	cfg, diags := l.Load(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got, diags := l.Resolve(cfg, map[string][]string{"r": {"alice", "bob"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	m := findMessage(t, got, "notification.n")
	if m.Content.Title != "p!,q!" || strings.Join(m.Targets.IDs, ",") != "ALICE,BOB" {
		t.Errorf("title %q, targets %v", m.Content.Title, m.Targets.IDs)
	}
}

// TestTextIsCapped: what templates and text functions make is capped (at
// 1 MiB here; the mechanism, as MaxBytes would cost a gigabyte to reach),
// an error at the expression, before the text is made.
func TestTextIsCapped(t *testing.T) {
	// big is 64 KiB; each expression would make well over 1 MiB.
	const big = `join("", [for i in range(1024) : "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"])`
	doubling := "l0 = local.big\n"
	for i := 1; i <= 12; i++ {
		doubling += fmt.Sprintf("  l%d = \"${local.l%d}${local.l%d}\"\n", i, i-1, i-1)
	}
	for _, tc := range []struct{ name, locals, want string }{
		{"locals doubling each other", doubling, "make more than 1 MiB of text"},
		{"a template repeating a local", `x = "` + strings.Repeat("${local.big}", 20) + `"`, "make more than 1 MiB of text"},
		{"a template's for directive", `x = "%{ for i in range(20) }${local.big}-%{ endfor }"`, "make more than 1 MiB of text"},
		{"join", `x = join(",", [for i in range(20) : local.big])`, "would make more than 1 MiB of text"},
		{"format", `x = format("` + strings.Repeat("%s", 20) + `", ` + strings.Repeat("local.big, ", 20) + `)`, "would make more than 1 MiB of text"},
		{"formatlist", `x = formatlist("%s %s", range(20), local.big)`, "would make more than 1 MiB of text"},
		{"replace", `x = replace(local.big, "", "01234567890123456789")`, "would make more than 1 MiB of text"},
		{"indent", `x = indent(100, join("\n", [for i in range(1000) : join("\n", range(20))]))`, "would make more than 1 MiB of text"},
		{"jsonencode", `x = jsonencode([for i in range(20) : local.big])`, "would make more than 1 MiB of text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("service { environment = \"test\" }\nlocals {\n  big = "+big+"\n  "+tc.locals+"\n}\n"), 0o644)
			l := NewLoader()
			l.maxBytes = 1 << 20
			_, diags := l.Load(dir, Options{})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Fatalf("want an error saying %q, got %v", tc.want, diags)
			}
			if n := strings.Count(diags.Error(), tc.want); n != 1 {
				t.Errorf("the error is reported %d times: %v", n, diags)
			}
			if s := diags[0].Subject; s == nil || filepath.Base(s.Filename) != "main.hcl" || s.Start.Line < 4 {
				t.Errorf("the error does not point at the expression: %v", diags[0].Subject)
			}
			if used := l.budget.bytes.Load(); used > 3<<20 {
				t.Errorf("%d bytes were made before the refusal", used)
			}
		})
	}
}
