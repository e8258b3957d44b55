package command

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"pushform/internal/testutil"
)

// runIn runs the CLI in-process in dir with the given environment.
func runIn(t *testing.T, dir string, stdin string, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Environ: environ,
		Getenv: func(k string) string {
			for _, kv := range environ {
				if name, v, ok := strings.Cut(kv, "="); ok && name == k {
					return v
				}
			}
			return ""
		},
		Dir: dir,
	}
	code = Run(context.Background(), args, env)
	return code, out.String(), errb.String()
}

const validConfig = `service {
  environment = "test"
}

variable "who" {
  type = string
}

topic "deals" {}

notification "hello" {
  user_ids = ["alice"]
  title    = "Hello ${var.who}"
  body     = "Welcome"
}

notification "deal" {
  topics = ["dealz"]
  title  = "Deal"
  body   = "Today"
}
`

const brokenConfig = `service {
  environment = "staging"
}

badge "b" {
  device_ids  = ["d"]
  badge_count = -1
}
`

func TestValidateText(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": validConfig})

	code, out, errOut := runIn(t, dir, "", nil, "validate", "--var", "who=Ann, Ben")
	if code != ExitOK || out != "The configuration is valid.\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "Warning: Undeclared topic") || !strings.Contains(errOut, `18:   topics = ["dealz"]`) {
		t.Errorf("warning not printed with its snippet:\n%s", errOut)
	}

	// The variable from the environment, and no value at all.
	if code, _, errOut := runIn(t, dir, "", []string{"PUSHFORM_VAR_who=Env"}, "validate"); code != ExitOK {
		t.Errorf("PUSHFORM_VAR_who: code %d: %s", code, errOut)
	}
	code, out, errOut = runIn(t, dir, "", nil, "validate")
	if code != ExitError || out != "" || !strings.Contains(errOut, "Error: No value for required variable") {
		t.Errorf("missing variable: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestValidateChdirAndErrors(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"cfg/main.hcl": brokenConfig})
	code, out, errOut := runIn(t, dir, "", nil, "--chdir", "cfg", "validate", "--no-color")
	if code != ExitError || out != "" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
	for _, want := range []string{
		"Error: Invalid environment", "on main.hcl line 2, in service:", `2:   environment = "staging"`,
		"Error: Invalid badge_count", "on main.hcl line 7",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "\x1b[") {
		t.Error("colour despite --no-color")
	}
}

func TestValidateJSON(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": brokenConfig})
	code, out, _ := runIn(t, dir, "", nil, "validate", "--json")
	if code != ExitError {
		t.Errorf("code %d", code)
	}
	var got struct {
		Valid        bool `json:"valid"`
		ErrorCount   int  `json:"error_count"`
		WarningCount int  `json:"warning_count"`
		Diagnostics  []struct {
			Severity, Summary, Detail, Filename string
			Line, Column                        int
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Valid || got.ErrorCount != 2 || got.WarningCount != 0 || len(got.Diagnostics) != 2 {
		t.Fatalf("result = %+v", got)
	}
	d := got.Diagnostics[0]
	if d.Severity != "error" || d.Summary != "Invalid environment" || d.Filename != "main.hcl" || d.Line != 2 || d.Column != 17 || d.Detail == "" {
		t.Errorf("diagnostic = %+v", d)
	}

	dir = testutil.WriteFiles(t, map[string]string{"main.hcl": validConfig})
	code, out, _ = runIn(t, dir, "", nil, "validate", "--json", "--var", "who=x")
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil || code != ExitOK {
		t.Fatalf("code %d, %v: %s", code, err, out)
	}
	if raw["valid"] != true || raw["warning_count"] != 1.0 || raw["error_count"] != 0.0 {
		t.Errorf("result = %v", raw)
	}
}

func TestValidateExamples(t *testing.T) {
	dirs, _ := filepath.Glob("../examples/*")
	for _, dir := range dirs {
		abs, _ := filepath.Abs(dir)
		code, out, errOut := runIn(t, abs, "", nil, "validate")
		if code != ExitOK || out != "The configuration is valid.\n" || errOut != "" {
			t.Errorf("%s: code %d, stdout %q, stderr %q", dir, code, out, errOut)
		}
	}
}

// TestPlanAndApplyJSONConfigErrors: plan --json and apply --json of a
// configuration that does not load say why on stdout, as validate --json
// does (apply: a diagnostics line after the version line), and on stderr
// with the source lines; nothing else is printed and the exit is 1.
func TestPlanAndApplyJSONConfigErrors(t *testing.T) {
	type diagnostics struct {
		Type        string `json:"type"`
		Valid       bool   `json:"valid"`
		ErrorCount  int    `json:"error_count"`
		Diagnostics []struct {
			Severity, Summary, Filename string
			Line                        int
		} `json:"diagnostics"`
	}
	check := func(t *testing.T, line string) {
		t.Helper()
		var d diagnostics
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if d.Valid || d.ErrorCount != 2 || len(d.Diagnostics) != 2 || d.Diagnostics[0].Summary != "Invalid environment" ||
			d.Diagnostics[0].Filename != "main.hcl" || d.Diagnostics[0].Line != 2 {
			t.Errorf("diagnostics = %+v", d)
		}
	}
	for _, tt := range []struct {
		args  []string
		lines int
	}{
		{[]string{"plan", "--json"}, 1},
		{[]string{"plan", "--json-indent"}, 0},
		{[]string{"apply", "--json", "--auto-approve"}, 2},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := testutil.WriteFiles(t, map[string]string{"main.hcl": brokenConfig})
			code, out, errOut := runIn(t, dir, "", nil, tt.args...)
			if code != ExitError || !strings.Contains(errOut, "Error: Invalid environment") || !strings.Contains(errOut, `2:   environment = "staging"`) {
				t.Errorf("exit %d, stderr:\n%s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			switch tt.lines {
			case 0: // indented: one document
				check(t, out)
			case 1:
				if len(lines) != 1 {
					t.Fatalf("stdout:\n%s", out)
				}
				check(t, lines[0])
			case 2:
				if len(lines) != 2 || lines[0] != `{"type":"version","format_version":"1"}` || !strings.HasPrefix(lines[1], `{"type":"diagnostics",`) {
					t.Fatalf("stdout:\n%s", out)
				}
				check(t, lines[1])
			}
		})
	}
}
