package testrun

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/testreport"
)

// campaign is the configuration most tests run: a service whose base_url
// nothing answers (a test never reaches it), a validated variable, and a
// tagged notification to the first audience users.
const campaign = `service {
  base_url    = "http://127.0.0.1:1/v1"
  api_key_env = "NO_SUCH_KEY"
  environment = "test"
}

variable "audience" {
  type    = number
  default = 2
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

const seed = `sandbox {
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

// realNow is the real clock of the tests: the first run of a file without
// now starts from it.
var realNow = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// run runs the test file src against campaign and returns its result.
func run(t *testing.T, src string) testreport.File {
	t.Helper()
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": campaign, "a.pftest.hcl": src})
	files, sum := Run(context.Background(), Options{Dir: dir, Clock: func() time.Time { return realNow }}, []string{"a.pftest.hcl"})
	if len(files) != 1 {
		t.Fatalf("files: %+v", files)
	}
	if sum.Passed+sum.Failed+sum.Skipped != max(len(files[0].Runs), 1) {
		t.Errorf("summary %+v for %d runs", sum, len(files[0].Runs))
	}
	return files[0]
}

// statuses are the runs' names and statuses, "name=status".
func statuses(f testreport.File) []string {
	var out []string
	for _, r := range f.Runs {
		out = append(out, r.Name+"="+string(r.Status))
	}
	return out
}

// messages are the failures' summaries and messages of every run.
func messages(f testreport.File) string {
	var b strings.Builder
	for _, e := range f.Errors {
		b.WriteString(e.Summary + ": " + e.Message + "\n")
	}
	for _, r := range f.Runs {
		for _, e := range r.Failures {
			b.WriteString(r.Name + ": " + e.Summary + ": " + e.Message + "\n")
			for _, v := range e.Values {
				b.WriteString("  " + v.Expression + " is " + v.Value + "\n")
			}
		}
	}
	return b.String()
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		statuses []string
		messages []string // each in the failures' text
	}{
		{
			name: "asserts pass and fail, with the values they saw",
			src: seed + `
run "send" {
  command = apply
  assert {
    condition     = apply.delivered == 2 && device("d0").inbox[0].title == "Hi"
    error_message = "both delivered"
  }
  assert {
    condition     = length(device("d2").inbox) == 1
    error_message = "d2 shows it"
  }
}
`,
			statuses: []string{"send=fail"},
			messages: []string{"send: Test assertion failed: d2 shows it", `length(device("d2").inbox) is 0`},
		},
		{
			name: "expect_failures: met, not met, and another error",
			src: seed + `
run "negative" {
  variables {
    audience = -1
  }
  expect_failures = [var.audience]
}
run "fine" {
  expect_failures = [var.audience]
}
run "undeclared" {
  variables {
    nope = 1
  }
  expect_failures = [var.audience]
}
`,
			statuses: []string{"negative=pass", "fine=fail", "undeclared=fail"},
			messages: []string{"fine: Missing expected failure: run \"fine\" expected the validation of var.audience to fail, but it passed.",
				"undeclared: Missing expected failure", "undeclared: Value for undeclared variable"},
		},
		{
			name: "the clock: the real time first, then each run's now, then where the last run left it",
			src: seed + `
run "first" {
  assert {
    condition     = plan.created_at == "2031-05-06T07:08:09Z"
    error_message = "the first run is at the real time"
  }
}
run "later" {
  command = apply
  now     = "2031-06-01T00:00:00Z"
}
run "goes_on" {
  assert {
    condition     = plan.created_at == "2031-06-01T00:00:00Z" && history_user("u0")[0].time == "2031-06-01T00:00:00Z"
    error_message = "a run without now goes on from the one before"
  }
}
`,
			statuses: []string{"first=pass", "later=pass", "goes_on=pass"},
		},
		{
			name: "a run that fails with an error skips the rest of the file",
			src: seed + `
run "send" {
  command = apply
  now     = "2031-06-01T00:00:00Z"
}
run "back_in_time" {
  command = apply
  now     = "2031-01-01T00:00:00Z"
}
run "after" {}
`,
			statuses: []string{"send=pass", "back_in_time=fail", "after=skip"},
			messages: []string{"back_in_time: Run failed: now 2031-01-01T00:00:00Z is earlier than the time the file's runs have reached (2031-06-01T00:00:00Z)"},
		},
		{
			name: "faults of one run, and what the service received",
			src: seed + `
run "send" {
  command = apply
  variables {
    audience = 3
  }
  sandbox {
    fail_ids = ["u1"]
  }
  assert {
    condition     = apply.failed == 1 && apply.failures[0].target == "u1" && [for r in requests : r.endpoint] == ["send"]
    error_message = "u1 failed"
  }
  assert {
    condition     = requests[0].notifications[0].user_ids == tolist(["u0", "u1", "u2"]) && requests[0].notifications[0].device_ids == null
    error_message = "one notification object to the three users"
  }
  assert {
    condition     = [for r in requests[0].results : r.outcome] == ["delivered", "failed", "delivered"] && requests[0].status == 207
    error_message = "207, u1 failed"
  }
}
run "retry" {
  command = apply
  variables {
    audience = 3
  }
  assert {
    condition     = apply.delivered == 1 && requests[0].notifications[0].user_ids == tolist(["u1"])
    error_message = "without the fault, u1 is retried and delivered"
  }
  assert {
    condition     = [for d in history_user("u1") : d.outcome] == ["delivered"] && length(device("d2").pending) == 1
    error_message = "the ledger has u1 delivered; d2, offline, holds the one notification (newest per tag)"
  }
}
`,
			statuses: []string{"send=pass", "retry=pass"},
		},
		{
			name: "a condition that cannot be evaluated",
			src: seed + `
run "x" {
  assert {
    condition     = device("nope").badge == 0
    error_message = "x"
  }
  assert {
    condition     = apply == null
    error_message = "a plan run has no apply"
  }
}
`,
			statuses: []string{"x=fail"},
			messages: []string{`x: Invalid condition: a.pftest.hcl:18: Error in function call: Call to function "device" failed: the sandbox has no device "nope".`},
		},
		{
			name:     "a test file that does not decode",
			src:      "run \"x\" {\n  command = deploy\n}\n",
			messages: []string{"Invalid command: command is plan or apply"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := run(t, tt.src)
			if got := statuses(f); !slices.Equal(got, tt.statuses) {
				t.Errorf("runs %v, want %v\n%s", got, tt.statuses, messages(f))
			}
			text := messages(f)
			for _, m := range tt.messages {
				if !strings.Contains(text, m) {
					t.Errorf("failures lack %q:\n%s", m, text)
				}
			}
			if len(tt.messages) == 0 && text != "" {
				t.Errorf("failures:\n%s", text)
			}
			if want := testreport.Pass; len(tt.messages) > 0 {
				if f.Status == want {
					t.Errorf("file status %s with failures", f.Status)
				}
			} else if f.Status != want {
				t.Errorf("file status %s", f.Status)
			}
		})
	}
}

// TestRunSeeds: without a sandbox block a file runs against the seed the
// service block names; an inline seed needs no api_key block.
func TestRunSeeds(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{
		"main.hcl": `service {
  sandbox     = "seed.hcl"
  environment = "production"
}

notification "n" {
  user_ids = ["ann"]
  title    = "t"
  body     = "b"
}
`,
		"seed.hcl": "api_key \"k\" {\n  environment = \"production\"\n}\nuser \"ann\" {\n  device \"p\" { environment = \"production\" }\n}\n",
		"tests/default.pftest.hcl": `run "x" {
  command = apply
  assert {
    condition     = apply.delivered == 1 && device("p").inbox[0].title == "t"
    error_message = "the service block's seed"
  }
}
`,
		"tests/inline.pftest.hcl": `sandbox {
  user "ann" {
    device "q" { environment = "production" }
  }
}
run "x" {
  command = apply
  assert {
    condition     = apply.delivered == 1 && device("q").inbox[0].title == "t"
    error_message = "the inline seed, with a key of its own"
  }
}
`,
	})
	files, err := Files(dir, nil)
	if err != nil || !slices.Equal(files, []string{"tests/default.pftest.hcl", "tests/inline.pftest.hcl"}) {
		t.Fatalf("files %v, %v", files, err)
	}
	results, sum := Run(context.Background(), Options{Dir: dir}, files)
	if sum.Passed != 2 || sum.Failed != 0 {
		for _, f := range results {
			t.Log(messages(f))
		}
		t.Fatalf("summary %+v", sum)
	}
	for _, name := range []string{"pushform.state", "pushform.sandbox.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written", name)
		}
	}
}

// TestSeedInsideTheConfiguration: a test file's seed is a file of the
// configuration directory, as the service block's is: one outside it is
// an error at the seed attribute, and is never read.
func TestSeedInsideTheConfiguration(t *testing.T) {
	outside := t.TempDir()
	testutil.WriteFile(t, outside, "seed.hcl", "user \"ann\" {\n}\nAWS_SECRET = \"do-not-show\"\n")
	for _, seed := range []string{filepath.Join(outside, "seed.hcl"), "../" + filepath.Base(outside) + "/seed.hcl", "nope.hcl"} {
		t.Run(seed, func(t *testing.T) {
			f := run(t, "sandbox {\n  seed = \""+filepath.ToSlash(seed)+"\"\n}\nrun \"x\" {}\n")
			msgs := messages(f)
			if f.Status != testreport.Fail || len(f.Runs) != 0 || len(f.Errors) != 1 || f.Errors[0].Line != 2 ||
				!strings.Contains(msgs, "inside the configuration directory") && !strings.Contains(msgs, "does not exist in the configuration directory") ||
				strings.Contains(msgs, "AWS_SECRET") {
				t.Errorf("%+v\n%s", f, msgs)
			}
		})
	}
}

// TestRequireTestSend: a run's test_sends sends addresses as pushform
// test-send does, before its command, so a configuration with
// require_test_send can be tested; without them the apply is refused,
// and the failure says how to send them in a test.
func TestRequireTestSend(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{
		"main.hcl": `service {
  sandbox           = "seed.hcl"
  environment       = "test"
  require_test_send = true
  test_devices      = ["qa"]
}

notification "hello" {
  user_ids = ["ann", "bob"]
  title    = "Hi"
  body     = "Welcome"
}
`,
		"seed.hcl": "user \"ann\" {\n  device \"a\" { environment = \"test\" }\n}\nuser \"bob\" {\n  device \"b\" { environment = \"test\" }\n}\nuser \"tester\" {\n  device \"qa\" { environment = \"test\" }\n}\n",
		"refused.pftest.hcl": `run "untested" {
  command = apply
}
`,
		"tested.pftest.hcl": `run "planned" {
  assert {
    condition     = plan.changes[0].needs_test_send
    error_message = "the plan marks it"
  }
}
run "tested" {
  command    = apply
  test_sends = ["notification.hello"]
  assert {
    condition     = apply.delivered == 2 && device("qa").inbox[0].title == "Hi" && device("a").inbox[0].title == "Hi"
    error_message = "the test device, then the audience"
  }
  assert {
    condition     = [for r in requests : r.endpoint] == ["send", "send"] && length(requests[0].notifications[0].device_ids) == 1
    error_message = "the test send is a request of the run: ${jsonencode([for r in requests : r.endpoint])}"
  }
  assert {
    condition     = [for h in history_device("qa") : h.outcome] == ["test-send"]
    error_message = "the ledger records the test send: ${jsonencode(history_device("qa"))}"
  }
}
`,
		"unknown.pftest.hcl": `run "typo" {
  test_sends = ["notification.helo"]
}
`,
	})
	results, _ := Run(context.Background(), Options{Dir: dir, Clock: func() time.Time { return realNow }},
		[]string{"refused.pftest.hcl", "tested.pftest.hcl", "unknown.pftest.hcl"})
	want := [][]string{{"untested=fail"}, {"planned=pass", "tested=pass"}, {"typo=fail"}}
	for i, f := range results {
		if got := statuses(f); !slices.Equal(got, want[i]) {
			t.Errorf("%s: %v, want %v\n%s", f.Name, got, want[i], messages(f))
		}
	}
	if msg := messages(results[0]); !strings.Contains(msg, `list them in the run's test_sends: test_sends = ["notification.hello"]`) {
		t.Errorf("the refused apply:\n%s", msg)
	}
	if f := results[2].Runs[0].Failures; len(f) != 1 || f[0].Line != 2 {
		t.Errorf("a test send of an unknown address fails at test_sends: %+v", f)
	}
	if msg := messages(results[2]); !strings.Contains(msg, "notification.helo is not a notification or badge of the configuration") {
		t.Errorf("a test send of an unknown address:\n%s", msg)
	}
}

// TestConditionsReadTheRecipients: a condition over a local that reads the
// recipients list sees the list the run fetched (it was "not known").
func TestConditionsReadTheRecipients(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{
		"main.hcl": `service {
  base_url    = "http://127.0.0.1:1/v1"
  environment = "test"
}

data "recipients" "all" {}

locals {
  everyone = data.recipients.all.user_ids
}

notification "n" {
  user_ids = local.everyone
  title    = "t"
  body     = "b"
}
`,
		"a.pftest.hcl": seed + `run "x" {
  assert {
    condition     = toset(local.everyone) == toset(["u0", "u1", "u2"]) && length(data.recipients.all.user_ids) == 3
    error_message = "the run's recipients"
  }
}
`,
	})
	results, sum := Run(context.Background(), Options{Dir: dir, Clock: func() time.Time { return realNow }}, []string{"a.pftest.hcl"})
	if sum.Passed != 1 {
		t.Errorf("%+v\n%s", sum, messages(results[0]))
	}
}

func TestFiles(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{
		"main.hcl": campaign, "b.pftest.hcl": "", "a.pftest.hcl": "", "tests/c.pftest.hcl": "", "tests/x.hcl": "", "other/d.pftest.hcl": "",
	})
	tests := []struct {
		filter []string
		want   []string
		err    string
	}{
		{nil, []string{"a.pftest.hcl", "b.pftest.hcl", "tests/c.pftest.hcl"}, ""},
		{[]string{"tests/c.pftest.hcl", "./b.pftest.hcl", "tests/c.pftest.hcl"}, []string{"tests/c.pftest.hcl", "b.pftest.hcl"}, ""},
		{[]string{filepath.Join(dir, "a.pftest.hcl")}, []string{"a.pftest.hcl"}, ""},
		{[]string{"other/d.pftest.hcl"}, nil, "--filter other/d.pftest.hcl: no such test file"},
	}
	for _, tt := range tests {
		got, err := Files(dir, tt.filter)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Files(%v) = %v, %v; want %q", tt.filter, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Files(%v) = %v, %v; want %v", tt.filter, got, err, tt.want)
		}
	}
}

// TestExamples runs the tests of every example in-process: they pass,
// and write nothing into the example.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*/tests")
	if err != nil || len(dirs) < 8 {
		t.Fatalf("examples with tests: %v %v", dirs, err)
	}
	for _, tests := range dirs {
		dir, err := filepath.Abs(filepath.Dir(tests))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			before, _ := os.ReadDir(dir)
			files, err := Files(dir, nil)
			if err != nil || len(files) == 0 {
				t.Fatalf("files %v, %v", files, err)
			}
			results, sum := Run(context.Background(), Options{Dir: dir}, files)
			if !sum.OK() || sum.Passed == 0 {
				for _, f := range results {
					t.Log(messages(f))
				}
				t.Fatalf("summary %+v", sum)
			}
			if after, _ := os.ReadDir(dir); len(after) != len(before) {
				t.Errorf("the example's directory changed: %d entries, then %d", len(before), len(after))
			}
		})
	}
}
