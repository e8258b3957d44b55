package views

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"pushform/plandoc"
	"pushform/termtext"
	"pushform/testreport"
)

// Test shows pushform test as it goes: each file, each run's result, and
// the closing counts.
type Test interface {
	// FileStart is called before the runs of a file.
	FileStart(name string)
	// Run shows one run's result.
	Run(r testreport.Run)
	// FileEnd shows a file's result.
	FileEnd(f testreport.File)
	// Summary shows the counts of every run.
	Summary(s testreport.Summary) error
}

var (
	_ Test = (*TestHuman)(nil)
	_ Test = (*TestJSON)(nil)
)

// NewTest returns the test view of format f: human, or JSON lines.
// verbose shows each run's plan too.
func NewTest(f Format, v *View, verbose bool) Test {
	switch f {
	case Human:
		return &TestHuman{w: v.Stdout, color: v.Color, width: v.Width, verbose: verbose}
	case JSON:
		return &TestJSON{enc: json.NewEncoder(v.Stdout), verbose: verbose}
	}
	panic(unsupported("test", f))
}

// TestHuman shows the test as terraform test does: a line per file and
// per run, each failure in a box with its place, the condition and the
// values it saw, and a closing line with the counts.
type TestHuman struct {
	w       io.Writer
	color   bool
	width   int
	verbose bool
}

func (v *TestHuman) FileStart(name string) {
	fmt.Fprintf(v.w, "%s... in progress\n", termtext.Clean(name))
}

func (v *TestHuman) Run(r testreport.Run) {
	fmt.Fprintf(v.w, "  run %q... %s\n", termtext.Clean(r.Name), v.status(r.Status))
	if v.verbose && r.Plan != nil {
		NewPlanHuman(v.w, v.color).WithWidth(v.width).WithPolicies(r.Policies).Plan(r.Plan)
		fmt.Fprintln(v.w)
	}
	for _, f := range r.Failures {
		in := ""
		if f.File == r.File {
			in = r.Name // the failure is in the run block
		}
		v.failure(f, in)
	}
}

func (v *TestHuman) FileEnd(f testreport.File) {
	for _, e := range f.Errors {
		v.failure(e, "")
	}
	fmt.Fprintf(v.w, "%s... %s\n", termtext.Clean(f.Name), v.status(f.Status))
}

// Summary writes "Success! 2 passed, 0 failed." (and ", 1 skipped").
func (v *TestHuman) Summary(s testreport.Summary) error {
	verdict := "Success!"
	if !s.OK() {
		verdict = "Failure!"
	}
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	_, err := fmt.Fprintf(v.w, "\n%s %s.\n", v.paint(verdict, s.OK()), line)
	return err
}

func (v *TestHuman) status(s testreport.Status) string {
	switch s {
	case testreport.Pass:
		return v.paint("pass", true)
	case testreport.Fail:
		return v.paint("fail", false)
	}
	return string(s)
}

func (v *TestHuman) paint(s string, ok bool) string {
	if !v.color {
		return s
	}
	if ok {
		return "\x1b[32m" + s + "\x1b[0m"
	}
	return "\x1b[31m" + s + "\x1b[0m"
}

// failure writes f in a box: its summary, where (in run, when it is in
// that run's block), the condition and its values, and its message.
func (v *TestHuman) failure(f testreport.Failure, run string) {
	var b strings.Builder
	b.WriteString("╷\n")
	fmt.Fprintf(&b, "│ Error: %s\n", termtext.Clean(f.Summary))
	if f.File != "" {
		b.WriteString("│ \n")
		in := ""
		if run != "" {
			in = fmt.Sprintf(", in run %q", termtext.Clean(run))
		}
		fmt.Fprintf(&b, "│   on %s line %d%s:\n", termtext.Clean(f.File), f.Line, in)
		if f.Expression != "" {
			for i, l := range strings.Split(f.Expression, "\n") {
				prefix := fmt.Sprintf("%d: ", f.Line)
				if i > 0 {
					prefix = strings.Repeat(" ", len(prefix))
				}
				fmt.Fprintf(&b, "│   %s%s\n", prefix, termtext.Clean(l))
			}
		}
		if len(f.Values) > 0 {
			b.WriteString("│     ├────────────────\n")
			for _, val := range f.Values {
				fmt.Fprintf(&b, "│     │ %s is %s\n", termtext.Clean(oneLine(val.Expression)), termtext.Clean(shorten(val.Value)))
			}
		}
	}
	if f.Message != "" {
		b.WriteString("│ \n")
		for _, l := range strings.Split(f.Message, "\n") {
			fmt.Fprintf(&b, "│ %s\n", termtext.Clean(l))
		}
	}
	b.WriteString("╵\n")
	io.WriteString(v.w, b.String())
}

// maxShown bounds a value shown to people: a whole plan would drown the
// failure (the JSON lines hold it whole).
const maxShown = 400

// shorten cuts s to maxShown bytes, on a character boundary, saying how
// much it left out.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// oneLine joins the lines of an expression with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestJSON writes one JSON line per run, one per file that could not be
// run, and a summary line.
type TestJSON struct {
	enc     *json.Encoder
	verbose bool
}

// jsonTestFailure is a failure as the JSON lines show it: every key
// present.
type jsonTestFailure struct {
	File       *string         `json:"file"`
	Line       *int            `json:"line"`
	Summary    string          `json:"summary"`
	Message    string          `json:"message"`
	Expression *string         `json:"expression"`
	Values     []jsonTestValue `json:"values"`
}

type jsonTestValue struct {
	Expression string `json:"expression"`
	Value      string `json:"value"`
}

func testFailuresJSON(fs []testreport.Failure) []jsonTestFailure {
	out := make([]jsonTestFailure, 0, len(fs))
	for _, f := range fs {
		jf := jsonTestFailure{Summary: f.Summary, Message: f.Message, Values: make([]jsonTestValue, 0, len(f.Values))}
		if f.File != "" {
			file, line := f.File, f.Line
			jf.File, jf.Line = &file, &line
		}
		if f.Expression != "" {
			e := f.Expression
			jf.Expression = &e
		}
		for _, val := range f.Values {
			jf.Values = append(jf.Values, jsonTestValue(val))
		}
		out = append(out, jf)
	}
	return out
}

// FileStart writes nothing: the runs follow.
func (v *TestJSON) FileStart(string) {}

// Run writes {"type":"run","file","run","command","status","now",
// "seconds","failures"}, and with verbose the plan document.
func (v *TestJSON) Run(r testreport.Run) {
	line := struct {
		Type     string            `json:"type"`
		File     string            `json:"file"`
		Run      string            `json:"run"`
		Command  string            `json:"command"`
		Status   testreport.Status `json:"status"`
		Now      *time.Time        `json:"now"`
		Seconds  float64           `json:"seconds"`
		Failures []jsonTestFailure `json:"failures"`
		Plan     *plandoc.Document `json:"plan,omitempty"`
	}{Type: "run", File: r.File, Run: r.Name, Command: r.Command, Status: r.Status, Now: timePtr(r.Now),
		Seconds: r.Duration.Seconds(), Failures: testFailuresJSON(r.Failures)}
	if v.verbose && r.Plan != nil {
		line.Plan = plandoc.New(r.Plan)
		line.Plan.Policies = r.Policies
	}
	v.enc.Encode(line)
}

// FileEnd writes {"type":"file","file","status","failures"} for a file
// that could not be run (it does not parse): it has no run lines.
func (v *TestJSON) FileEnd(f testreport.File) {
	if len(f.Errors) == 0 {
		return
	}
	v.enc.Encode(struct {
		Type     string            `json:"type"`
		File     string            `json:"file"`
		Status   testreport.Status `json:"status"`
		Failures []jsonTestFailure `json:"failures"`
	}{"file", f.Name, f.Status, testFailuresJSON(f.Errors)})
}

// Summary writes {"type":"summary","status","passed","failed","skipped",
// "seconds"}.
func (v *TestJSON) Summary(s testreport.Summary) error {
	status := testreport.Pass
	if !s.OK() {
		status = testreport.Fail
	}
	return v.enc.Encode(struct {
		Type    string            `json:"type"`
		Status  testreport.Status `json:"status"`
		Passed  int               `json:"passed"`
		Failed  int               `json:"failed"`
		Skipped int               `json:"skipped"`
		Seconds float64           `json:"seconds"`
	}{"summary", status, s.Passed, s.Failed, s.Skipped, s.Duration.Seconds()})
}

// JUnit XML: one testsuite per file, one testcase per run (classname the
// file), a failure element per failed run and a skipped one per skipped
// run; a file that could not be run is a testsuite with an error count
// and its errors in system-err. Control characters are shown escaped, as
// on a terminal: XML has no place for most of them.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	junitCounts
	Cases     []junitCase `xml:"testcase"`
	SystemErr string      `xml:"system-err,omitempty"`
}

// junitCounts are the attributes testsuites and testsuite share.
type junitCounts struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Errors   int    `xml:"errors,attr"`
	Time     string `xml:"time,attr"`
}

func (c *junitCounts) add(o junitCounts) {
	c.Tests, c.Failures, c.Skipped, c.Errors = c.Tests+o.Tests, c.Failures+o.Failures, c.Skipped+o.Skipped, c.Errors+o.Errors
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the results of files as JUnit XML.
func WriteJUnit(w io.Writer, files []testreport.File, sum testreport.Summary) error {
	out := junitSuites{junitCounts: junitCounts{Name: "pushform test", Time: seconds(sum.Duration)}, Suites: []junitSuite{}}
	for _, f := range files {
		s := junitSuite{junitCounts: junitCounts{Name: f.Name, Time: seconds(f.Duration)}}
		if len(f.Errors) > 0 {
			s.Errors = 1
			s.SystemErr = termtext.Lines(failuresText(f.Errors))
		}
		for _, r := range f.Runs {
			c := junitCase{Name: r.Name, Classname: f.Name, Time: seconds(r.Duration)}
			switch r.Status {
			case testreport.Fail:
				s.Failures++
				c.Failure = &junitFailure{Message: termtext.Clean(r.Failures[0].Message), Type: termtext.Clean(r.Failures[0].Summary),
					Text: termtext.Lines(failuresText(r.Failures))}
			case testreport.Skip:
				s.Skipped++
				c.Skipped = &junitSkipped{Message: "an earlier run of the file failed with an error"}
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.add(s.junitCounts)
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// failuresText is failures as plain text: place, summary, condition,
// values and message of each.
func failuresText(fs []testreport.Failure) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString("\n")
		}
		if f.File != "" {
			fmt.Fprintf(&b, "%s:%d: ", f.File, f.Line)
		}
		fmt.Fprintf(&b, "%s\n", f.Summary)
		if f.Expression != "" {
			fmt.Fprintf(&b, "  %s\n", oneLine(f.Expression))
		}
		for _, v := range f.Values {
			fmt.Fprintf(&b, "    %s is %s\n", oneLine(v.Expression), shorten(v.Value))
		}
		if f.Message != "" {
			fmt.Fprintf(&b, "  %s\n", f.Message)
		}
	}
	return b.String()
}
