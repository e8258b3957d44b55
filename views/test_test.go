package views

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/testreport"
)

// testResults are two files: one with a passing, a failing (an assert
// with values, a missing expected failure) and a skipped run; one that
// does not parse.
func testResults() ([]testreport.File, testreport.Summary) {
	at := time.Date(2030, 11, 29, 10, 0, 0, 0, time.UTC)
	a := testreport.File{Name: "tests/a.pftest.hcl", Status: testreport.Fail, Duration: 1500 * time.Millisecond, Runs: []testreport.Run{
		{File: "tests/a.pftest.hcl", Name: "first", Command: "plan", Status: testreport.Pass, Now: at, Duration: 10 * time.Millisecond},
		{File: "tests/a.pftest.hcl", Name: "second", Command: "apply", Status: testreport.Fail, Now: at, Duration: 20 * time.Millisecond, Failures: []testreport.Failure{
			{File: "tests/a.pftest.hcl", Line: 12, Summary: "Test assertion failed", Message: "everyone is \x1b[31mplanned\x1b[0m",
				Expression: "plan.summary.targets ==\n    40", Values: []testreport.Value{{Expression: "plan.summary.targets", Value: "30"}, {Expression: "device(\"d\").inbox", Value: "[" + strings.Repeat(`"x",`, 120) + `"é"]`}}},
			{File: "main.hcl", Line: 3, Summary: "Invalid value for variable", Message: "audience must not be negative"},
			{Summary: "Run failed", Message: "the service answered 500"},
		}},
		{File: "tests/a.pftest.hcl", Name: "third", Command: "plan", Status: testreport.Skip},
	}}
	b := testreport.File{Name: "tests/b.pftest.hcl", Status: testreport.Fail, Errors: []testreport.Failure{
		{File: "tests/b.pftest.hcl", Line: 2, Summary: "Invalid command", Message: "command is plan or apply"},
	}}
	var sum testreport.Summary
	sum.Add(a)
	sum.Add(b)
	return []testreport.File{a, b}, sum
}

// TestTestViews: the human output, the JSON lines and the JUnit XML of
// the same results.
func TestTestViews(t *testing.T) {
	files, sum := testResults()
	if sum.Passed != 1 || sum.Failed != 2 || sum.Skipped != 1 || sum.OK() {
		t.Fatalf("summary %+v", sum)
	}
	for _, tt := range []struct {
		golden string
		format Format
	}{{"test.txt", Human}, {"test.jsonl", JSON}} {
		var out bytes.Buffer
		v := NewTest(tt.format, &View{Stdout: &out}, false)
		for _, f := range files {
			v.FileStart(f.Name)
			for _, r := range f.Runs {
				v.Run(r)
			}
			v.FileEnd(f)
		}
		if err := v.Summary(sum); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", tt.golden), out.Bytes())
	}
	var out bytes.Buffer
	if err := WriteJUnit(&out, files, sum); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "test-junit.xml"), out.Bytes())
	var parsed struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Cases []struct{ Name string } `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &parsed); err != nil || parsed.Tests != 3 || len(parsed.Suites) != 2 || len(parsed.Suites[0].Cases) != 3 {
		t.Fatalf("junit: %+v, %v", parsed, err)
	}
}

func TestTestSummaryLine(t *testing.T) {
	for _, tt := range []struct {
		sum  testreport.Summary
		want string
	}{
		{testreport.Summary{Passed: 2}, "\nSuccess! 2 passed, 0 failed.\n"},
		{testreport.Summary{Passed: 1, Failed: 1}, "\nFailure! 1 passed, 1 failed.\n"},
		{testreport.Summary{Failed: 1, Skipped: 2}, "\nFailure! 0 passed, 1 failed, 2 skipped.\n"},
	} {
		var out bytes.Buffer
		NewTest(Human, &View{Stdout: &out}, false).Summary(tt.sum)
		if out.String() != tt.want {
			t.Errorf("%+v: %q, want %q", tt.sum, out.String(), tt.want)
		}
	}
}

// TestTestVerbosePolicies: --verbose shows a run's plan as plan shows it,
// with the results of its policies.
func TestTestVerbosePolicies(t *testing.T) {
	r := testreport.Run{File: "a.pftest.hcl", Name: "x", Command: "plan", Status: testreport.Pass,
		Plan:     &planner.Plan{FormatVersion: planner.FormatVersion, Environment: "test"},
		Policies: []plandoc.Policy{{Name: "https_only", Enforcement: "deny", Result: plandoc.Pass, File: "main.hcl", Line: 3, Checked: 1, Failures: []plandoc.Failure{}}}}
	var human, js bytes.Buffer
	NewTest(Human, &View{Stdout: &human}, true).Run(r)
	if !strings.Contains(human.String(), "Policies: 1 passed.") {
		t.Errorf("human:\n%s", human.String())
	}
	NewTest(JSON, &View{Stdout: &js}, true).Run(r)
	if !strings.Contains(js.String(), `"policies":[{"name":"https_only"`) {
		t.Errorf("json:\n%s", js.String())
	}
}
