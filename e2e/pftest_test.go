package e2e

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// closedPortURL is a base URL on loopback where nothing listens: a port
// taken and released.
func closedPortURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// testWorkspace is a configuration that names a real service on a closed
// port, keeps its state in PostgreSQL at an address nothing answers, and
// has no API key in the environment: pushform test must reach none of
// them. files are written beside main.hcl.
func testWorkspace(t *testing.T, campaign string, files map[string]string) *workspace {
	t.Helper()
	base := closedPortURL(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PUSHFORM_") && !strings.HasPrefix(kv, "PF_KEY=") {
			env = append(env, kv)
		}
	}
	w := &workspace{t: t, dir: t.TempDir(), env: append(env, "NO_COLOR=1",
		"PUSHFORM_BASE_URL="+base, // even this one, which plan and apply would obey
		"PF_PG=postgres://nobody:canary-pw@127.0.0.1:1/none?connect_timeout=1")}
	main := "service {\n  base_url    = \"" + base + "\"\n  api_key_env = \"PF_KEY\"\n  environment = \"test\"\n}\n\n" +
		"backend \"pg\" {\n  conn_str_env = \"PF_PG\"\n  state_name   = \"never-opened\"\n}\n\n" + campaign
	files["main.hcl"] = main
	for name, src := range files {
		path := filepath.Join(w.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// checkNothingWritten fails when pushform test left a state or devices
// file in the configuration directory.
func checkNothingWritten(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"pushform.state", "pushform.state.journal", "pushform.sandbox.json", "pushform.state.lock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("pushform test wrote %s", f)
		}
	}
}

const testCampaign = `
variable "audience" {
  type    = number
  default = 3
  validation {
    condition     = var.audience >= 0
    error_message = "audience must not be negative"
  }
}

notification "hello" {
  user_ids = [for i in range(var.audience) : "u${i}"]
  title    = "Hi"
  body     = "Welcome"
  tag      = "hello"
}
`

// testSeed is the inline sandbox of the test files: three users, u2 offline.
const testSeed = `
sandbox {
  user "u0" {
    device "d0" { environment = "test" }
  }
  user "u1" {
    device "d1" { environment = "test" }
  }
  user "u2" {
    device "d2" {
      environment = "test"
      online      = false
    }
  }
}
`

// TestPushformTestCounts: a test file with passing and failing asserts,
// an expected validation failure that happens and one that does not,
// gives the exact counts, exit 1, a JSON line per run with the failures'
// places and values, and a JUnit file with one testcase per run. Nothing
// is contacted: the base_url is a closed port, the pg backend answers
// nothing, there is no API key.
func TestPushformTestCounts(t *testing.T) {
	w := testWorkspace(t, testCampaign, map[string]string{"tests/hello.pftest.hcl": testSeed + `
run "plan_everyone" {
  assert {
    condition     = plan.summary.targets == 3
    error_message = "everyone is planned"
  }
}

run "send" {
  command = apply
  now     = "2030-01-01T09:00:00Z"
  sandbox {
    fail_ids = ["u1"]
  }
  assert {
    condition     = device("d0").inbox[0].title == "Hi"
    error_message = "u0 sees it"
  }
  assert {
    condition     = apply.failed == 0
    error_message = "nothing failed"
  }
  assert {
    condition     = length(device("d2").pending) == 2
    error_message = "d2 holds two"
  }
}

run "negative_audience" {
  variables {
    audience = -1
  }
  expect_failures = [var.audience]
}

run "not_negative" {
  variables {
    audience = 1
  }
  expect_failures = [var.audience]
}

run "history" {
  assert {
    condition     = [for d in history_user("u1") : d.outcome] == ["failed"] && history_user("u0")[0].time == "2030-01-01T09:00:00Z"
    error_message = "the ledger has u1's failure"
  }
}
`})
	r := w.mustRun(1, "test", "--junit-xml", "results.xml")
	if !strings.HasSuffix(r.stdout, "\nFailure! 3 passed, 2 failed.\n") {
		t.Fatalf("closing line:\n%s", r.stdout)
	}
	for _, want := range []string{
		`  run "plan_everyone"... pass`, `  run "send"... fail`, `  run "negative_audience"... pass`, `  run "not_negative"... fail`, `  run "history"... pass`,
		"on tests/hello.pftest.hcl line 35, in run \"send\":", "│     │ apply.failed is 1", "│ nothing failed",
		"│     │ length(device(\"d2\").pending) is 1", "Missing expected failure", "the validation of var.audience to fail, but it passed",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	checkNothingWritten(t, w.dir)

	// JUnit: one testcase per run, the failures counted.
	raw, err := os.ReadFile(filepath.Join(w.dir, "results.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &junit); err != nil {
		t.Fatalf("results.xml: %v\n%s", err, raw)
	}
	if junit.Tests != 5 || junit.Failures != 2 || len(junit.Suites) != 1 || len(junit.Suites[0].Cases) != 5 {
		t.Fatalf("junit: %+v", junit)
	}
	var names, failed []string
	for _, c := range junit.Suites[0].Cases {
		names = append(names, c.Name)
		if c.Classname != "tests/hello.pftest.hcl" {
			t.Errorf("classname %q", c.Classname)
		}
		if c.Failure != nil {
			failed = append(failed, c.Name)
		}
	}
	if !slices.Equal(names, []string{"plan_everyone", "send", "negative_audience", "not_negative", "history"}) || !slices.Equal(failed, []string{"send", "not_negative"}) {
		t.Errorf("testcases %v, failed %v", names, failed)
	}

	// --json: a line per run and a summary line.
	r = w.mustRun(1, "test", "--json")
	type failure struct {
		File    *string `json:"file"`
		Line    *int    `json:"line"`
		Message string  `json:"message"`
		Values  []struct {
			Expression, Value string
		} `json:"values"`
	}
	type line struct {
		Type     string    `json:"type"`
		File     string    `json:"file"`
		Run      string    `json:"run"`
		Status   string    `json:"status"`
		Failures []failure `json:"failures"`
		Passed   int       `json:"passed"`
		Failed   int       `json:"failed"`
		Skipped  int       `json:"skipped"`
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 6 || lines[5].Type != "summary" || lines[5].Passed != 3 || lines[5].Failed != 2 || lines[5].Skipped != 0 {
		t.Fatalf("--json:\n%s", r.stdout)
	}
	send := lines[1]
	if send.Type != "run" || send.Run != "send" || send.Status != "fail" || send.File != "tests/hello.pftest.hcl" || len(send.Failures) != 2 {
		t.Fatalf("the send run: %+v", send)
	}
	f := send.Failures[0]
	if f.File == nil || *f.File != "tests/hello.pftest.hcl" || f.Line == nil || *f.Line != 35 || f.Message != "nothing failed" ||
		len(f.Values) != 1 || f.Values[0].Expression != "apply.failed" || f.Values[0].Value != "1" {
		t.Errorf("failure: %+v", f)
	}
}

// TestPushformTestNothingContacted: a configuration whose base_url is a
// closed port, whose state is in an unreachable database and whose key is
// not set still tests green: each file runs against its own sandbox, in
// process, with a state in memory. --filter runs only the files named.
func TestPushformTestNothingContacted(t *testing.T) {
	w := testWorkspace(t, testCampaign, map[string]string{
		"smoke.pftest.hcl": testSeed + `
run "send" {
  command = apply
  assert {
    condition     = apply.delivered == 3 && length(requests) == 1
    error_message = "one request delivers to all three"
  }
}
`,
		"tests/broken.pftest.hcl": "run \"x\" {\n  command = \"apply\"\n}\n",
	})
	r := w.mustRun(0, "test", "--filter", "smoke.pftest.hcl")
	if !strings.Contains(r.stdout, "smoke.pftest.hcl... pass") || !strings.HasSuffix(r.stdout, "\nSuccess! 1 passed, 0 failed.\n") || strings.Contains(r.stdout, "broken") {
		t.Fatalf("output:\n%s%s", r.stdout, r.stderr)
	}
	checkNothingWritten(t, w.dir)
	// Without --filter the broken file is run too, and counts as a failure.
	r = w.mustRun(1, "test")
	if !strings.Contains(r.stdout, "Invalid command") || !strings.HasSuffix(r.stdout, "\nFailure! 1 passed, 1 failed.\n") {
		t.Fatalf("output:\n%s", r.stdout)
	}
	if r := w.mustRun(1, "test", "--filter", "tests/nope.pftest.hcl"); !strings.Contains(r.stderr, "no such test file") {
		t.Fatalf("unknown filter:\n%s", r.stderr)
	}
}

// TestPushformTestExpectFailures: expect_failures passes when the named
// variable's validation fails, and fails (exit 1) when it does not.
func TestPushformTestExpectFailures(t *testing.T) {
	for _, tt := range []struct {
		audience, want int
		out            string
	}{
		{-1, 0, "Success! 1 passed, 0 failed."},
		{2, 1, "Failure! 0 passed, 1 failed."},
	} {
		w := testWorkspace(t, testCampaign, map[string]string{"tests/v.pftest.hcl": fmt.Sprintf("run \"bad\" {\n  variables {\n    audience = %d\n  }\n  expect_failures = [var.audience]\n}\n", tt.audience)})
		r := w.mustRun(tt.want, "test")
		if !strings.Contains(r.stdout, tt.out) {
			t.Fatalf("audience %d:\n%s", tt.audience, r.stdout)
		}
	}
}

// TestExamplesTest runs pushform test in every example, as a user would:
// every run of every test file passes, and nothing is written there.
func TestExamplesTest(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*/tests")
	if err != nil || len(dirs) < 8 {
		t.Fatalf("examples with tests: %v %v", dirs, err)
	}
	for _, tests := range dirs {
		src := filepath.Dir(tests)
		t.Run(filepath.Base(src), func(t *testing.T) {
			w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1")}
			if err := os.CopyFS(w.dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			r := w.mustRun(0, "test")
			if !strings.Contains(r.stdout, "Success!") || !strings.Contains(r.stdout, " passed, 0 failed.") {
				t.Fatalf("output:\n%s", r.stdout)
			}
			checkNothingWritten(t, w.dir)
		})
	}
}
