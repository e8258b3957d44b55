package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"pushform/backend"
	"pushform/executor"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/policy"
	"pushform/state"
	"pushform/views"
)

// ApplyOptions are the inputs of Apply beyond the Run's.
type ApplyOptions struct {
	// Saved is a saved plan to apply; nil plans now.
	Saved *planner.Plan
	// View shows the plan, the progress and the summary.
	View views.Apply
	// HoldEvents holds the progress of requests sent while the plan is
	// still being made until the plan is shown (a human view draws
	// progress only after the plan).
	HoldEvents bool
	// Confirm asks whether to send a plan with changes; nil sends without
	// asking. An apply that need not ask may stream (Run.Stream).
	Confirm func() (bool, error)
	// AllowResend applies a plan that looks like renames (see
	// planner.Plan.ResendGuard).
	AllowResend bool
	// Overrides let failed deny policies through, by name: a saved
	// plan's, or --override-policy's. Apply records them before sending.
	Overrides []plandoc.Override
	// Reviewed are the policy results a saved plan recorded: its
	// overrides let through only the failures they show (see
	// policy.Reviewed).
	Reviewed []plandoc.Policy
	// Executor are the limits of the requests (parallelism, retries); Apply
	// sets its Events, Now and PaceFrom.
	Executor executor.Options
}

// ApplyResult is what an apply did. Persisting and the summary are done;
// what the results mean (messages, exit codes) is the caller's.
type ApplyResult struct {
	// Plan is the plan applied; nil when a streamed recipients list broke
	// off (or the run was interrupted) before the plan was whole.
	Plan *planner.Plan
	// Sent says requests may have gone out: Result, Err and PersistErr
	// describe them. Without it the plan had no changes.
	Sent   bool
	Result *executor.Result
	// Err is the apply's error: the executor's, or the stream's.
	Err error
	// PersistErr says saving the state after the apply failed (the
	// journal still holds every outcome it acknowledged).
	PersistErr error
}

// Apply makes the plan (or takes the saved one), asks Confirm, sends it
// and records the outcomes. An error means nothing was sent; once
// requests may have gone out the result says what happened.
func (r *Run) Apply(ctx context.Context, o ApplyOptions) (*ApplyResult, error) {
	sess := r.Session
	out := o.View
	defer out.Flush()
	if o.Saved == nil && o.Confirm == nil {
		if s := r.Stream(); s != nil {
			return r.applyStream(ctx, o, s)
		}
	}

	p := o.Saved
	if p != nil {
		if err := sess.CheckPlan(p); err != nil {
			return nil, err
		}
		// A test send recorded since would have made the plan stale:
		// checked again against the state as apply reads it.
		planner.MarkTestSends(p, sess.Config, sess.State)
	} else {
		var err error
		p, err = r.Plan(ctx)
		if err != nil {
			return nil, err
		}
		if err := out.Plan(p); err != nil {
			return nil, err
		}
	}
	// The policies are checked on the plan shown, before asking.
	results, err := r.Policies(p, o.Overrides)
	if err != nil {
		return nil, err
	}
	var unreviewed []string
	if o.Saved != nil {
		results, unreviewed = policy.Reviewed(results, o.Reviewed)
	}
	if len(results) > 0 {
		out.Policies(results)
	}
	if denied := policy.Denied(results); len(denied) > 0 {
		return nil, &policy.DeniedError{Denied: denied, Apply: true, Saved: o.Saved != nil, Unreviewed: unreviewed}
	}
	if err := p.TestSendGuard(); err != nil {
		return nil, err
	}
	// A rename without a moved block would show the notification again:
	// refuse it before asking, before anything is sent.
	if err := p.ResendGuard(); err != nil && !o.AllowResend {
		if o.Saved != nil {
			err = errors.New(strings.Replace(err.Error(), "apply with --allow-resend", "make the plan with --allow-resend", 1))
		}
		return nil, err
	}
	if !p.HasChanges() {
		out.NoChanges()
		return &ApplyResult{Plan: p}, sess.RecordService()
	}
	if o.Confirm != nil {
		if ok, err := o.Confirm(); !ok {
			return nil, err
		}
	}

	svc, err := sess.Service()
	if err != nil {
		return nil, err
	}
	rec, err := sess.Recorder(p.Environment)
	if err != nil {
		return nil, err
	}
	if e, ok := overrideEntry(results, p, r.Clock.Now()); ok {
		if err := rec.Record(e); err != nil {
			return nil, fmt.Errorf("recording the policy overrides (nothing was sent): %w", err)
		}
	}
	out.Start(p)
	start := time.Now()
	opts := r.executorOptions(o, out.Event)
	// send_rate holds across runs: the requests recorded in the current
	// window count.
	opts.PaceFrom = planner.ResumePacing(sess.State, p.Pacing, r.Clock.Now())
	res, applyErr := executor.Apply(ctx, p, rec, svc.Client, opts)
	return r.finish(o, p, rec, res, applyErr, start), nil
}

func (r *Run) executorOptions(o ApplyOptions, events func(executor.Event)) executor.Options {
	eo := o.Executor
	eo.Events = events
	eo.Now = r.Clock.Now // the real time, or the embedded sandbox's simulated one
	return eo
}

// applyStream applies without asking while the recipients list is still
// arriving: the requests whose targets are known go out as the rest of
// the list is fetched and planned (planner.Stream says when that is the
// plan's start, exactly). The plan is shown once whole, before the
// progress of the requests already sent; nothing is sent that the plan
// made from the whole list would not send, and a list that breaks off
// stops the run after the requests sent, which are recorded.
func (r *Run) applyStream(ctx context.Context, o ApplyOptions, s *planner.Stream) (*ApplyResult, error) {
	sess, out := r.Session, o.View
	svc, err := sess.Service()
	if err != nil {
		return nil, err
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
	go r.fetchInto(fetch, s)

	events := &heldEvents{to: out.Event, hold: o.HoldEvents}
	start := time.Now()
	type result struct {
		res *executor.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := executor.ApplyStream(ctx, s, rec, svc.Client, r.executorOptions(o, events.event))
		done <- result{res, err}
	}()
	p, _ := s.WaitPlan(ctx)
	if p != nil {
		r.name(p)
		if err := out.Plan(p); err != nil {
			r.o.report(err)
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
		res := &ApplyResult{Sent: true, Result: rs.res, Err: rs.err}
		out.Flush() // the events come out before the state is saved, which takes a while
		res.PersistErr = persistAfterApply(sess, rec.opened(), rs.res)
		if _, serr := s.Plan(); serr != nil && !errors.Is(rs.err, serr) {
			res.Err = errors.Join(serr, rs.err)
		}
		return res, nil
	}
	if !p.HasChanges() {
		// The state read lent the fork its recipients list: a run that
		// records nothing saves nothing, its service included.
		out.NoChanges()
		return &ApplyResult{Plan: p}, nil
	}
	return r.finish(o, p, rec.opened(), rs.res, rs.err, start), nil
}

// finish saves the state after a run and shows its summary. The summary
// follows whatever failed: notifications may have reached devices.
func (r *Run) finish(o ApplyOptions, p *planner.Plan, rec *state.Recorder, res *executor.Result, applyErr error, start time.Time) *ApplyResult {
	// Save whatever happened: the journal already holds what was recorded,
	// the snapshot makes it compact. The events come out first.
	o.View.Flush()
	persistErr := persistAfterApply(r.Session, rec, res)
	o.View.Finish(p, res, time.Since(start), r.Session.Config)
	return &ApplyResult{Plan: p, Sent: true, Result: res, Err: applyErr, PersistErr: persistErr}
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
