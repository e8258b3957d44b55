// Package executor carries out a plan: it sends the plan's batches through
// the service with bounded parallelism, journals every request's intent
// before sending and its outcome after, and folds both into the state, so a
// run stopped at any moment leaves a state that knows what was sent.
package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// Sender sends one request; *pushapi.Client is the real one.
type Sender interface {
	Send(ctx context.Context, batch []pushapi.Notification) (*pushapi.SendResponse, error)
}

// Recorder journals entries durably and folds them into the run's state,
// in that order, before Record returns: apply records each request's intent
// before sending it and its outcome after. *state.Recorder is the real one.
type Recorder interface {
	Record(entries ...state.Entry) error
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
	// Now is the clock: the times recorded, delivery windows (no try at
	// or after a change's SendBefore) and pacing; default time.Now.
	Now func() time.Time
	// Events receives progress events, one call at a time.
	Events func(Event)
	// PaceFrom holds, per send_rate group, the earliest start of the
	// group's first request: what the requests recorded before this run
	// allow (planner.ResumePacing), so a restarted apply continues the
	// rate. A group not in it starts at once.
	PaceFrom map[string]time.Time
	// Sleep waits between tries and for send rates; default a timer
	// honouring ctx. Tests pass a fake clock's, so pacing needs no real time.
	Sleep func(ctx context.Context, d time.Duration) error
	// RateLimit is the run's budget for waiting out 429s, shared with the
	// client's recipients pages (see pushapi.RateLimit); nil: one of
	// pushapi.DefaultRateLimitWait on Now. A 429 is a wait, never a try:
	// every worker pauses as long as it asks (Retry-After, within
	// MaxRetryAfter); once the budget is spent, the request is recorded
	// not sent and the run stops (a *RateLimitedError).
	RateLimit *pushapi.RateLimit
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
	// EventSplit: a packed request was refused (400); the notifications
	// not to blame are sent again as new requests, numbered in Parts.
	EventSplit EventType = "split"
	// EventPacing: a request waits Delay for its send rate: Rate of Group.
	EventPacing EventType = "pacing"
	// EventMove: addresses renamed in state (MovedFrom[i] to Addresses[i]).
	EventMove EventType = "move"
	// EventWait: the service answered a batch 429; every request of the
	// run waits Delay (Status 429). Not a try: the request is sent again.
	EventWait EventType = "wait"
	// EventQuiet: a request's targets entered their quiet_hours (At)
	// before it could start: held for the next apply after the window.
	EventQuiet EventType = "quiet"
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
	// Parts are the batch numbers of the requests a split batch's
	// notifications are sent again in (numbered after the plan's batches).
	Parts []int `json:"parts,omitempty"`
	// TooLarge is set on a split of a request too large for the service
	// (Error says why): all of it is sent again, in Parts.
	TooLarge bool `json:"too_large,omitempty"`
	// Group and Rate say which send rate a pacing event waits for:
	// "campaign.black_friday", "600/minute".
	Group string `json:"group,omitempty"`
	Rate  string `json:"rate,omitempty"`
	// MovedFrom parallels Addresses on move events: the old addresses.
	MovedFrom []string `json:"moved_from,omitempty"`
	// Unrecorded is set on a response or error whose outcome could not be
	// written to the state journal.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// At is when the quiet_hours of a quiet event began (RFC 3339).
	At string `json:"at,omitempty"`
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
	// Sent counts the requests sent, retries not counted again: those
	// whose answer was lost or unusable too.
	Sent    int `json:"sent"`
	Retries int `json:"retries"`
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
	// Quiet counts the targets not sent because their quiet_hours began
	// during the run (a paced run, a saved plan): the next apply after
	// the window sends them. Not a failure.
	Quiet int `json:"quiet"`
	// JournalError is the first failure to write the state journal (a
	// full disk, an I/O error), after which the run stopped; "" when none.
	JournalError string `json:"journal_error,omitempty"`
	// Unrecorded counts what the run knows and could not record because a
	// journal write failed; nil when everything was recorded.
	Unrecorded *Unrecorded `json:"unrecorded,omitempty"`
}

// Unrecorded tallies targets whose outcome a run knows but could not write
// to the state journal. Their intent is recorded, so the state holds them
// as sent with no answer: unknown.
type Unrecorded struct {
	// Counts are the outcomes of answers that arrived; they are in
	// Result.Counts too.
	Counts
	// NotSent counts the targets of requests recorded as about to be sent
	// that were never sent; they are in Result.NotStarted too.
	NotSent int `json:"not_sent"`
	// Entries are the outcome entries that could not be journaled, in the
	// order they were made: a caller that can still save the state whole
	// folds them in first (see state.State.ApplyEntry).
	Entries []state.Entry `json:"-"`
}

// Targets is the number of targets counted.
func (u *Unrecorded) Targets() int { return u.Total() + u.NotSent }

// MaxListed caps Result.Failures.
const MaxListed = 100

// Failure is one failed target.
type Failure struct {
	Address   string `json:"address"`
	Target    string `json:"target"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// BatchError is a request that failed as a whole, or the notifications of
// a request a 400 blamed. Batch numbers the request in this run: the plan's
// batches first, then the parts of refused requests sent again.
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

// UnattributedError is a 400 on a packed request that the service did not
// tie to any of its notifications and that sending the request again in
// parts did not narrow down within the run's budget: its notifications were
// not sent, and none is blamed.
type UnattributedError struct {
	Err *pushapi.ValidationError
	// Requests is how many parts were sent trying to find the invalid one.
	Requests int
}

func (e *UnattributedError) Error() string {
	return fmt.Sprintf("%v; the service did not say which notification was invalid, and sending the request again in parts (%d requests) did not find it: these notifications were not sent", e.Err, e.Requests)
}

// Apply executes plan p, recording every intent and outcome through rec,
// which must hold the state p was made from; the caller persists that state
// afterwards. The returned error is for recording failures and a rejected
// API key (which is not also in Result.Errors); per-target failures are in
// Result. A request refused with a 400 is split: the notifications the
// service blames fail, the others are sent again as new requests.
func Apply(ctx context.Context, p *planner.Plan, rec Recorder, s Sender, opts Options) (*Result, error) {
	opts.defaults()
	r := &run{src: wholePlan{p}, rec: rec, sender: s, opts: opts, res: &Result{Skipped: map[string]int{}}, pacer: newPacer(p, opts.PaceFrom)}
	r.nextBatch.Store(int64(len(p.Batches)))
	r.partsOnce.Do(func() {})
	if err := r.prelude(p, nil); err != nil {
		return r.res, err
	}
	return r.res, r.sendAll(ctx)
}

// ApplyStream is Apply for a plan still being made (planner.Stream): each
// request is sent once planned, while the recipients list is still
// arriving. Before the first intent the journal records that the last
// recipients list no longer holds (a crash before the new one is recorded
// leaves none, so plan --refresh=false cannot plan with a list older than
// what was sent); once the plan is whole, the new list and the targets it
// forgets are recorded, as Apply records them first. If the stream fails
// (the list breaks off), the requests sent are recorded, no other is sent,
// and the stream's error is returned. A stream never paces, moves or
// forgets whole addresses (see planner.NewStream).
func ApplyStream(ctx context.Context, st *planner.Stream, rec Recorder, s Sender, opts Options) (*Result, error) {
	opts.defaults()
	r := &run{src: streamed{st}, streaming: true, rec: rec, sender: s, opts: opts, res: &Result{Skipped: map[string]int{}},
		pacer: newPacer(&planner.Plan{}, nil)}
	return r.res, r.sendAll(ctx)
}

// requests is where a run takes its requests: a whole plan, or a plan
// being made.
type requests interface {
	// request returns request b, if it is planned.
	request(b int) (planner.Request, planner.RequestStatus)
	// wait returns once request b is no longer pending, or ctx ends.
	wait(ctx context.Context, b int) error
	// final returns the whole plan once made; nil and why when it will
	// not be; nil, nil while it is being made.
	final() (*planner.Plan, error)
	// known is how many requests are known now.
	known() int
}

type wholePlan struct{ p *planner.Plan }

func (w wholePlan) request(b int) (planner.Request, planner.RequestStatus) {
	if b < len(w.p.Batches) {
		return w.p.Request(b), planner.RequestReady
	}
	return planner.Request{}, planner.RequestNone
}
func (w wholePlan) wait(context.Context, int) error { return nil }
func (w wholePlan) final() (*planner.Plan, error)   { return w.p, nil }
func (w wholePlan) known() int                      { return len(w.p.Batches) }

type streamed struct{ s *planner.Stream }

func (st streamed) request(b int) (planner.Request, planner.RequestStatus) { return st.s.Request(b) }
func (st streamed) wait(ctx context.Context, b int) error                  { return st.s.Wait(ctx, b) }
func (st streamed) final() (*planner.Plan, error)                          { return st.s.Plan() }
func (st streamed) known() int                                             { return 1 << 30 }

// beforeIntents returns what a streamed run journals before its first
// intent, once: that the recipients list recorded last no longer holds,
// and the shapes the apply accepts.
func (r *run) beforeIntents() []state.Entry {
	if !r.streaming || r.cleared || r.preluded {
		return nil
	}
	r.cleared = true
	now := r.opts.Now().UTC()
	out := []state.Entry{{Type: state.EntrySnapshot, Time: now}}
	if st, ok := r.src.(streamed); ok {
		// The shapes the reviewed apply accepts, before anything is
		// sent, as Apply records them: a list that breaks off leaves
		// what was sent reviewed.
		out = append(out, st.s.AcceptEntries(now)...)
	}
	return out
}

// planned records, once the plan being streamed is whole, what Apply
// records before sending: the targets forgotten, and (on one of the
// recorders, while requests go on) the recipients list.
func (r *run) planned(recorders *recorders, fatal func(error)) error {
	if !r.streaming || r.preluded {
		return nil
	}
	p, _ := r.src.final()
	if p == nil {
		return nil
	}
	r.preluded = true
	if !p.HasChanges() {
		return nil // as apply records nothing for a plan without changes
	}
	// A million ids take 10 ms to encode, which held up every request
	// when the dispatcher journaled them itself. Nothing recorded reads
	// the list, and the run waits for its recorders before it ends.
	return r.prelude(p, func(e state.Entry) {
		recorders.do(func() {
			if err := r.record(e); err != nil {
				fatal(err)
			}
		})
	})
}

// partBase is the number of the first request sent again in parts: after
// every request of the plan, which a streamed run waits for.
func (r *run) partBase(stop context.Context) {
	r.partsOnce.Do(func() {
		if st, ok := r.src.(streamed); ok {
			st.s.WaitPlan(stop)
		}
		n := 0
		for {
			if _, st := r.src.request(n); st != planner.RequestReady {
				break
			}
			n++
		}
		r.nextBatch.Store(int64(n))
	})
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
	if o.RateLimit == nil {
		o.RateLimit = pushapi.NewRateLimit(pushapi.DefaultRateLimitWait, o.Now)
	}
}

type run struct {
	src       requests
	streaming bool
	// cleared and preluded: a streamed run journaled that the last
	// recipients list no longer holds, and what the whole plan records
	// first (only the dispatcher touches them).
	cleared, preluded bool
	rec               Recorder
	sender            Sender
	opts              Options

	mu  sync.Mutex // guards res, journalErr and events
	res *Result
	// pacer spaces the requests of send_rate groups.
	pacer *pacer
	// journalErr is the first failed journal write.
	journalErr error
	// nextBatch numbers the parts of refused requests sent again, from
	// the number partsOnce sets.
	nextBatch atomic.Int64
	partsOnce sync.Once
	// sizes are the request sizes the service took after refusing larger
	// ones as too large.
	sizes sizeLimits
	// notSentWhy, when set, says why the batches not started were not
	// sent (the rate limit outlasted the run); guarded by mu.
	notSentWhy string
}

// record journals entries and folds them into the state. The first
// failure is kept in the result: the run stops, and what it knew but
// could not record is counted in Result.Unrecorded.
func (r *run) record(entries ...state.Entry) error {
	var merged []state.Entry // entries with items merged (journal.go), when any
	for i, e := range entries {
		if m := mergeItems(e); len(m.Items) != len(e.Items) {
			if merged == nil {
				merged = slices.Clone(entries)
			}
			merged[i] = m
		}
	}
	if merged == nil {
		merged = entries
	}
	if err := r.rec.Record(merged...); err != nil {
		jerr := &journalError{err}
		r.mu.Lock()
		if r.journalErr == nil {
			r.journalErr = jerr
			r.res.JournalError = jerr.Error()
		}
		for _, e := range entries {
			// An intent that failed was not sent: nothing to keep.
			if e.Type == state.EntryOutcome {
				r.unrecorded().Entries = append(r.unrecorded().Entries, e)
			}
		}
		r.mu.Unlock()
		return jerr
	}
	return nil
}

// journalError is a failed journal write.
type journalError struct{ err error }

func (e *journalError) Error() string { return "writing the state journal: " + e.err.Error() }
func (e *journalError) Unwrap() error { return e.err }

// unrecorded returns the tally of what could not be recorded; r.mu is held.
func (r *run) unrecorded() *Unrecorded {
	if r.res.Unrecorded == nil {
		r.res.Unrecorded = &Unrecorded{}
	}
	return r.res.Unrecorded
}

func (r *run) emit(e Event) {
	if r.opts.Events != nil {
		r.opts.Events(e)
	}
}

// prelude records the moves, the recipients snapshot, the forgets and the
// already-delivered targets, which send nothing. Moves come first: what follows uses the new
// addresses. With recordList, the recipients snapshot is handed to it
// instead, to be recorded meanwhile.
func (r *run) prelude(p *planner.Plan, recordList func(state.Entry)) error {
	now := r.opts.Now().UTC()
	var entries []state.Entry
	move := state.Entry{Type: state.EntryMove, Time: now}
	var movedTo, movedFrom []string
	for _, c := range p.Changes {
		if c.MovedFrom != "" {
			move.Items = append(move.Items, state.Item{Address: c.MovedFrom, To: c.Address})
			movedTo, movedFrom = append(movedTo, c.Address), append(movedFrom, c.MovedFrom)
		}
	}
	if len(move.Items) > 0 {
		// One entry: all the moves or none (a chain may swap addresses).
		entries = append(entries, move)
	}
	if p.Refreshed && p.Recipients != nil {
		list := state.Entry{Type: state.EntrySnapshot, Time: p.Recipients.FetchedAt, Items: []state.Item{{Targets: p.Recipients.UserIDs}}}
		if recordList != nil {
			recordList(list)
		} else {
			entries = append(entries, list)
		}
	}
	var forgot []string
	for _, c := range p.Changes {
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
	// Targets that already had their content are recorded up to date,
	// after the forgets (which keep the deliveries they point at).
	entries = append(entries, p.RecordEntries(now)...)
	if len(entries) == 0 {
		return nil
	}
	if err := r.record(entries...); err != nil {
		return err
	}
	if len(movedTo) > 0 {
		r.mu.Lock()
		r.emit(Event{Type: EventMove, Batch: -1, Addresses: movedTo, MovedFrom: movedFrom})
		r.mu.Unlock()
	}
	if len(forgot) > 0 {
		r.mu.Lock()
		r.emit(Event{Type: EventForget, Batch: -1, Addresses: forgot})
		r.mu.Unlock()
	}
	return nil
}
