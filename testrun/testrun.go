// Package testrun runs pushform test: every run block of a test file, in
// order, against a fresh simulated service (the sandbox, in-process, with
// a simulated clock) and a fresh state in memory, shared by the file's
// runs. Nothing real is contacted: no base_url, no configured backend, no
// API key. Each run loads the configuration with its variables, plans or
// applies through package operation as plan and apply do, and checks its
// asserts against the plan, the apply summary, the sandbox's devices, the
// state's history and the requests the service received. The results are
// testreport data; what shows them is the caller's.
package testrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/secret"
	"pushform/testfile"
	"pushform/testreport"
)

// TestsDir is the directory of the configuration directory whose test
// files pushform test runs besides the configuration directory's own.
const TestsDir = "tests"

// Options are the inputs of Run.
type Options struct {
	// Dir is the configuration directory.
	Dir string
	// Environ sets variables through PUSHFORM_VAR_name, as for plan; a
	// test file's values win.
	Environ []string
	// Backends are the backend types a backend block may name (it is
	// checked, never opened); nil means backend.Builtins().
	Backends backend.Registry
	// Getenv reads the environment, only to learn the secrets the
	// configuration names (its API key's variable) and keep them out of
	// what a failure shows: nothing is reached with them.
	Getenv func(string) string
	// Secrets are taken out of everything a failure shows.
	Secrets *secret.Set
	// Clock is the real clock, which the first run of a file without now
	// starts from; nil means time.Now.
	Clock func() time.Time
	// UserAgent names pushform and its version to the sandbox.
	UserAgent string
	// Reporter hears of each file and run as it ends; nil hears nothing.
	Reporter Reporter
}

// Reporter is told of the progress of Run: views.Test is one.
type Reporter interface {
	// FileStart is called before the runs of a file.
	FileStart(name string)
	// Run is called with each run's result, skipped ones too.
	Run(r testreport.Run)
	// FileEnd is called with the file's results.
	FileEnd(f testreport.File)
}

func (o *Options) clock() func() time.Time {
	if o.Clock == nil {
		return time.Now
	}
	return o.Clock
}

// Files lists the test files of dir: its *.pftest.hcl files, then those
// of its tests directory, each sorted, as paths relative to dir. filter,
// when not empty, keeps the files it names (relative to dir, as listed);
// a name that is no test file there is an error.
func Files(dir string, filter []string) ([]string, error) {
	var all []string
	for _, sub := range []string{"", TestsDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, os.ErrNotExist) && sub != "" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing test files: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), config.TestFileSuffix) {
				all = append(all, filepath.ToSlash(filepath.Join(sub, e.Name())))
			}
		}
	}
	if len(filter) == 0 {
		return all, nil
	}
	var out []string
	for _, f := range filter {
		name := filepath.ToSlash(filepath.Clean(f))
		if filepath.IsAbs(f) {
			if rel, err := filepath.Rel(dir, f); err == nil {
				name = filepath.ToSlash(rel)
			}
		}
		if !slices.Contains(all, name) {
			return nil, fmt.Errorf("--filter %s: no such test file; the test files are the *%s files of the configuration directory and of its %s directory (%s)",
				f, config.TestFileSuffix, TestsDir, listOrNone(all))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "there are none"
	}
	return strings.Join(names, ", ")
}

// Run runs the test files (as Files names them), in order, and returns
// their results with the count of every run.
func Run(ctx context.Context, o Options, files []string) ([]testreport.File, testreport.Summary) {
	var sum testreport.Summary
	out := make([]testreport.File, 0, len(files))
	for _, name := range files {
		if o.Reporter != nil {
			o.Reporter.FileStart(name)
		}
		f := o.runFile(ctx, name)
		if o.Reporter != nil {
			o.Reporter.FileEnd(f)
		}
		sum.Add(f)
		out = append(out, f)
	}
	return out, sum
}

// runFile runs the runs of one test file.
func (o *Options) runFile(ctx context.Context, name string) testreport.File {
	start := time.Now()
	res := testreport.File{Name: name, Status: testreport.Pass}
	defer func() { res.Duration = time.Since(start) }()
	tf, src, diags := o.decode(name)
	if diags.HasErrors() {
		res.Status, res.Errors = testreport.Fail, o.failures(diags)
		res.Duration = time.Since(start)
		return res
	}
	devices, err := os.MkdirTemp("", "pushform-test-")
	if err != nil {
		res.Status, res.Errors = testreport.Fail, []testreport.Failure{{File: name, Summary: "Cannot run the test file", Message: err.Error()}}
		return res
	}
	defer os.RemoveAll(devices)
	fs := newFileRun(o, tf, src, devices)
	broken := false
	for _, r := range tf.Runs {
		var rr testreport.Run
		if broken || ctx.Err() != nil {
			rr = testreport.Run{File: name, Name: r.Name, Command: r.Command, Status: testreport.Skip}
		} else {
			var fatal bool
			rr, fatal = fs.run(ctx, r)
			broken = fatal
		}
		if rr.Status == testreport.Fail {
			res.Status = testreport.Fail
		}
		if o.Reporter != nil {
			o.Reporter.Run(rr)
		}
		res.Runs = append(res.Runs, rr)
	}
	res.Duration = time.Since(start)
	return res
}

// decode reads, parses and decodes the test file name.
func (o *Options) decode(name string) (*testfile.File, []byte, hcl.Diagnostics) {
	src, err := config.ReadSource(filepath.Join(o.Dir, filepath.FromSlash(name)), config.MaxFileSize)
	if err != nil {
		return nil, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the test file", Detail: err.Error(),
			Subject: &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos}}}
	}
	f, diags := config.ParseSource(name, src)
	if diags.HasErrors() {
		return nil, src, diags
	}
	tf, d := testfile.Decode(name, f, config.Functions(o.Dir))
	diags = append(diags, d...)
	if tf != nil && tf.Sandbox.SeedFile != "" {
		if err := config.CheckSeedFile(o.Dir, tf.Sandbox.SeedFile); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid sandbox seed file", Detail: err.Error(),
				Subject: tf.Sandbox.SeedRange.Ptr()})
		}
	}
	return tf, src, diags
}

// failures are the errors of diags as failures.
func (o *Options) failures(diags hcl.Diagnostics) []testreport.Failure {
	var out []testreport.Failure
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		f := testreport.Failure{Summary: o.Secrets.String(d.Summary), Message: o.Secrets.String(d.Detail)}
		if d.Subject != nil {
			f.File, f.Line = d.Subject.Filename, d.Subject.Start.Line
		}
		out = append(out, f)
	}
	return out
}
