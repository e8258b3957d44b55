package testrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/executor"
	"pushform/operation"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/sandbox"
	"pushform/state/memory"
	"pushform/testfile"
	"pushform/testreport"
)

// fileRun is what the runs of one test file share: the state in memory,
// the sandbox's devices (kept in a directory of their own between runs,
// as the embedded sandbox keeps them beside a state) and the clock.
type fileRun struct {
	o       *Options
	file    *testfile.File
	src     []byte
	state   *memory.State
	devices string
	// seed is the sandbox's population, resolved at the first run that
	// connects (the configuration may name it); nil until then.
	seed *sandbox.Seed
	// clock is the simulated time the last run reached; zero before the
	// first.
	clock time.Time
}

func newFileRun(o *Options, f *testfile.File, src []byte, devices string) *fileRun {
	return &fileRun{o: o, file: f, src: src, state: memory.New(f.Name), devices: devices}
}

// run runs one run block. fatal says the runs after it cannot run as the
// file means them: it failed other than by its asserts or its expected
// failures.
func (fr *fileRun) run(ctx context.Context, r *testfile.Run) (res testreport.Run, fatal bool) {
	start := time.Now()
	res = testreport.Run{File: fr.file.Name, Name: r.Name, Command: r.Command, Status: testreport.Pass}
	defer func() {
		res.Duration = time.Since(start)
		if len(res.Failures) > 0 {
			res.Status = testreport.Fail
		}
	}()
	now := r.Now
	switch {
	case !now.IsZero():
	case !fr.clock.IsZero():
		now = fr.clock
	default:
		now = fr.o.clock()()
	}
	rec := &recorder{}
	// The operation's real clock stands still (see simClock): the run
	// decides and records at now and what its waits add.
	clk := &simClock{at: fr.o.clock()()}
	var diags hcl.Diagnostics
	opts := operation.Options{
		Operation: r.Command, Dir: fr.o.Dir, Backends: fr.o.Backends, StateBackend: fr.state,
		Config: config.Options{Environ: fr.o.Environ, Values: fr.values(r)},
		Service: backend.ServiceOptions{
			Simulated: &backend.Simulated{Name: fr.file.Name, Seed: fr.resolveSeed, Options: sandbox.Options{
				FailIDs: r.Faults.FailIDs, FailTargets: r.Faults.FailRate, Latency: r.Faults.Latency,
			}, Wrap: func(next http.RoundTripper) http.RoundTripper { rec.next = next; return rec }},
			DevicesDir: fr.devices, Secrets: fr.o.Secrets, UserAgent: fr.o.UserAgent,
		},
		Getenv: fr.o.Getenv, Secrets: fr.o.Secrets, Clock: clk.now, Now: now, Refresh: true,
		Diagnostics: func(_ *config.Loader, d hcl.Diagnostics) error { diags = append(diags, d...); return nil },
	}
	if len(r.TestSends) > 0 {
		if err := fr.testSends(ctx, r, opts); err != nil {
			f := fr.errorFailure(r, err)
			f.Line = r.TestSendsRange.Start.Line // at test_sends
			res.Failures = append(res.Failures, f)
			return res, true
		}
	}
	op, err := operation.Open(ctx, opts)
	if err != nil && !errors.Is(err, operation.ErrReported) {
		res.Failures = append(res.Failures, fr.errorFailure(r, err))
		return res, true
	}
	failures, unexpected := fr.expectFailures(r, diags)
	res.Failures = append(res.Failures, failures...)
	if op == nil {
		return res, unexpected
	}
	defer op.Close()
	res.Now = op.Now
	out, err := fr.command(ctx, op, r, clk)
	fr.clock = op.Clock.Now()
	if out != nil {
		res.Plan, res.Policies = out.plan, out.policies
	}
	if err != nil {
		res.Failures = append(res.Failures, fr.errorFailure(r, err))
		return res, true
	}
	if err := op.Close(); err != nil {
		res.Failures = append(res.Failures, fr.errorFailure(r, err))
		return res, true
	}
	scope := fr.scope(op, out, rec.requests())
	for _, a := range r.Asserts {
		if f := fr.check(a, scope); f != nil {
			res.Failures = append(res.Failures, *f)
		}
	}
	return res, false
}

// testSends sends the run's test_sends as pushform test-send does, each
// to the test_devices the configuration lists for it, in an operation of
// their own before the run's command, which then reads the state they
// recorded. A configuration that does not load is the command's to
// report.
func (fr *fileRun) testSends(ctx context.Context, r *testfile.Run, opts operation.Options) error {
	opts.Operation = "test-send"
	opts.Diagnostics = func(*config.Loader, hcl.Diagnostics) error { return nil }
	op, err := operation.Open(ctx, opts)
	if errors.Is(err, operation.ErrReported) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, addr := range r.TestSends {
		_, _, err = op.TestSend(ctx, operation.TestSendOptions{Address: addr})
		if errors.Is(err, operation.ErrNoTestDevices) {
			err = errors.New("the configuration lists no test_devices for it (in the service block or its campaign): test_sends sends to those")
		}
		if err != nil {
			err = fmt.Errorf("test_sends %s: %w", addr, err)
			break
		}
	}
	return errors.Join(err, op.Close())
}

// values are the run's variable values: the file's, then the run's.
func (fr *fileRun) values(r *testfile.Run) map[string]config.Value {
	vals := make(map[string]config.Value, len(fr.file.Variables)+len(r.Variables))
	for k, v := range fr.file.Variables {
		vals[k] = v
	}
	for k, v := range r.Variables {
		vals[k] = v
	}
	return vals
}

// expectFailures checks the configuration's diagnostics against the run's
// expect_failures: an expected validation failure passes, an expected one
// that did not happen fails, and any other error fails. unexpected says
// there were errors the run did not expect.
func (fr *fileRun) expectFailures(r *testfile.Run, diags hcl.Diagnostics) (failures []testreport.Failure, unexpected bool) {
	failed := map[string]bool{}
	var others hcl.Diagnostics
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		vf, ok := hcl.DiagnosticExtra[config.ValidationFailure](d)
		if ok && slices.ContainsFunc(r.ExpectFailures, func(e testfile.Expected) bool { return e.Variable == vf.Variable }) {
			failed[vf.Variable] = true
			continue
		}
		others = append(others, d)
	}
	for _, e := range r.ExpectFailures {
		if !failed[e.Variable] {
			failures = append(failures, testreport.Failure{File: e.Range.Filename, Line: e.Range.Start.Line, Summary: "Missing expected failure",
				Message: fmt.Sprintf("run %q expected the validation of var.%s to fail, but it passed.", r.Name, e.Variable)})
		}
	}
	return append(failures, fr.o.failures(others)...), len(others) > 0
}

// outcome is what a run's command made: the plan, its policies, and for
// an apply what was sent.
type outcome struct {
	plan     *planner.Plan
	policies []plandoc.Policy
	// applied is set for an apply; result nil when there was nothing to
	// send.
	applied bool
	result  *operation.ApplyResult
}

// command makes the run's plan, or applies.
func (fr *fileRun) command(ctx context.Context, op *operation.Run, r *testfile.Run, clk *simClock) (*outcome, error) {
	if r.Command == testfile.Plan {
		p, err := op.Plan(ctx)
		if err != nil {
			return nil, err
		}
		results, err := op.Policies(p, nil)
		return &outcome{plan: p, policies: results}, err
	}
	// One request at a time, in the plan's order: requests (and the
	// devices' inboxes) come out the same on every run, and the waits the
	// clock adds up are those of one sender.
	ar, err := op.Apply(ctx, operation.ApplyOptions{View: discard{}, Executor: executor.Options{Parallelism: 1, Sleep: clk.sleep}})
	if err != nil {
		return nil, err
	}
	out := &outcome{plan: ar.Plan, applied: true, result: ar}
	switch {
	case ar.Plan == nil:
		return out, fmt.Errorf("the apply broke off before its plan was whole: %w", ar.Err)
	case ar.Err != nil:
		return out, ar.Err
	case ar.PersistErr != nil:
		return out, fmt.Errorf("saving the state: %w", ar.PersistErr)
	}
	// What apply checked before sending, for plan.policies.
	out.policies, err = op.Policies(ar.Plan, nil)
	return out, err
}

// resolveSeed is the sandbox's seed for the configuration cfg: the test
// file's, or the one the service block names, or none; with an API key
// for cfg's environment when it has none (a test needs no key).
func (fr *fileRun) resolveSeed(cfg *config.Config) (*sandbox.Seed, error) {
	if fr.seed != nil {
		return fr.seed, nil
	}
	sb := fr.file.Sandbox
	seed := &sandbox.Seed{}
	switch {
	case sb.Inline != nil:
		seed = sb.Inline
	case sb.SeedFile != "" || cfg.Service.Sandbox != "":
		path := sb.SeedFile
		if path == "" {
			path = cfg.Service.Sandbox
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(fr.o.Dir, path)
		}
		s, diags := sandbox.LoadSeedFile(path)
		if diags.HasErrors() {
			return nil, fmt.Errorf("sandbox seed: %w", backend.DiagError(diags))
		}
		seed = s
	}
	if !slices.ContainsFunc(seed.APIKeys, func(k sandbox.APIKey) bool { return k.Environment == cfg.Service.Environment }) {
		s := *seed
		s.APIKeys = append(slices.Clip(s.APIKeys), sandbox.APIKey{Key: "pushform-test-" + cfg.Service.Environment, Environment: cfg.Service.Environment})
		seed = &s
	}
	fr.seed = seed
	return seed, nil
}

// errorFailure is an error of the run as its failure, at the run block.
func (fr *fileRun) errorFailure(r *testfile.Run, err error) testreport.Failure {
	msg := err.Error()
	if ce := (*operation.ClockError)(nil); errors.As(err, &ce) && ce.Simulated {
		// Said in the test file's words: it has no --now nor devices file.
		msg = fmt.Sprintf("now %s is earlier than the time the file's runs have reached (%s): simulated time never goes backwards, "+
			"or frequency caps, repeats and rollout waits could be bypassed; nothing was sent. Give this run a later now",
			ce.At.UTC().Format(time.RFC3339), ce.Floor.UTC().Format(time.RFC3339))
	}
	if te := (*planner.TestSendError)(nil); errors.As(err, &te) {
		addrs := make([]string, len(te.Changes))
		for i, c := range te.Changes {
			addrs[i] = strconv.Quote(c.Address)
		}
		msg += fmt.Sprintf("\nIn a test file, list them in the run's test_sends: test_sends = [%s]", strings.Join(addrs, ", "))
	}
	return testreport.Failure{File: r.DeclRange.Filename, Line: r.DeclRange.Start.Line, Summary: "Run failed",
		Message: strings.TrimSpace(fr.o.Secrets.String(msg))}
}
