// Package executor carries out a plan: it sends the plan's batches through
// the service with bounded parallelism, journals every request's intent
// before sending and its outcome after, and folds both into the state, so a
// run stopped at any moment leaves a state that knows what was sent.
package executor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// Sender sends one request; *pushapi.Client is the real one.
type Sender interface {
	Send(ctx context.Context, batch []pushapi.Notification) (*pushapi.SendResponse, error)
}

// Journal durably records entries before Append returns.
type Journal interface {
	Append(entries ...state.Entry) error
}

// Defaults of Options, also the defaults of apply's flags.
const (
	DefaultParallelism   = 10
	DefaultMaxAttempts   = 5
	DefaultBaseDelay     = 250 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 5 * time.Minute
)

// Options tune an apply run. Zero values take the defaults above.
type Options struct {
	// Parallelism is the number of requests in flight.
	Parallelism int
	// MaxAttempts bounds the tries of one request, the first included.
	MaxAttempts int
	// BaseDelay and MaxDelay bound the exponential backoff between tries:
	// try n waits a random time in [d/2, d] with d = BaseDelay*2^(n-1),
	// capped at MaxDelay. A Retry-After from the service wins when longer.
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps the wait a Retry-After header can impose.
	MaxRetryAfter time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Events receives progress events, one call at a time.
	Events func(Event)
	// Sleep waits between tries; default a timer honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// EventType names an Event.
type EventType string

// Event types.
const (
	EventRequest  EventType = "request"  // a batch is being sent
	EventRetry    EventType = "retry"    // a try failed and will be repeated
	EventResponse EventType = "response" // a batch got its outcomes
	EventError    EventType = "error"    // a batch failed for good
	EventForget   EventType = "forget"   // addresses or targets dropped from state
)

// Event reports progress of an apply run.
type Event struct {
	Type      EventType     `json:"type"`
	Batch     int           `json:"batch"`
	Addresses []string      `json:"addresses,omitempty"`
	Targets   int           `json:"targets"`
	Attempt   int           `json:"attempt,omitempty"`
	Delay     time.Duration `json:"delay,omitempty"`
	RequestID string        `json:"request_id,omitempty"`
	Status    int           `json:"status,omitempty"`
	Counts    Counts        `json:"counts"`
	Error     string        `json:"error,omitempty"`
}

// Counts tallies target outcomes.
type Counts struct {
	Delivered int `json:"delivered"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
	Unknown   int `json:"unknown"`
}

func (c *Counts) add(o Counts) {
	c.Delivered += o.Delivered
	c.Skipped += o.Skipped
	c.Failed += o.Failed
	c.Unknown += o.Unknown
}

// Total is the number of targets counted.
func (c Counts) Total() int { return c.Delivered + c.Skipped + c.Failed + c.Unknown }

// Result is what an apply run did.
type Result struct {
	Counts   Counts `json:"counts"`
	Requests int    `json:"requests"` // requests that got an answer
	Retries  int    `json:"retries"`
	// Failures lists failed targets (the first MaxListed), with why.
	Failures []Failure `json:"failures,omitempty"`
	// Skipped counts skipped targets by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
	// Errors are the batches that failed as a whole.
	Errors []*BatchError `json:"-"`
	// Interrupted is set when ctx ended during the run: no request was
	// started (or retried) after that, and the ones in flight finished.
	Interrupted bool `json:"interrupted"`
	// NotStarted counts the targets of batches never sent.
	NotStarted int `json:"not_started"`
}

// MaxListed caps Result.Failures.
const MaxListed = 100

// Failure is one failed target.
type Failure struct {
	Address   string `json:"address"`
	Target    string `json:"target"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// BatchError is a request that failed as a whole.
type BatchError struct {
	Batch     int
	Addresses []string
	Err       error
	// Unknown is true when the request may have been delivered.
	Unknown bool
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("request %d (%s): %v", e.Batch+1, strings.Join(e.Addresses, ", "), e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// Apply executes plan p against st, which must be the state p was made
// from. It journals through j and updates st in memory as it goes; the
// caller persists st afterwards. The returned error is for journal failures
// and a rejected API key; per-target failures are in Result.
func Apply(ctx context.Context, p *planner.Plan, st *state.State, s Sender, j Journal, opts Options) (*Result, error) {
	opts.defaults()
	r := &run{plan: p, st: st, sender: s, journal: j, opts: opts, res: &Result{Skipped: map[string]int{}}}
	if err := r.prelude(); err != nil {
		return r.res, err
	}
	return r.res, r.sendAll(ctx)
}

func (o *Options) defaults() {
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultParallelism
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = DefaultBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type run struct {
	plan    *planner.Plan
	st      *state.State
	sender  Sender
	journal Journal
	opts    Options

	mu  sync.Mutex // guards st, res and events
	res *Result
}

// record journals entries and then folds them into the state, so memory
// never runs ahead of the journal. The journal append (an fsync) happens
// outside r.mu, so concurrent batches can share one sync in the journal.
func (r *run) record(entries ...state.Entry) error {
	if err := r.journal.Append(entries...); err != nil {
		return fmt.Errorf("writing the state journal: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range entries {
		if err := r.st.ApplyEntry(e); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) emit(e Event) {
	if r.opts.Events != nil {
		r.opts.Events(e)
	}
}

// prelude records the recipients snapshot and the forgets, which send
// nothing.
func (r *run) prelude() error {
	now := r.opts.Now().UTC()
	var entries []state.Entry
	if r.plan.Refreshed && r.plan.Recipients != nil {
		entries = append(entries, state.Entry{Type: state.EntrySnapshot, Time: r.plan.Recipients.FetchedAt,
			Items: []state.Item{{Targets: r.plan.Recipients.UserIDs}}})
	}
	var forgot []string
	for _, c := range r.plan.Changes {
		switch {
		case c.Action == planner.ActionForget:
			entries = append(entries, state.Entry{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: c.Address}}})
		case len(c.Forget) > 0:
			entries = append(entries, state.Entry{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: c.Address, Targets: c.Forget}}})
		default:
			continue
		}
		forgot = append(forgot, c.Address)
	}
	if len(entries) == 0 {
		return nil
	}
	if err := r.record(entries...); err != nil {
		return err
	}
	if len(forgot) > 0 {
		r.mu.Lock()
		r.emit(Event{Type: EventForget, Batch: -1, Addresses: forgot})
		r.mu.Unlock()
	}
	return nil
}

// prepared is a batch whose intent is journaled: ready to be sent.
type prepared struct {
	b          int
	req        []pushapi.Notification
	intent     state.Entry
	addrs      []string
	targets    int
	idempotent bool // every part may be repeated without a visible duplicate
}

// sendAll runs the pipeline: the dispatcher journals intents ahead, in
// groups that share one fsync, so a free worker never waits for a sync
// before sending; workers send; outcomes are journaled without holding up
// the worker's next request. A crash can therefore leave up to four
// batches beyond those in flight recorded as sent (unknown) that never
// left; a normal stop records those as not sent.
func (r *run) sendAll(ctx context.Context) error {
	// In-flight requests finish even after ctx ends (an interrupt stops new
	// requests only); a rejected key or a journal failure stops everything.
	fatalCtx, fatal := context.WithCancelCause(context.WithoutCancel(ctx))
	defer fatal(nil)
	// stop ends on an interrupt or a fatal error: no new try after either.
	stop, cancelStop := context.WithCancel(ctx)
	defer cancelStop()
	context.AfterFunc(fatalCtx, cancelStop)

	// A short queue keeps workers fed (a group of intents costs one fsync,
	// about a millisecond, against a request of tens) while bounding what a
	// crash leaves recorded as sent but never sent.
	ready := make(chan *prepared, min(r.opts.Parallelism, 2))
	var workers, recorders sync.WaitGroup
	for range min(r.opts.Parallelism, max(len(r.plan.Batches), 1)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for pb := range ready {
				// fatalCtx is set synchronously by fatal; stop follows it
				// only through AfterFunc.
				if stop.Err() != nil || fatalCtx.Err() != nil {
					if err := r.notSent(pb); err != nil {
						fatal(err)
					}
					continue
				}
				if err := r.send(fatalCtx, stop, pb, &recorders, fatal); err != nil {
					fatal(err)
				}
			}
		}()
	}
	sent := r.dispatch(stop, ready, fatal)
	close(ready)
	workers.Wait()
	recorders.Wait()
	for b := sent; b < len(r.plan.Batches); b++ {
		r.res.NotStarted += r.batchTargets(b)
	}
	r.res.Interrupted = ctx.Err() != nil
	if err := context.Cause(fatalCtx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// dispatch journals intents ahead of the workers and hands the batches
// out; it returns how many batches it handed out.
func (r *run) dispatch(stop context.Context, ready chan<- *prepared, fatal context.CancelCauseFunc) int {
	n := len(r.plan.Batches)
	next := 0
	for next < n && stop.Err() == nil {
		k := min(max(cap(ready)-len(ready), 1), n-next)
		group := make([]*prepared, k)
		entries := make([]state.Entry, k)
		now := r.opts.Now().UTC()
		for i := range group {
			group[i] = r.prepare(next+i, now)
			entries[i] = group[i].intent
		}
		if err := r.record(entries...); err != nil {
			fatal(err)
			break
		}
		for _, pb := range group {
			ready <- pb // workers drain it, recording not-sent after a stop
		}
		next += k
	}
	return next
}

func (r *run) batchTargets(b int) int {
	n := 0
	for _, pt := range r.plan.Batches[b].Parts {
		n += pt.To - pt.From
	}
	return n
}

// prepare builds batch b's request and intent.
func (r *run) prepare(b int, now time.Time) *prepared {
	p := r.plan
	parts := p.Batches[b].Parts
	pb := &prepared{b: b, req: make([]pushapi.Notification, len(parts)), addrs: make([]string, len(parts)),
		targets: r.batchTargets(b), idempotent: true,
		intent: state.Entry{Type: state.EntryIntent, Batch: int64(b), Time: now, Items: make([]state.Item, len(parts))}}
	for i, pt := range parts {
		c := p.Changes[pt.Change]
		ids := p.Targets(pt)
		pb.req[i] = notification(c, ids)
		content := c.Content
		pb.intent.Items[i] = state.Item{Address: c.Address, Kind: c.Kind, TargetKind: c.TargetKind,
			Fingerprint: c.Fingerprint, Content: &content, Targets: ids}
		pb.addrs[i] = c.Address
		if c.Content.Tag == "" && c.Kind != "badge" {
			pb.idempotent = false
		}
	}
	return pb
}

// notSent records a journaled batch that was never sent, after a stop: its
// targets are failed "not sent", so the next plan sends them.
func (r *run) notSent(pb *prepared) error {
	e := failedEntry(pb.intent, r.opts.Now().UTC(), "", 0, func(int) string { return "not sent: apply stopped before this request" })
	if err := r.record(e); err != nil {
		return err
	}
	r.mu.Lock()
	r.res.NotStarted += pb.targets
	r.mu.Unlock()
	return nil
}

// failedEntry records every target of intent as failed, part i with
// message msg(i).
func failedEntry(intent state.Entry, now time.Time, requestID string, status int, msg func(i int) string) state.Entry {
	e := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: requestID, Status: status,
		Items: make([]state.Item, len(intent.Items))}
	for i, it := range intent.Items {
		t := state.Target{Outcome: state.Failed, Fingerprint: it.Fingerprint, Time: now, Message: msg(i), RequestID: requestID}
		outcomes := make([]state.Target, len(it.Targets))
		for j := range outcomes {
			outcomes[j] = t
		}
		e.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	return e
}

// send sends a prepared batch with retries. The outcome of an answered
// request is recorded by a goroutine tracked in recorders, so the worker
// can start its next request while the outcome's fsync runs. It returns an
// error only when the whole run must stop. ctx carries the request (it ends
// only when the run must stop at once); stop is the interrupt, which lets
// the request in flight finish but starts no retry: a retry is a new request.
func (r *run) send(ctx, stop context.Context, pb *prepared, recorders *sync.WaitGroup, fatal context.CancelCauseFunc) error {
	b := pb.b
	r.mu.Lock()
	r.emit(Event{Type: EventRequest, Batch: b, Addresses: pb.addrs, Targets: pb.targets})
	r.mu.Unlock()

	var resp *pushapi.SendResponse
	var err error
	for attempt := 1; ; attempt++ {
		resp, err = r.sender.Send(ctx, pb.req)
		if err == nil {
			break
		}
		class, after := pushapi.Classify(err)
		retry := attempt < r.opts.MaxAttempts && ctx.Err() == nil && stop.Err() == nil &&
			(class == pushapi.Safe || class == pushapi.Ambiguous && pb.idempotent)
		if !retry {
			break
		}
		delay := r.backoff(attempt, after)
		r.mu.Lock()
		r.res.Retries++
		r.emit(Event{Type: EventRetry, Batch: b, Addresses: pb.addrs, Targets: pb.targets, Attempt: attempt, Delay: delay, Error: err.Error()})
		r.mu.Unlock()
		if r.opts.Sleep(stop, delay) != nil {
			break // interrupted while waiting: err stays the last try's
		}
	}
	if err != nil {
		return r.failed(pb, err)
	}
	recorders.Add(1)
	go func() {
		defer recorders.Done()
		if err := r.answered(pb, resp); err != nil {
			fatal(err)
		}
	}()
	return nil
}

// backoff is capped exponential backoff with full jitter, never shorter
// than what the service asked for.
func (r *run) backoff(attempt int, after time.Duration) time.Duration {
	d := r.opts.BaseDelay << min(attempt-1, 16)
	if d > r.opts.MaxDelay || d <= 0 {
		d = r.opts.MaxDelay
	}
	d = d/2 + rand.N(d/2+1)
	// Honour Retry-After, within reason: a service asking for hours is
	// better reported than waited for.
	return max(d, min(after, r.opts.MaxRetryAfter))
}

func (r *run) answered(pb *prepared, resp *pushapi.SendResponse) error {
	b, intent, addrs, targets := pb.b, pb.intent, pb.addrs, pb.targets
	now := r.opts.Now().UTC()
	out := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: resp.RequestID, Status: resp.StatusCode,
		Items: make([]state.Item, len(intent.Items))}
	var counts Counts
	var failures []Failure
	skipped := map[string]int{}
	for i, it := range intent.Items {
		outcomes := make([]state.Target, len(it.Targets))
		var results []pushapi.Result
		if i < len(resp.Results) {
			results = resp.Results[i]
		}
		for j, id := range it.Targets {
			res := resultFor(results, j, it.TargetKind)
			t := toTarget(res, it.Fingerprint, resp.RequestID, now)
			outcomes[j] = t
			switch t.Outcome {
			case state.Delivered:
				counts.Delivered++
			case state.Skipped:
				counts.Skipped++
				skipped[t.Reason]++
			case state.Failed:
				counts.Failed++
				failures = append(failures, Failure{Address: it.Address, Target: id, Message: t.Message, RequestID: resp.RequestID})
			default:
				counts.Unknown++
			}
		}
		out.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	if err := r.record(out); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Requests++
	r.res.Counts.add(counts)
	for k, v := range skipped {
		r.res.Skipped[k] += v
	}
	for _, f := range failures {
		if len(r.res.Failures) < MaxListed {
			r.res.Failures = append(r.res.Failures, f)
		}
	}
	r.emit(Event{Type: EventResponse, Batch: b, Addresses: addrs, Targets: targets, RequestID: resp.RequestID, Status: resp.StatusCode, Counts: counts})
	return nil
}

// resultFor picks target j's result; a topics notification has one result
// for its whole array.
func resultFor(results []pushapi.Result, j int, targetKind string) *pushapi.Result {
	if targetKind == "topics" {
		j = 0
	}
	if j < len(results) {
		return &results[j]
	}
	return nil
}

func toTarget(res *pushapi.Result, fp, requestID string, now time.Time) state.Target {
	t := state.Target{Fingerprint: fp, RequestID: requestID, Time: now}
	if res == nil { // the client checks lengths; be safe anyway
		t.Outcome = state.Unknown
		return t
	}
	switch res.Outcome {
	case pushapi.OutcomeDelivered:
		t.Outcome = state.Delivered
		t.DeviceCount = -1
		if res.DeviceCount != nil {
			t.DeviceCount = *res.DeviceCount
		}
	case pushapi.OutcomeSkipped:
		t.Outcome = state.Skipped
		t.Reason = res.Reason
		t.UnreachableSince = res.UnreachableSince
	case pushapi.OutcomeFailed:
		t.Outcome = state.Failed
		t.Message = res.Message
	default:
		t.Outcome = state.Unknown
	}
	return t
}

// failed records a batch that got no usable answer. When the request may
// have been processed its targets stay unknown (as the intent left them);
// when it certainly was not, they are recorded failed with the reason, so
// the next plan sends them again.
func (r *run) failed(pb *prepared, err error) error {
	class, _ := pushapi.Classify(err)
	var auth *pushapi.AuthError
	var ve *pushapi.ValidationError
	be := &BatchError{Batch: pb.b, Addresses: pb.addrs, Err: err, Unknown: class == pushapi.Ambiguous}
	var counts Counts
	if be.Unknown {
		counts.Unknown = pb.targets // as the intent left them
	} else {
		requestID, status := "", 0
		msg := func(int) string { return "not sent: " + err.Error() }
		if errors.As(err, &ve) {
			requestID, status = ve.RequestID, 400
			msg = func(i int) string { return "rejected by the service: " + issuesFor(ve, i) }
		}
		if jerr := r.record(failedEntry(pb.intent, r.opts.Now().UTC(), requestID, status, msg)); jerr != nil {
			return jerr
		}
		counts.Failed = pb.targets
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Counts.add(counts)
	r.res.Errors = append(r.res.Errors, be)
	r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.addrs, Targets: pb.targets, Counts: counts, Error: err.Error()})
	if errors.As(err, &auth) {
		return err
	}
	return nil
}

// issuesFor renders the service's issues that concern notification i of a
// request (or all of them when the service gave no index).
func issuesFor(ve *pushapi.ValidationError, i int) string {
	if len(ve.Issues) == 0 {
		if ve.Excerpt == "" {
			return "the request was refused with no details"
		}
		return ve.Excerpt
	}
	var parts []string
	for _, is := range ve.Issues {
		if is.Index == i || is.Index < 0 {
			parts = append(parts, is.String())
		}
	}
	if len(parts) == 0 {
		return "another notification of the same request was invalid"
	}
	return strings.Join(parts, "; ")
}

// notification builds the request object of change c for ids.
func notification(c *planner.Change, ids []string) pushapi.Notification {
	n := pushapi.Notification{
		Title:              c.Content.Title,
		Body:               c.Content.Body,
		OpenToURL:          c.Content.OpenToURL,
		BadgeCount:         c.Content.BadgeCount,
		SilentInForeground: c.Content.SilentInForeground,
		Tag:                c.Content.Tag,
	}
	switch c.TargetKind {
	case "device_ids":
		n.DeviceIDs = ids
	case "topics":
		n.Topics = ids
	default:
		n.UserIDs = ids
	}
	return n
}
