// Package testreport is what pushform test found: per test file and per
// run, passed, failed or skipped, and each failure with the file and line
// it is about, its message, and for a failed assert the expression and
// the values it saw. Plain data: views render it (human, JSON lines,
// JUnit XML); nothing here prints.
package testreport

import (
	"time"

	"pushform/plandoc"
	"pushform/planner"
)

// Status is the outcome of a run or of a file.
type Status string

// Statuses. A run is skipped when a run before it in its file failed with
// an error (the state and devices it would start from are not what the
// file says); a file fails when any of its runs fails or it cannot be
// read.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// File is one test file's results.
type File struct {
	// Name is the file's path relative to the configuration directory.
	Name   string
	Status Status
	// Errors are the problems of the file itself (it does not parse, its
	// seed is broken): then it has no runs.
	Errors   []Failure
	Runs     []Run
	Duration time.Duration
}

// Run is one run block's result.
type Run struct {
	File string
	Name string
	// Command is plan or apply.
	Command string
	Status  Status
	// Now is the simulated time the run was made at; zero when it did
	// not get that far.
	Now      time.Time
	Failures []Failure
	Duration time.Duration
	// Plan is the plan the run made (apply: the plan it applied); nil
	// when it made none. pushform test --verbose shows it, with Policies,
	// the results of the configuration's policies on it.
	Plan     *planner.Plan
	Policies []plandoc.Policy
}

// Failure is why a run (or a file) failed.
type Failure struct {
	// File and Line are where the failure is: the assert's condition,
	// the configuration's diagnostic, the expect_failures entry; "" and 0
	// when it has no place (an error from the service).
	File string
	Line int
	// Summary names the kind of failure ("Test assertion failed"), and
	// Message says what is wrong: an assert's error_message.
	Summary string
	Message string
	// Expression is the source of a failed assert's condition, and
	// Values what its parts were.
	Expression string
	Values     []Value
}

// Value is what one part of a failed condition evaluated to.
type Value struct {
	Expression string
	Value      string
}

// Summary counts the runs of every file; a file that could not be read
// counts as one failed run.
type Summary struct {
	Passed, Failed, Skipped int
	Duration                time.Duration
}

// OK reports whether every run passed (or was skipped for no failure).
func (s Summary) OK() bool { return s.Failed == 0 }

// Add counts f's runs into s.
func (s *Summary) Add(f File) {
	if len(f.Errors) > 0 {
		s.Failed++
	}
	for _, r := range f.Runs {
		switch r.Status {
		case Pass:
			s.Passed++
		case Fail:
			s.Failed++
		case Skip:
			s.Skipped++
		}
	}
	s.Duration += f.Duration
}
