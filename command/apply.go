package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"pushform/backend"
	"pushform/executor"
	"pushform/operation"
	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

// applyOptions are the inputs of apply.
type applyOptions struct {
	*Meta
	planFlags
	retryFlags
	planFile    string // a saved plan to apply; "" plans now
	autoApprove bool
	json        bool
	parallelism int
	// allowResend applies a plan that looks like renames (see
	// planner.Plan.ResendGuard).
	allowResend bool
	// scheduled sends only what a reviewed apply accepted (see
	// planner.Options.Scheduled).
	scheduled bool
}

func cmdApply(ctx context.Context, m *Meta, args []string) int {
	o, err := parseApply(m, args)
	if err != nil {
		return m.usageError("apply", err)
	}
	return runApply(ctx, o)
}

func parseApply(m *Meta, args []string) (*applyOptions, error) {
	o := &applyOptions{Meta: m}
	fs := m.FlagSet("apply")
	o.planFlags.bind(fs)
	fs.BoolVar(&o.autoApprove, "auto-approve", false, "send without asking for confirmation")
	fs.BoolVar(&o.json, "json", false, "stream events as JSON lines")
	fs.IntVar(&o.parallelism, "parallelism", executor.DefaultParallelism, "send at most `N` requests at once")
	fs.BoolVar(&o.scheduled, "scheduled", false, "send only what a reviewed apply accepted (held-back sends, retries, new recipients of recorded content), without asking; list the other changes and exit 4")
	fs.BoolVar(&o.allowResend, "allow-resend", false, "apply a plan that forgets an address and sends to its targets under another (a rename without a moved block), and send content once more to targets that already received it: those devices show it again")
	o.retryFlags.bind(fs)
	if err := m.parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 1:
		return nil, errors.New("apply takes at most one argument, a saved plan file")
	case o.parallelism < 1:
		return nil, errors.New("--parallelism must be at least 1")
	}
	if err := o.retryFlags.check(); err != nil {
		return nil, err
	}
	if _, err := o.planFlags.check(); err != nil {
		return nil, err
	}
	if fs.NArg() == 1 {
		if err := checkSavedPlanFlags(fs); err != nil {
			return nil, err
		}
		o.planFile = fs.Arg(0)
	}
	if o.scheduled {
		if err := checkScheduledFlags(fs); err != nil {
			return nil, err
		}
	}
	o.planFlags.allowResend, o.planFlags.scheduled = o.allowResend, o.scheduled
	return o, nil
}

func runApply(ctx context.Context, o *applyOptions) int {
	m := o.Meta
	var saved *planner.Plan
	if o.planFile != "" {
		sp, err := readPlanFile(m.path(o.planFile))
		if err != nil {
			return m.fail(err)
		}
		saved = sp.Plan
		// The configuration is loaded (for its service and backend) as the
		// plan was made, and the plan's own choices apply.
		o.vars, o.varFiles, o.allowResend, o.now = sp.Vars, sp.VarFiles, sp.AllowResend, sp.Now
	}
	r, err := m.openRun(ctx, &o.planFlags, "apply")
	if err != nil {
		return m.fail(err)
	}
	sess := r.Session
	defer func() {
		if err := sess.Close(); err != nil {
			m.Errorf("%v", err)
		}
	}()
	if saved != nil {
		if err := sess.CheckPlan(saved); err != nil { // a stale plan says so first
			return m.fail(err)
		}
	}
	if err := checkApplyClock(o.now, r.Now, m.clock(), saved, sess.State); err != nil {
		return m.fail(err)
	}

	out := views.NewApply(jsonFormat(o.json), m.view(false))

	if saved == nil && o.autoApprove {
		if s := r.Stream(); s != nil {
			return o.applyStream(ctx, r, s, out)
		}
	}

	p := saved
	if p != nil {
		if err := sess.CheckPlan(p); err != nil {
			return m.fail(err)
		}
	} else {
		p, err = r.Plan(ctx)
		if err != nil {
			return m.fail(err)
		}
		if err := out.Plan(p); err != nil {
			return m.fail(err)
		}
	}
	// A rename without a moved block would show the notification again:
	// refuse it before asking, before anything is sent.
	if err := p.ResendGuard(); err != nil && !o.allowResend {
		if saved != nil {
			err = errors.New(strings.Replace(err.Error(), "apply with --allow-resend", "make the plan with --allow-resend", 1))
		}
		return m.fail(err)
	}
	if !p.HasChanges() {
		out.NoChanges()
		return o.awaitingReview(p, ExitOK)
	}
	if saved == nil && !o.autoApprove && !o.scheduled {
		if ok, err := m.confirm(); !ok {
			return m.fail(err)
		}
	}

	svc, err := sess.Service()
	if err != nil {
		return m.fail(err)
	}
	rec, err := sess.Recorder(p.Environment)
	if err != nil {
		return m.fail(err)
	}
	out.Start(p)
	start := time.Now()
	opts := o.executorOptions(out.Event)
	// send_rate holds across runs: the requests recorded in the current
	// window count.
	opts.PaceFrom = planner.ResumePacing(sess.State, p.Pacing, m.clock()())
	res, applyErr := executor.Apply(ctx, p, rec, svc.Client, opts)
	return o.awaitingReview(p, o.finish(r, out, p, rec, res, applyErr, start))
}

func (o *applyOptions) executorOptions(events func(executor.Event)) executor.Options {
	return executor.Options{
		Parallelism:   o.parallelism,
		MaxAttempts:   o.maxAttempts,
		BaseDelay:     o.baseDelay,
		MaxDelay:      o.maxDelay,
		MaxRetryAfter: o.maxRetryAfter,
		Events:        events,
		Now:           o.Meta.clock(), // the real time, whatever --now says
	}
}

// applyStream applies with --auto-approve while the recipients list is
// still arriving: the requests whose targets are known go out as the rest
// of the list is fetched and planned (planner.Stream says when that is
// the plan's start, exactly). The plan is shown once whole, before the
// progress of the requests already sent; nothing is sent that the plan
// made from the whole list would not send, and a list that breaks off
// stops the run after the requests sent, which are recorded.
func (o *applyOptions) applyStream(ctx context.Context, r *operation.Run, s *planner.Stream, out views.Apply) int {
	m, sess := o.Meta, r.Session
	svc, err := sess.Service()
	if err != nil {
		return m.fail(err)
	}
	// The stream plans from the state as read while apply records into a
	// fork of it.
	if read := sess.State; read != nil {
		sess.State = read.Fork()
		// The plan is made from the list being fetched, and the first
		// intent withdraws the one recorded last: neither the plan nor the
		// fork needs it in memory (ten million ids are 240 MB). A run that
		// records nothing saves nothing (persistAfterApply), so the stored
		// list stays as it was.
		read.Recipients, sess.State.Recipients = nil, nil
	}
	// The state is created (when there is none) with the first entry, as
	// apply without streaming creates it only for a plan with changes.
	rec := &lazyRecorder{open: func() (*state.Recorder, error) { return sess.Recorder(sess.Config.Service.Environment) }}
	fetch, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	go r.FetchInto(fetch, s)

	// A human view shows the plan first: its events wait until then.
	events := &heldEvents{to: out.Event, hold: !o.json}
	start := time.Now()
	type result struct {
		res *executor.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := executor.ApplyStream(ctx, s, rec, svc.Client, o.executorOptions(events.event))
		done <- result{res, err}
	}()
	p, _ := s.WaitPlan(ctx)
	if p != nil {
		if err := out.Plan(p); err != nil {
			m.Errorf("%v", err)
		}
		if p.HasChanges() {
			out.Start(p)
		}
		events.release()
	}
	rs := <-done
	if p == nil {
		// The list broke off (or the run was interrupted) before the plan
		// was whole: what was sent is recorded, nothing is shown as a plan.
		events.release()
		if err := persistAfterApply(sess, rec.opened(), rs.res); err != nil {
			return m.fail(fmt.Errorf("saving state (the journal of %s still holds every outcome): %w", sess.Backend, err))
		}
		if ctx.Err() != nil {
			rs.res.Interrupted = true
			return m.Errorf("%s", interruptedMessage(rs.res, backend.Name(sess.Backend)))
		}
		if _, serr := s.Plan(); serr != nil && !errors.Is(rs.err, serr) {
			rs.err = errors.Join(serr, rs.err)
		}
		if rs.res.Requests == 0 {
			return m.fail(rs.err)
		}
		return m.fail(fmt.Errorf("%w (the %s requests answered before are recorded in %s; apply again to go on)", rs.err, views.Count(rs.res.Requests), sess.Backend))
	}
	if !p.HasChanges() {
		out.NoChanges()
		return ExitOK
	}
	return o.finish(r, out, p, rec.opened(), rs.res, rs.err, start)
}

// finish saves the state after a run and shows how it went.
func (o *applyOptions) finish(r *operation.Run, out views.Apply, p *planner.Plan, rec *state.Recorder, res *executor.Result, applyErr error, start time.Time) int {
	m, sess := o.Meta, r.Session
	// Save whatever happened: the journal already holds what was recorded,
	// the snapshot makes it compact. The summary follows whatever failed:
	// notifications may have reached devices.
	persistErr := persistAfterApply(sess, rec, res)
	out.Finish(p, res, time.Since(start), sess.Config)
	if applyErr != nil {
		// The first error is the one reported; a failed save comes second.
		if res.JournalError != "" {
			m.fail(fmt.Errorf("%w\n%s", applyErr, journalFailureMessage(res, backend.Name(sess.Backend), persistErr == nil, backend.IsLocal(sess.Backend))))
		} else {
			m.fail(applyErr)
		}
		if persistErr != nil {
			m.Errorf("saving the state failed too: %v", persistErr)
		}
		return ExitError
	}
	if persistErr != nil {
		return m.fail(fmt.Errorf("saving state (the journal of %s still holds every outcome): %w", sess.Backend, persistErr))
	}
	if res.Interrupted {
		return m.Errorf("%s", interruptedMessage(res, backend.Name(sess.Backend)))
	}
	if res.Counts.Failed > 0 || res.Counts.Unknown > 0 || len(res.Errors) > 0 {
		return ExitError
	}
	return ExitOK
}

// lazyRecorder opens the recorder on the first entry.
type lazyRecorder struct {
	open func() (*state.Recorder, error)
	mu   sync.Mutex
	rec  *state.Recorder
}

// opened returns the recorder once opened, or nil: then nothing was sent.
func (l *lazyRecorder) opened() *state.Recorder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

func (l *lazyRecorder) Record(entries ...state.Entry) error {
	l.mu.Lock()
	if l.rec == nil {
		rec, err := l.open()
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.rec = rec
	}
	rec := l.rec
	l.mu.Unlock()
	return rec.Record(entries...)
}

// heldEvents passes executor events on, holding them back while hold is
// set and until release: a human view draws progress only after the plan.
type heldEvents struct {
	to   func(executor.Event)
	mu   sync.Mutex
	hold bool
	held []executor.Event
}

func (h *heldEvents) event(e executor.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold {
		h.held = append(h.held, e)
		return
	}
	h.to(e)
}

// release passes on the events held and every later one.
func (h *heldEvents) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.held {
		h.to(e)
	}
	h.held, h.hold = nil, false
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
func interruptedMessage(res *executor.Result, where string) string {
	msg := "apply was interrupted: the requests in flight were finished and recorded in " + where
	if res.NotStarted > 0 {
		msg += "; " + plural(res.NotStarted, "target") + " were not sent"
	}
	if n := res.Counts.Unknown; n > 0 {
		msg += "; " + plural(n, "target") + " have an unknown outcome"
	}
	return msg + ". Run apply again to continue from there."
}

// persistAfterApply saves the run's state. After a failed journal write
// it first folds in the outcomes the journal missed: a save that succeeds
// then records everything the run knows, and one that fails leaves the
// journal as it was, which holds what it acknowledged. Once saved, nothing
// is unrecorded (not-sent records are outcome entries too): res.Unrecorded
// is cleared. Without a recorder (a streamed apply that recorded
// nothing) there is nothing to save: the stored state is as it was read.
func persistAfterApply(sess *backend.Session, rec *state.Recorder, res *executor.Result) error {
	if rec == nil {
		return nil
	}
	u := res.Unrecorded
	if u == nil || len(u.Entries) == 0 {
		return sess.Persist()
	}
	var foldErr error
	rec.Read(func(st *state.State) {
		for _, e := range u.Entries {
			if err := st.ApplyEntry(e); err != nil && foldErr == nil {
				foldErr = err
			}
		}
	})
	if foldErr != nil {
		return fmt.Errorf("adding the unrecorded outcomes to the state: %w", foldErr)
	}
	if err := sess.Persist(); err != nil {
		return err
	}
	res.Unrecorded = nil // the entries hold the not-sent records too
	return nil
}

// journalFailureMessage says, after a failed journal write, which records
// are durable and what the next run does with the rest. saved says
// whether the state was saved after the failure (with the outcomes the
// journal missed: see persistAfterApply).
func journalFailureMessage(res *executor.Result, where string, saved, local bool) string {
	var b strings.Builder
	if saved {
		fmt.Fprintf(&b, "  Recorded: %s was saved after the failure with every outcome this run received, those the journal missed included.\n", where)
	} else {
		fmt.Fprintf(&b, "  Recorded: every intent and outcome whose journal write succeeded; they are in the journal of %s, which the next run reads back.\n", where)
	}
	u := res.Unrecorded
	if u == nil {
		u = &executor.Unrecorded{}
	}
	if n := u.Total(); n > 0 {
		fmt.Fprintf(&b, "  Not recorded: the outcomes of %s (%s): their answers arrived, but writing them to the journal failed. "+
			"The next plan treats them as unknown: tagged ones and badges are sent again (devices replace them), untagged ones are held (--retry-unknown sends them).\n",
			plural(n, "target"), countsText(u.Counts))
	}
	if u.NotSent > 0 {
		fmt.Fprintf(&b, "  Not recorded: %s of requests recorded as about to be sent were never sent, and the journal could not record that either; "+
			"the next plan treats them as unknown too, as after a crash.\n", plural(u.NotSent, "target"))
	}
	if n := res.NotStarted - u.NotSent; n > 0 {
		fmt.Fprintf(&b, "  Not sent: %s; the next plan sends them.\n", plural(n, "target"))
	}
	if local {
		b.WriteString("  Free space where the state is kept (or fix the error above), then review with pushform plan and apply again.")
	} else {
		b.WriteString("  Fix what the error above names (the connection, the server, a lock), then review with pushform plan and apply again.")
	}
	return b.String()
}

// countsText lists the non-zero counts: "500 delivered, 3 failed".
func countsText(c executor.Counts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Delivered, "delivered"}, {c.Skipped, "skipped"}, {c.Failed, "failed"}, {c.Unknown, "unknown"}} {
		if p.n > 0 {
			parts = append(parts, views.Count(p.n)+" "+p.what)
		}
	}
	return strings.Join(parts, ", ")
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
