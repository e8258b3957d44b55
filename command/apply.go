package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"pushform/executor"
	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

func runApply(ctx context.Context, m *Meta, args []string) int {
	var pf planFlags
	var autoApprove, asJSON bool
	var parallelism int
	fs := m.FlagSet("apply")
	pf.bind(fs)
	fs.BoolVar(&autoApprove, "auto-approve", false, "send without asking for confirmation")
	fs.BoolVar(&asJSON, "json", false, "stream events as JSON lines")
	fs.IntVar(&parallelism, "parallelism", executor.DefaultParallelism, "send at most `N` requests at once")
	var rf retryFlags
	rf.bind(fs)
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return m.Errorf("apply takes at most one argument, a saved plan file")
	}
	if parallelism < 1 {
		return m.Errorf("--parallelism must be at least 1")
	}
	if err := rf.check(); err != nil {
		return m.fail(err)
	}
	var saved *planner.Plan
	if fs.NArg() == 1 {
		p, err := readPlanFile(m.path(fs.Arg(0)))
		if err != nil {
			return m.fail(err)
		}
		saved = p
	}
	s, err := m.open(ctx, &pf, "apply")
	if err != nil {
		return m.fail(err)
	}
	defer func() {
		if err := s.close(); err != nil {
			m.Errorf("%v", err)
		}
	}()

	var out views.Apply
	if asJSON {
		out = views.NewApplyJSON(m.Stdout)
	} else {
		out = views.NewApplyHuman(m.Stdout, m.Stderr, m.Color(), m.StdoutTerminal, time.Now)
	}

	p := saved
	if p != nil {
		if err := checkSaved(p, s); err != nil {
			return m.fail(err)
		}
	} else {
		p, err = s.plan(ctx, &pf)
		if err != nil {
			return m.fail(err)
		}
		if err := out.Plan(p); err != nil {
			return m.fail(err)
		}
	}
	if !p.HasChanges() {
		out.NoChanges()
		return ExitOK
	}
	if saved == nil && !autoApprove {
		if ok, err := m.confirm(); !ok {
			return m.fail(err)
		}
	}

	svc, err := s.service()
	if err != nil {
		return m.fail(err)
	}
	st := s.st
	if st == nil {
		// Persist the new state before sending, so a crash in the first
		// apply leaves a journal that extends a known lineage and environment.
		st = state.New(p.Environment)
		if err := s.mgr.Persist(st); err != nil {
			return m.fail(fmt.Errorf("creating state: %w", err))
		}
	}
	out.Start(p)
	start := time.Now()
	res, applyErr := executor.Apply(ctx, p, st, svc.client, s.mgr, executor.Options{
		Parallelism:   parallelism,
		MaxAttempts:   rf.maxAttempts,
		BaseDelay:     rf.baseDelay,
		MaxDelay:      rf.maxDelay,
		MaxRetryAfter: rf.maxRetryAfter,
		Events:        out.Event,
	})
	// Save whatever happened: the journal already holds it, the snapshot
	// makes it compact.
	if err := s.mgr.Persist(st); err != nil {
		return m.fail(fmt.Errorf("saving state (the journal %s still holds every outcome): %w", s.mgr.JournalPath(), err))
	}
	out.Finish(p, res, time.Since(start), s.cfg)
	if applyErr != nil {
		return m.fail(applyErr)
	}
	if res.Interrupted {
		return m.Errorf("%s", interruptedMessage(res, s.mgr.Path()))
	}
	if res.Counts.Failed > 0 || res.Counts.Unknown > 0 || len(res.Errors) > 0 {
		return ExitError
	}
	return ExitOK
}

// retryFlags are apply's retry limits.
type retryFlags struct {
	maxAttempts                        int
	baseDelay, maxDelay, maxRetryAfter time.Duration
}

func (rf *retryFlags) bind(fs *pflag.FlagSet) {
	fs.IntVar(&rf.maxAttempts, "max-attempts", executor.DefaultMaxAttempts,
		"try a request at most `N` times (1: never retry); an ambiguous failure is retried only when every notification in the request is tagged or a badge")
	fs.DurationVar(&rf.baseDelay, "retry-delay", executor.DefaultBaseDelay, "wait about `D` before the first retry, doubling each time (with jitter)")
	fs.DurationVar(&rf.maxDelay, "retry-max-delay", executor.DefaultMaxDelay, "wait at most `D` between two tries of a request")
	fs.DurationVar(&rf.maxRetryAfter, "max-retry-after", executor.DefaultMaxRetryAfter, "honour a Retry-After (429, 503) of at most `D`")
}

func (rf *retryFlags) check() error {
	switch {
	case rf.maxAttempts < 1:
		return fmt.Errorf("--max-attempts must be at least 1 (1 tries each request once), not %d", rf.maxAttempts)
	case rf.baseDelay <= 0:
		return fmt.Errorf("--retry-delay must be positive, not %s", rf.baseDelay)
	case rf.maxDelay < rf.baseDelay:
		return fmt.Errorf("--retry-max-delay (%s) must not be shorter than --retry-delay (%s)", rf.maxDelay, rf.baseDelay)
	case rf.maxRetryAfter <= 0:
		return fmt.Errorf("--max-retry-after must be positive, not %s", rf.maxRetryAfter)
	}
	return nil
}

// interruptedMessage says what an interrupted apply did and did not do.
func interruptedMessage(res *executor.Result, statePath string) string {
	msg := "apply was interrupted: the requests in flight were finished and recorded in " + statePath
	if res.NotStarted > 0 {
		msg += "; " + plural(res.NotStarted, "target") + " were not sent"
	}
	if n := res.Counts.Unknown; n > 0 {
		msg += "; " + plural(n, "target") + " have an unknown outcome"
	}
	return msg + ". Run apply again to continue from there."
}

// checkSaved refuses a saved plan made from another state or environment:
// applying it could send what was already sent.
func checkSaved(p *planner.Plan, s *session) error {
	if p.Environment != s.cfg.Service.Environment {
		return fmt.Errorf("the plan is for environment %q but the configuration declares %q", p.Environment, s.cfg.Service.Environment)
	}
	st := s.st
	switch {
	case st == nil && p.StateLineage == "":
		return nil
	case st == nil:
		return fmt.Errorf("the plan was made from state %s (serial %d), which no longer exists: make a new plan", p.StateLineage, p.StateSerial)
	case p.StateLineage == "":
		return fmt.Errorf("the plan was made before any state existed, but state %s now holds serial %d: make a new plan", s.mgr.Path(), st.Serial)
	case st.Lineage != p.StateLineage:
		return fmt.Errorf("the plan was made from another state (lineage %s, not %s): make a new plan", p.StateLineage, st.Lineage)
	case st.Serial != p.StateSerial:
		return fmt.Errorf("the state has changed since the plan was made (serial %d, plan made at %d): it is stale, make a new plan", st.Serial, p.StateSerial)
	}
	return nil
}

// confirm asks for "yes" on a terminal; without one it refuses.
func (m *Meta) confirm() (bool, error) {
	if !m.StdinTerminal {
		return false, errors.New("apply needs confirmation and there is no terminal to ask on: review the plan and run with --auto-approve, or apply a saved plan file")
	}
	fmt.Fprint(m.Stdout, "\nDo you want to send these notifications?\n  Only 'yes' will be accepted: ")
	line, err := bufio.NewReader(m.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	if strings.TrimSpace(line) != "yes" {
		return false, errors.New("apply cancelled: nothing was sent")
	}
	return true, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return views.Count(n) + " " + noun + "s"
}
