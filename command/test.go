package command

import (
	"context"
	"errors"
	"fmt"
	"io"

	"pushform/atomicfile"
	"pushform/testrun"
	"pushform/views"
)

// testOptions are the flags of test.
type testOptions struct {
	*Meta
	filter   []string
	junitXML string
	jsonFlags
	verbose bool
}

// testHelp is the help of test; its flags come from the flag set it parses.
func testHelp() helpDoc {
	return helpDoc{
		usage: []string{"test [options]"},
		text: "Runs every *.pftest.hcl file of the configuration directory and of its tests directory, " +
			"like terraform test: each file's run blocks in order, each a plan or an apply whose assert blocks " +
			"check the plan, the apply, the sandbox's devices, the history and the requests the service received. " +
			"Each file runs against a fresh sandbox in-process, with a simulated clock that a run's now sets, " +
			"and a fresh state in memory: no base_url is contacted, the configured backend is never opened, and " +
			"no API key is needed. Prints each run's result, each failed assert with its file, line, condition " +
			"and the values it saw, and a closing line with the counts; exits 0 when every run passed, 1 otherwise.",
		examples: []string{
			"pushform test",
			"pushform test --filter tests/rollout.pftest.hcl --verbose",
			"pushform test --junit-xml test-results.xml",
		},
	}
}

func cmdTest(ctx context.Context, m *Meta, args []string) int {
	o := &testOptions{Meta: m}
	fs := m.FlagSet("test")
	fs.StringArrayVar(&o.filter, "filter", nil, "run only the test file `FILE`, relative to the configuration directory (repeatable)")
	fs.StringVar(&o.junitXML, "junit-xml", "", "also write the results to `FILE` as JUnit XML, one testcase per run")
	fs.BoolVar(&o.json, "json", false, "print one JSON line per run and a summary line")
	fs.BoolVar(&o.verbose, "verbose", false, "print the plan each run made")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("test", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("test", errors.New("test takes no arguments; use --filter FILE to pick test files"))
	}
	return runTest(ctx, o)
}

// runTest runs the test files and reports them: exit 0 when every run
// passed, 1 otherwise.
func runTest(ctx context.Context, o *testOptions) int {
	m := o.Meta
	files, err := testrun.Files(m.ConfigDir(), o.filter)
	if err != nil {
		return m.fail(err)
	}
	if len(files) == 0 {
		return m.Errorf("no test files: pushform test runs the *.pftest.hcl files of %s and of its %s directory", m.ConfigDir(), testrun.TestsDir)
	}
	view := views.NewTest(o.format(), m.view(false), o.verbose)
	results, sum := testrun.Run(ctx, testrun.Options{
		Dir: m.ConfigDir(), Environ: m.Environ, Backends: m.backends(), Getenv: m.Getenv, Secrets: m.secrets, Clock: m.clock(),
		UserAgent: "pushform/" + userAgentVersion(), Reporter: view,
	}, files)
	if err := view.Summary(sum); err != nil {
		return m.fail(err)
	}
	if o.junitXML != "" {
		err := atomicfile.Write(m.path(o.junitXML), 0o644, func(w io.Writer) error { return views.WriteJUnit(w, results, sum) })
		if err != nil {
			return m.fail(fmt.Errorf("writing --junit-xml: %w", err))
		}
	}
	if !sum.OK() {
		return ExitError
	}
	return ExitOK
}
