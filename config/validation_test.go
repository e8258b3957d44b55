package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

const validatedVar = `
variable "audience" {
  type    = number
  default = 10
  validation {
    condition     = var.audience >= 0
    error_message = "audience must not be negative, got ${var.audience}"
  }
  validation {
    condition     = var.audience <= 100
    error_message = "at most 100"
  }
}
notification "n" {
  user_ids    = [for i in range(var.audience) : "u${i}"]
  badge_count = 1
}
`

func TestVariableValidation(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantMsg string // "" for none
	}{
		{"default passes", Options{}, ""},
		{"flag fails the first rule", Options{Vars: []string{"audience=-1"}}, "audience must not be negative, got -1"},
		{"the second rule", Options{Vars: []string{"audience=101"}}, "at most 100"},
		{"a given value", Options{Values: map[string]Value{"audience": {Value: cty.NumberIntVal(-5)}}}, "got -5"},
		{"a given value wins over a flag", Options{Vars: []string{"audience=-1"}, Values: map[string]Value{"audience": {Value: cty.NumberIntVal(3)}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": svc + validatedVar}, tt.opts)
			var failures []string
			for _, d := range diags {
				if f, ok := hcl.DiagnosticExtra[ValidationFailure](d); ok {
					failures = append(failures, f.Variable)
					if !strings.Contains(d.Detail, tt.wantMsg) || d.Subject == nil || d.Subject.Filename != "main.hcl" {
						t.Errorf("diagnostic %s: %s at %v; want %q", d.Summary, d.Detail, d.Subject, tt.wantMsg)
					}
				}
			}
			if tt.wantMsg == "" && (len(failures) > 0 || diags.HasErrors()) {
				t.Fatalf("diagnostics: %v", diags)
			}
			if tt.wantMsg != "" && (len(failures) != 1 || failures[0] != "audience" || len(diags) != 1) {
				t.Fatalf("want one failure of audience and nothing else (the value is unknown after it), got %v", diags)
			}
		})
	}
}

func TestVariableValidationReadsVariablesOnly(t *testing.T) {
	_, diags := load(t, map[string]string{"main.hcl": svc + `
locals { max = 3 }
variable "n" {
  default = 1
  validation {
    condition     = var.n < local.max
    error_message = "too many"
  }
}
`}, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "may refer to variables only") {
		t.Fatalf("diags = %v", diags)
	}
}

func TestValuesOfUndeclaredVariables(t *testing.T) {
	r := hcl.Range{Filename: "tests/a.pftest.hcl", Start: hcl.Pos{Line: 3}}
	_, diags := load(t, map[string]string{"main.hcl": svc}, Options{Values: map[string]Value{"nope": {Value: cty.True, Range: r}}})
	if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Filename != r.Filename || !strings.Contains(diags[0].Detail, `"nope"`) {
		t.Fatalf("diags = %v", diags)
	}
}

func TestTestFilesAreNotConfiguration(t *testing.T) {
	cfg := mustLoad(t, map[string]string{
		"main.hcl":          svc,
		"smoke.pftest.hcl":  "run \"x\" {\n  command = apply\n}\n",
		"broken.pftest.hcl": "this is { not a configuration",
	}, Options{})
	if len(cfg.Messages) != 0 {
		t.Fatalf("messages: %v", cfg.Messages)
	}
}

// TestFailedValidationReportsOnce: a variable whose validation fails is
// reported once; what is evaluated from it, however far, reports nothing
// more (pushform test's expect_failures sees that one failure).
func TestFailedValidationReportsOnce(t *testing.T) {
	const v = `
variable "x" {
  type    = string
  default = "ok"
  validation {
    condition     = var.x != "bad"
    error_message = "x must not be bad"
  }
}
locals {
  via = "${var.x}-1"
}
`
	for _, tc := range []struct{ name, body string }{
		{"a title", `notification "n" {
  user_ids = ["u1"]
  title    = var.x
  body     = "b"
}`},
		{"a variant's title", `notification "n" {
  user_ids = ["u1"]
  variant "a" {
    weight = 1
    title  = "Hi ${var.x}"
    body   = "b"
  }
}`},
		{"for_each", `notification "n" {
  for_each = toset([var.x])
  user_ids = [each.key]
  title    = "t"
  body     = "b"
}`},
		{"for_each through a local", `notification "n" {
  for_each = toset([local.via])
  user_ids = [each.key]
  title    = "t"
  body     = "b"
}`},
		{"a rollout stage", `notification "n" {
  user_ids = ["u1"]
  title    = "t"
  body     = "b"
  rollout {
    stages = ["${length(var.x)}%", "100%"]
  }
}`},
		{"a campaign's deliver_at_local", `campaign "c" {
  deliver_at_local = var.x == "ok" ? "09:00" : "10:00"
  notification "n" {
    user_ids = ["u1"]
    title    = "t"
    body     = "b"
  }
}`},
		{"a badge count", `badge "b" {
  user_ids    = ["u1"]
  badge_count = length(var.x)
}`},
		{"a policy", `policy "p" {
  condition     = var.x != ""
  error_message = "x"
}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": svc + v + tc.body}, Options{Vars: []string{"x=bad"}})
			if len(diags) != 1 {
				t.Fatalf("want the failed validation only, got %v", diags)
			}
			if f, ok := hcl.DiagnosticExtra[ValidationFailure](diags[0]); !ok || f.Variable != "x" {
				t.Fatalf("want the validation of x, got %v", diags)
			}
			if _, diags := load(t, map[string]string{"main.hcl": svc + v + tc.body}, Options{}); diags.HasErrors() {
				t.Fatalf("the configuration with a valid x: %v", diags)
			}
		})
	}
}
