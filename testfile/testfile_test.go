package testfile

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"pushform/config"
)

func decode(t *testing.T, src string) (*File, hcl.Diagnostics) {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "tests/a.pftest.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return Decode("tests/a.pftest.hcl", f, config.Functions(t.TempDir()))
}

func TestDecode(t *testing.T) {
	f, diags := decode(t, `
variables {
  audience = 30
  names    = [for i in range(2) : "u${i}"]
}

sandbox {
  user "ann" {
    device "d1" { environment = "test" }
  }
}

run "first_morning" {
  command = apply
  now     = "2026-12-01T08:30:00Z"
  variables {
    audience = 40
  }
  sandbox {
    fail_ids  = ["u00003"]
    fail_rate = 0.5
    latency   = "10ms"
  }
  assert {
    condition     = plan.summary.targets == 40
    error_message = "everyone is planned"
  }
}

run "bad_config" {
  variables {
    audience = -1
  }
  expect_failures = [var.audience]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := f.Variables["audience"].Value.AsBigFloat().String(); got != "30" || f.Variables["names"].Value.LengthInt() != 2 {
		t.Errorf("variables %v", f.Variables)
	}
	if f.Sandbox.Inline == nil || len(f.Sandbox.Inline.Users) != 1 || f.Sandbox.SeedFile != "" {
		t.Errorf("sandbox %+v", f.Sandbox)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("runs %v", f.Runs)
	}
	r := f.Runs[0]
	want := time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)
	if r.Command != Apply || !r.Now.Equal(want) || len(r.Asserts) != 1 || r.Faults.FailRate != 0.5 ||
		r.Faults.Latency != 10*time.Millisecond || strings.Join(r.Faults.FailIDs, ",") != "u00003" {
		t.Errorf("run %+v", r)
	}
	b := f.Runs[1]
	if b.Command != Plan || !b.Now.IsZero() || len(b.ExpectFailures) != 1 || b.ExpectFailures[0].Variable != "audience" {
		t.Errorf("run %+v", b)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no runs", `variables {}`, "No run blocks"},
		{"string command", "run \"x\" {\n  command = \"apply\"\n}\n", "written as a keyword"},
		{"bad now", "run \"x\" {\n  now = \"tomorrow\"\n}\n", "RFC 3339"},
		{"duplicate run", "run \"x\" {}\nrun \"x\" {}\n", "Duplicate run block"},
		{"expect a local", "run \"x\" {\n  expect_failures = [local.y]\n}\n", "as var.NAME"},
		{"seed and inline", "sandbox {\n  seed = \"s.hcl\"\n  device \"d\" { environment = \"test\" }\n}\nrun \"x\" {}\n", "not both"},
		{"fault out of range", "run \"x\" {\n  sandbox {\n    fail_rate = 2\n  }\n}\n", "from 0 to 1"},
		{"unknown attribute", "run \"x\" {\n  plan = 1\n}\n", "Unsupported argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := decode(t, tt.src)
			if f != nil || !strings.Contains(diags.Error(), tt.want) {
				t.Fatalf("file %v, diags %v; want %q", f, diags, tt.want)
			}
			for _, d := range diags {
				if d.Subject == nil || d.Subject.Filename != "tests/a.pftest.hcl" {
					t.Errorf("diagnostic without the file: %v", d)
				}
			}
		})
	}
}
