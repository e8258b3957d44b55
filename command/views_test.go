package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/sandbox"
)

// controlChar finds a control character other than newline.
var controlChar = regexp.MustCompile(`[\x00-\x09\x0b-\x1f\x7f\x{80}-\x{9f}]`)

// testService starts an in-process sandbox and writes a configuration
// pointing at it; it returns the directory and an Env for Run.
func testService(t *testing.T, seed string, opts sandbox.Options, campaign string) (string, func(args ...string) (int, string, string)) {
	t.Helper()
	base, _ := testutil.StartSandbox(t, seed, opts)
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceAt(base) + campaign})
	run := func(args ...string) (int, string, string) {
		return runCLI(t, dir, Env{}, args...)
	}
	return dir, run
}

// runCLI runs the CLI in dir with env's terminal flags and an environment
// holding PF_KEY and extra.
func runCLI(t *testing.T, dir string, env Env, args ...string) (int, string, string) {
	t.Helper()
	{
		var out, errb bytes.Buffer
		vars := map[string]string{"PF_KEY": "k-test"}
		for _, kv := range env.Environ {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		env.Stdout, env.Stderr, env.Dir = &out, &errb, dir
		env.Getenv = func(k string) string { return vars[k] }
		code := Run(context.Background(), args, env)
		for _, s := range []string{out.String(), errb.String()} {
			if strings.Contains(s, "k-test") {
				t.Fatalf("the API key leaked into the output of %v", args)
			}
		}
		return code, out.String(), errb.String()
	}
}

const viewSeed = `
api_key "k-test" { environment = "test" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
user "bob" {
  device "bob-phone" { environment = "test" }
}
user "erin" {
  device "erin-phone" {
    environment = "test"
    fail        = "bad\u001b[31m token\r\n"
  }
}
user_range "u%04d" {
  count       = 3000
  device      = "d%04d"
  environment = "test"
}
`

// TestApplyNoControlCharacters runs apply without a terminal through
// retries and a failure whose message holds escape codes: stdout and stderr
// must hold no control character but newline.
func TestApplyNoControlCharacters(t *testing.T) {
	_, run := testService(t, viewSeed, sandbox.Options{FailRate: 0.3, FaultSeed: 7}, `
locals {
  many = concat([for i in range(1000) : format("u%04d", i)], [for i in range(1000, 2000) : format("u%04d", i)])
}
notification "hello" {
  user_ids = concat(["alice", "bob", "erin"], local.many)
  title    = "Hello"
  body     = "Tab\there, bell\u0007? no: a newline\nand more"
  tag      = "hello"
}
`)
	code, stdout, stderr := run("apply", "--auto-approve", "--parallelism", "2")
	if code != ExitError { // erin's device fails
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if loc := controlChar.FindStringIndex(s); loc != nil {
			t.Errorf("%s has control character %q at %d:\n%s", name, s[loc[0]:loc[1]], loc[0], s)
		}
	}
	for _, want := range []string{"retrying in", `failed: notification.hello -> erin: bad\x1b[31m token\r\n (request id`, "Apply complete: 2,002 delivered"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// normalise replaces what differs between runs: request ids, timings,
// lineages, the sandbox's port.
var normalise = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"request_id":"[^"]*"`), `"request_id":"REQ"`},
	{regexp.MustCompile(`req-[0-9a-f]+`), `REQ`},
	{regexp.MustCompile(`"seconds":[0-9.e-]+`), `"seconds":0`},
	{regexp.MustCompile(`"state_lineage": "[^"]*"`), `"state_lineage": "LINEAGE"`},
	{regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/v1`), `http://127.0.0.1:PORT/v1`},
}

func normalised(s string) string {
	for _, n := range normalise {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// eventOrder puts apply --json event lines in batch order: requests run
// in parallel and outcomes are recorded asynchronously, so only the order
// within one batch (request, retries, response) is fixed.
func eventOrder(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 3 {
		return s
	}
	type ev struct {
		Batch int    `json:"batch"`
		Type  string `json:"type"`
	}
	rank := map[string]int{"request": 0, "retry": 1, "response": 2, "error": 2}
	events := lines[1 : len(lines)-1]
	sort.SliceStable(events, func(i, j int) bool {
		var a, b ev
		json.Unmarshal([]byte(events[i]), &a)
		json.Unmarshal([]byte(events[j]), &b)
		if a.Batch != b.Batch {
			return a.Batch < b.Batch
		}
		return rank[a.Type] < rank[b.Type]
	})
	return strings.Join(lines, "\n") + "\n"
}

// TestJSONGolden pins the documented JSON outputs: plan --json, show
// PLANFILE --json (the same document) and apply --json (one object per
// line, the version first, the summary last).
func TestJSONGolden(t *testing.T) {
	dir, run := testService(t, viewSeed, sandbox.Options{}, `
notification "hello" {
  user_ids = ["alice", "bob", "erin", "nobody"]
  title    = "Hello"
  body     = "First"
  tag      = "hello"
}
badge "reset" {
  device_ids  = ["alice-phone"]
  badge_count = 0
}
`)
	now := "--now=2026-11-22T12:00:00Z"
	code, plan, stderr := run("plan", "--json", "--out", "saved.plan", now)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	testutil.Golden(t, filepath.Join("testdata", "plan.json"), []byte(normalised(plan)))
	if code, show, stderr := run("show", "--json", filepath.Join(dir, "saved.plan")); code != 0 || show != plan {
		t.Errorf("show --json: exit %d %s\n%s\nwant the plan --json document", code, stderr, show)
	}
	code, apply, stderr := run("apply", "--json", "--parallelism", "1", "saved.plan")
	if code != ExitError { // erin's device fails
		t.Fatalf("apply: exit %d: %s\n%s", code, stderr, apply)
	}
	lines := strings.Split(strings.TrimSuffix(apply, "\n"), "\n")
	for i, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i+1, err, l)
		}
		if _, ok := obj["type"]; !ok {
			t.Errorf("line %d has no type: %s", i+1, l)
		}
	}
	if lines[0] != `{"type":"version","format_version":"1"}` {
		t.Errorf("first line %s", lines[0])
	}
	if !strings.HasPrefix(lines[len(lines)-1], `{"type":"summary"`) {
		t.Errorf("last line %s\n%s", lines[len(lines)-1], stderr)
	}
	testutil.Golden(t, filepath.Join("testdata", "apply.jsonl"), []byte(eventOrder(normalised(apply))))
}

// TestMarkdownFlags checks plan --markdown and show PLANFILE --markdown
// print the same comment body, and refuse --json with --markdown.
func TestMarkdownFlags(t *testing.T) {
	_, run := testService(t, viewSeed, sandbox.Options{}, `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "First"
}
`)
	code, md, stderr := run("plan", "--markdown", "--out", "p.plan", "--now=2026-11-22T12:00:00Z")
	if code != 0 || !strings.Contains(md, "\n**Plan: 1 to create, 0 to replace, 0 to forget; 2 targets in 1 request.**\n") ||
		!strings.Contains(md, "<details>") || strings.Contains(md, "Saved the plan") ||
		!strings.Contains(md, "```sh\npushform apply p.plan\n```") || !strings.Contains(md, "**2 users get 2 pushes**") {
		t.Fatalf("plan --markdown: exit %d %s\n%s", code, stderr, md)
	}
	if code, show, stderr := run("show", "p.plan", "--markdown"); code != 0 || show != md {
		t.Errorf("show --markdown: exit %d %s\n%s", code, stderr, show)
	}
	for _, args := range [][]string{{"plan", "--json", "--markdown"}, {"show", "p.plan", "--json", "--markdown"}, {"show", "--markdown"}} {
		if code, _, stderr := run(args...); code != ExitError || !strings.Contains(stderr, "--markdown") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestMarkdownInActions: in GitHub Actions the comment links the commit
// and the run (from the command's environment), names the directory, and
// counts the devices the service last reported for a change's users.
func TestMarkdownInActions(t *testing.T) {
	dir, run := testService(t, viewSeed, sandbox.Options{}, `
notification "hello" {
  user_ids = ["alice", "bob"]
  title    = "Hello"
  body     = "First"
}
`)
	if code, _, stderr := run("apply", "--auto-approve"); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), bytes.Replace(must(os.ReadFile(filepath.Join(dir, "main.hcl"))), []byte(`"First"`), []byte(`"Second"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	gh := Env{Environ: []string{"GITHUB_SHA=0123456789abcdef0123456789abcdef01234567", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_REPOSITORY=acme/campaigns", "GITHUB_RUN_ID=42"}}
	code, _, stderr := runCLI(t, filepath.Dir(dir), gh, "--chdir", filepath.Base(dir), "plan", "--out", "p.plan")
	if code != 0 {
		t.Fatalf("plan: %s", stderr)
	}
	code, md, stderr := runCLI(t, filepath.Dir(dir), gh, "--chdir", filepath.Base(dir), "show", "p.plan", "--markdown")
	if code != 0 {
		t.Fatalf("show: %s", stderr)
	}
	for _, want := range []string{
		"commit `0123456789ab`", "[workflow run](https://github.com/acme/campaigns/actions/runs/42)",
		"directory `" + filepath.Base(dir) + "`", "pushform --chdir " + filepath.Base(dir) + " apply p.plan",
		"2 users, 2 devices last reported", "<!-- pushform plan: " + filepath.Base(dir) + " -->",
		"~ body: \"[-First-]{+Second+}\"",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comment lacks %q:\n%s", want, md)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestJSONRetryGolden pins the retry event: the second request meets a
// 503 with Retry-After (seed 19 of the sandbox's fault draws gives none,
// 503-before-processing, none: no timing involved) and is sent again.
func TestJSONRetryGolden(t *testing.T) {
	_, run := testService(t, viewSeed, sandbox.Options{FailRate: 0.5, FaultSeed: 19}, `
notification "many" {
  user_ids = [for i in range(600) : format("u%04d", i)]
  title    = "Hello"
  body     = "Many"
}
`)
	code, apply, stderr := run("apply", "--json", "--auto-approve", "--parallelism", "1")
	if code != 0 {
		t.Fatalf("apply: exit %d: %s\n%s", code, stderr, apply)
	}
	testutil.Golden(t, filepath.Join("testdata", "apply-retry.jsonl"), []byte(eventOrder(normalised(apply))))
}

// TestApplyProgressBar runs an apply of over a second on a terminal: a bar
// is drawn and cleared, coloured unless NO_COLOR or --no-color say not.
func TestApplyProgressBar(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		flags   []string
		colour  bool
	}{
		{"colour", nil, nil, true},
		{"NO_COLOR", []string{"NO_COLOR=1"}, nil, false},
		{"--no-color", nil, []string{"--no-color"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := testService(t, viewSeed, sandbox.Options{Latency: 300 * time.Millisecond}, `
notification "many" {
  user_ids = concat([for i in range(1000) : format("u%04d", i)], [for i in range(1000, 2000) : format("u%04d", i)])
  title    = "Hello"
  body     = "Many"
}
`)
			args := append([]string{"apply", "--auto-approve", "--parallelism", "1"}, tt.flags...)
			code, stdout, stderr := runCLI(t, dir, Env{StdinTerminal: true, StdoutTerminal: true, Environ: tt.environ}, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			if !strings.Contains(stdout, "\r[") || !strings.Contains(stdout, " of 2,000 targets (") || !strings.Contains(stdout, "/s") {
				t.Errorf("no progress bar:\n%q", stdout)
			}
			if got := strings.Contains(stdout, "\x1b["); got != tt.colour {
				t.Errorf("escape codes present = %v, want %v:\n%q", got, tt.colour, stdout)
			}
			if !strings.Contains(stdout, "\r\n\nApply complete") && !strings.Contains(stdout, "\x1b[K\nApply complete") && !strings.Contains(stdout, "\r\nApply complete") {
				// The bar is cleared, then the result starts on a clean line.
				i := strings.Index(stdout, "Apply complete")
				t.Errorf("bar not cleared before the result: %q", stdout[max(0, i-80):i])
			}
		})
	}
}

// TestHumanOutputEscapesServerText runs recipients, plan and state show
// against a service whose user ids hold control characters and a bidi
// override: the human output shows them escaped, the JSON output exact.
func TestHumanOutputEscapesServerText(t *testing.T) {
	_, run := testService(t, `
api_key "k-test" { environment = "test" }
user "a\u001b]0;owned\u0007\u001b[2J" {
  device "d1" { environment = "test" }
}
user "b\u202ex" {
  device "d2" { environment = "test" }
}
`, sandbox.Options{}, `
data "recipients" "all" {}
notification "hello" {
  user_ids = data.recipients.all.user_ids
  title    = "Hello"
  body     = "Hi"
  tag      = "t"
}
`)
	for _, args := range [][]string{{"recipients"}, {"plan"}, {"apply", "--auto-approve"}, {"state", "show", "notification.hello"}} {
		code, stdout, stderr := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if loc := controlChar.FindStringIndex(s); loc != nil {
				t.Errorf("%v: %s has control character %q:\n%s", args, name, s[loc[0]:loc[1]], s)
			}
			if strings.ContainsRune(s, '\u202e') {
				t.Errorf("%v: %s has a raw bidi override:\n%s", args, name, s)
			}
		}
		if !strings.Contains(stdout, `a\x1b]0;owned\a\x1b[2J`) || !strings.Contains(stdout, `b\u202ex`) {
			t.Errorf("%v: stdout lacks the escaped ids:\n%s", args, stdout)
		}
	}
	code, stdout, _ := run("recipients", "--json")
	var got struct {
		UserIDs []string `json:"user_ids"`
	}
	err := json.Unmarshal([]byte(stdout), &got)
	ids := got.UserIDs
	if code != 0 || err != nil || !slices.Contains(ids, "b\u202ex") || !slices.Contains(ids, "a\x1b]0;owned\a\x1b[2J") {
		t.Errorf("recipients --json: exit %d, %v, %q", code, err, ids)
	}
}
