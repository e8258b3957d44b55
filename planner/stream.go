package planner

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// Stream makes a plan while the recipients list one message is sent to is
// still arriving, and hands out each request as soon as its targets are
// known, so that apply can send the first requests while the rest of the
// list is fetched. What it hands out is exactly the start of the plan Make
// makes once the list is whole: NewStream takes only configurations whose
// requests depend on the list in nothing but its ids, and Finish makes the
// whole plan with Make's code and checks every request handed out against
// it.
//
// What the plan says about the streamed message beyond its requests (its
// action, counts, warnings) is known only at Finish; so is the plan as a
// whole, which is why only apply --auto-approve streams: a plan shown
// before asking is made whole first.
type Stream struct {
	st       *state.State
	opts     Options
	m        *config.Message // the streamed message, its targets unknown
	index    int             // of its change in the plan
	tmpl     *Change         // its change, as far as known before its targets
	prior    *state.Message
	planning *planning
	// changeCtx and classified hold what classifying the streamed ids
	// needs and found; nil and empty without a prior or a ledger check.
	changeCtx  *changeContext
	classified classified // of the ids so far, but for the ids to send:
	sends      [][]string // the ids to send of each piece of the list, with a prior
	listed     int        // ids added

	// The requests being packed, as pack makes them: cur is the request
	// being filled, with n targets.
	cur []RequestPart
	n   int
	in  addressed // what cur addresses

	shapes []Shape // accepted with the first request (startShapes)

	mu      sync.Mutex
	ready   []Request // requests handed out, in order
	plan    *Plan     // the whole plan, once Finish made it
	err     error     // why the plan will not be finished
	changed chan struct{}
}

// Request is one request of a plan: its parts in order.
type Request struct {
	Parts []RequestPart
}

// RequestPart is the targets of one change in a request. Change holds at
// least what the request needs (address, kind, content, fingerprint,
// delivery window, send rates); Index is its place in Plan.Changes.
type RequestPart struct {
	Change  *Change
	Index   int
	Targets []string
	// Texts gives, for a personalised change, the index in
	// Change.Personal.Texts of each target's text; nil otherwise.
	Texts []int32
}

// Request returns request b of p.
func (p *Plan) Request(b int) Request {
	parts := p.Batches[b].Parts
	r := Request{Parts: make([]RequestPart, len(parts))}
	for i, pt := range parts {
		c := p.Changes[pt.Change]
		r.Parts[i] = RequestPart{Change: c, Index: pt.Change, Targets: p.Targets(pt)}
		if c.Personal != nil {
			r.Parts[i].Texts = c.Personal.TextOf[pt.From:pt.To]
		}
	}
	return r
}

// NewStream returns a Stream for cfg (as loaded, before Resolve) when its
// plan can be made while the recipients list arrives, or nil: then the
// list is fetched whole and the plan made with Make. It streams when
// exactly one message, selected by opts, waits for the list and takes it
// as is (the caller checks config.Loader.ResolvesByReference), and when
// nothing else in the plan depends on the list's whole: no moved block,
// frequency cap, send_rate or max_targets in the configuration, no address
// the plan would forget (no rename to detect), no skipped user of another
// message who might be a recipient again, and a message that sends now
// (no send_after ahead, no send_before passed, no deliver_at_local or
// quiet_hours holding targets by zone).
func NewStream(cfg *config.Config, st *state.State, opts Options) *Stream {
	opts = opts.withDefaults()
	m, prior, ok := streamed(cfg, st, opts)
	if !ok {
		return nil
	}
	s := &Stream{st: st, opts: opts, m: m, prior: prior, changed: make(chan struct{})}
	s.planning = &planning{opts: opts, replace: toSet(opts.Replace)}
	// The ledger, and the messages before it sending the same content,
	// are consulted as Make consults them.
	if st != nil {
		s.planning.ledger = newLedgerIndex(st)
	}
	var contents map[string]message.Content
	if st != nil {
		contents = s.planning.ledger.contents
	}
	fams := newFamilyIndex(st, cfg, contents)
	var sel []*config.Message
	for _, cm := range cfg.Messages {
		if selected(cm.Address, opts.Targets) {
			sel = append(sel, cm)
			if s.planning.ledger.otherKind(cm) {
				return nil // the whole plan is checked for a kind change first
			}
			if len(cm.Variants) > 0 || cm.Holdout > 0 || fams.family(cm) != nil {
				return nil // split into variants by Make only
			}
		}
	}
	s.planning.prepareInPlan(sel)
	s.tmpl = &Change{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: Fingerprint(m.Kind, m.Content),
		Content: m.Content, SendAfter: m.SendAfter, SendBefore: m.SendBefore}

	// The changes of the other messages are made now, with the code of
	// Make; those before the streamed one are packed into requests.
	var before []*Change
	var addrs []string
	for _, cm := range cfg.Messages {
		if selected(cm.Address, opts.Targets) {
			addrs = append(addrs, cm.Address)
		}
	}
	sort.Strings(addrs)
	s.index = sort.SearchStrings(addrs, m.Address)
	sort.Slice(sel, func(i, j int) bool { return sel[i].Address < sel[j].Address })
	for _, cm := range sel {
		if cm == m || cm.Address > m.Address {
			continue
		}
		var pm *state.Message
		if st != nil {
			pm = st.Messages[cm.Address]
		}
		c := s.planning.change(cm, pm)
		s.planning.notePlanned(c)
		before = append(before, c)
	}
	// The list is classified as it arrives when the message has state
	// or the ledger, or a message before it, may hold its content back.
	if lc := s.planning.check(m, visibleOf(m.Kind, m.Content), prior); prior != nil || lc != nil {
		s.changeCtx = newChangeContext(m, prior, s.tmpl.Fingerprint, s.planning.replace[m.Address])
		s.changeCtx.listed = true
		s.changeCtx.lc = lc
		s.changeCtx.repeatAfter, s.changeCtx.now = m.RepeatAfter, opts.Now
	}
	for i, c := range before {
		s.pack(c, i, c.Send)
	}
	if !opts.Scheduled {
		s.shapes = startShapes(cfg, st, opts.Targets, append(before, s.tmpl))
	}
	return s
}

// startShapes are the shapes a streamed apply accepts with its first
// request, before the plan is whole: those of the messages that may send
// by then (changes: the streamed one and those before it), so that a list
// that breaks off leaves what was sent reviewed. The whole plan accepts
// them again, with the rest (Plan.Shapes).
func startShapes(cfg *config.Config, st *state.State, targets []string, changes []*Change) []Shape {
	sending := map[string]bool{}
	for _, c := range changes {
		sending[reviewAddress(c.Address, c.Variant)] = true
	}
	var out []Shape
	for _, sh := range shapesToAccept(cfg, st, targets, changes) {
		if sh.Fingerprint != "" && sending[sh.Address] {
			out = append(out, sh)
		}
	}
	return out
}

// AcceptEntries returns what a streamed apply journals with its first
// request: the shapes it accepts (see startShapes); nil for none.
func (s *Stream) AcceptEntries(at time.Time) []state.Entry {
	return acceptEntries(s.shapes, at)
}

// streamed returns the message a Stream can plan while the recipients
// list arrives, with what the state records for it, or false when the
// plan needs the whole list first (see NewStream).
func streamed(cfg *config.Config, st *state.State, opts Options) (*config.Message, *state.Message, bool) {
	var m *config.Message
	for _, cm := range cfg.Messages {
		if !cm.Targets.Unknown {
			continue
		}
		if m != nil || cm.Targets.Recipients == "" || cm.Targets.Kind != config.TargetUsers {
			return nil, nil, false
		}
		m = cm
	}
	if m == nil || m.Disabled || !selected(m.Address, opts.Targets) || len(cfg.Moved) > 0 || cfg.FrequencyCap != nil ||
		m.MaxTargets > 0 || m.SendRate != nil || m.Rollout != nil || len(m.Variants) > 0 || m.Holdout > 0 || m.Template != nil ||
		m.SendAfter != nil && opts.Now.Before(*m.SendAfter) || m.SendBefore != nil && !opts.Now.Before(*m.SendBefore) ||
		localRuleOf(m, opts.Now) != nil { // local time holds targets by zone: the whole list first
		return nil, nil, false
	}
	for _, c := range cfg.Campaigns {
		if c.SendRate != nil || c.MaxTargets > 0 || c.FrequencyCap != nil {
			return nil, nil, false
		}
	}
	for _, cm := range cfg.Messages {
		if cm.SendRate != nil {
			return nil, nil, false
		}
	}
	if checkAddresses(cfg, st, opts) != nil {
		return nil, nil, false
	}
	declared := make(map[string]bool, len(cfg.Messages))
	for _, cm := range cfg.Messages {
		declared[cm.Address] = true
	}
	var prior *state.Message
	if st != nil {
		for _, e := range st.Ledger {
			// A rename of an address forgotten lately is detected from the
			// whole plan, before anything is sent.
			if e.Kind == config.KindNotification && e.TargetKind == m.Targets.Kind && !e.ForgottenAt.IsZero() &&
				opts.Now.Sub(e.ForgottenAt) < renameWindow && edited(e.Content, m.Content) {
				return nil, nil, false
			}
		}
		for addr, sm := range st.Messages {
			if !declared[addr] {
				return nil, nil, false // forgotten: a rename might be detected
			}
			if addr != m.Address && sm.TargetKind == config.TargetUsers && hasSkipped(sm) {
				return nil, nil, false // its plan reads the whole list
			}
		}
		prior = st.Messages[m.Address]
		if prior != nil && prior.TargetKind != m.Targets.Kind {
			return nil, nil, false // every recorded target is forgotten
		}
	}
	return m, prior, true
}

// hasSkipped reports whether m records a skipped target.
func hasSkipped(m *state.Message) bool {
	var last *state.Target
	for _, t := range m.AllTargets() {
		if t != last && t.Outcome == state.Skipped {
			return true
		}
		last = t
	}
	return false
}

// Address is the address of the message whose targets the stream takes.
func (s *Stream) Address() string { return s.m.Address }

// Source is the name of the recipients data source the stream takes.
func (s *Stream) Source() string { return s.m.Targets.Recipients }

// Add takes the next ids of the recipients list, in the order served,
// none seen before, and hands out the requests they complete. The stream
// keeps ids; the caller does not write to them.
func (s *Stream) Add(ids []string) {
	if len(ids) == 0 {
		return
	}
	s.listed += len(ids)
	send := ids
	if s.changeCtx != nil {
		cl := s.planning.classify(ids, s.changeCtx)
		send = cl.send
		// The pieces are joined once the list is whole, into a list of
		// exact size: appended piece by piece it would be copied as it
		// grows, beside the pieces the requests hold.
		s.sends = append(s.sends, cl.send)
		cl.send = nil
		s.classified.merge(cl, len(s.changeCtx.earlier))
	}
	s.pack(s.tmpl, s.index, send)
}

// pack adds targets of change c (index i) to the requests, as pack does,
// and hands out each request filled.
func (s *Stream) pack(c *Change, i int, targets []string) {
	limit := s.opts.BatchLimit
	for len(targets) > 0 {
		if s.n == limit {
			s.handOut()
		}
		k := s.in.fit(i, c.TargetKind, targets[:min(len(targets), limit-s.n)])
		if k == 0 {
			s.handOut() // the next target is in the request already
			continue
		}
		s.in.add(i, c.TargetKind, targets[:k])
		if last := len(s.cur) - 1; last >= 0 && s.cur[last].Index == i {
			// The part goes on from an earlier piece of the list: one
			// part, its targets gathered into a list of their own.
			p := &s.cur[last]
			p.Targets = append(slices.Clip(p.Targets), targets[:k]...)
		} else {
			// A piece of the list itself, with the capacity after it: a
			// state table extends its copy-free segment over the next.
			s.cur = append(s.cur, RequestPart{Change: c, Index: i, Targets: targets[:k]})
		}
		s.n += k
		targets = targets[k:]
	}
	if s.n == limit {
		s.handOut()
	}
}

func (s *Stream) handOut() {
	s.mu.Lock()
	s.ready = append(s.ready, Request{Parts: s.cur})
	s.wakeLocked()
	s.mu.Unlock()
	s.cur, s.n = nil, 0
	s.in.reset()
}

func (s *Stream) wakeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Finish makes the whole plan once the list is complete: cfg is the
// configuration resolved with it (config.Loader.Resolve), recipients the
// list as planned with. It checks that every request handed out is the
// request Make puts at its place; an error stops the stream (and whoever
// sends its requests) after the requests handed out.
func (s *Stream) Finish(cfg *config.Config, recipients *state.Snapshot) (*Plan, error) {
	p, err := s.finish(cfg, recipients)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
	} else {
		// The plan's requests are those handed out, which may go: they
		// hold the pieces of the list as it arrived, the plan the list.
		s.plan, s.ready = p, nil
	}
	s.wakeLocked()
	return p, err
}

func (s *Stream) finish(cfg *config.Config, recipients *state.Snapshot) (*Plan, error) {
	var m *config.Message
	for _, cm := range cfg.Messages {
		if cm.Address == s.m.Address {
			m = cm
		}
	}
	if m == nil || len(m.Targets.IDs) != s.listed || m.Targets.Unknown {
		return nil, fmt.Errorf("planning while the recipients arrived: %s has %d targets once resolved, %d arrived", s.m.Address, lenIDs(m), s.listed)
	}
	var pre *preclassified
	if s.changeCtx != nil {
		s.classified.send, s.sends = slices.Concat(s.sends...), nil
		pre = &preclassified{addr: m.Address, changeCtx: s.changeCtx, classified: s.classified}
	}
	p, err := makePlan(Input{Config: cfg, State: s.st, Recipients: recipients, Refreshed: true}, s.opts, pre)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	handed := s.ready
	s.mu.Unlock()
	if len(handed) > len(p.Batches) {
		return nil, fmt.Errorf("planning while the recipients arrived: %d requests were handed out, the plan has %d", len(handed), len(p.Batches))
	}
	for b, r := range handed {
		if !sameRequest(r, p.Request(b)) {
			return nil, fmt.Errorf("planning while the recipients arrived: request %d differs from the plan's", b+1)
		}
	}
	return p, nil
}

func lenIDs(m *config.Message) int {
	if m == nil {
		return 0
	}
	return len(m.Targets.IDs)
}

// sameRequest reports whether a and b send the same targets of the same
// changes, part by part.
func sameRequest(a, b Request) bool {
	if len(a.Parts) != len(b.Parts) {
		return false
	}
	for i, pa := range a.Parts {
		pb := b.Parts[i]
		if pa.Index != pb.Index || pa.Change.Address != pb.Change.Address || pa.Change.Fingerprint != pb.Change.Fingerprint ||
			!slices.Equal(pa.Targets, pb.Targets) {
			return false
		}
	}
	return true
}

// Fail stops the stream: the list will not be complete. Requests handed
// out stay handed out; no other is.
func (s *Stream) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil && s.err == nil {
		s.err = err
		s.wakeLocked()
	}
}

// RequestStatus says whether a request of a stream can be had.
type RequestStatus int

// Request statuses.
const (
	RequestReady   RequestStatus = iota // the request is planned
	RequestPending                      // not yet: the list is still arriving
	RequestNone                         // the plan has no such request
	RequestFailed                       // the plan will not be finished
)

// Request returns request b when it is planned. A request handed out
// before Finish is the plan's (Finish checks it), and after Finish the
// plan's own is returned.
func (s *Stream) Request(b int) (Request, RequestStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.plan != nil && b < len(s.plan.Batches):
		return s.plan.Request(b), RequestReady
	case s.plan != nil:
		return Request{}, RequestNone
	case b < len(s.ready):
		return s.ready[b], RequestReady
	case s.err != nil:
		return Request{}, RequestFailed
	}
	return Request{}, RequestPending
}

// Wait returns once request b is no longer pending, or ctx ends.
func (s *Stream) Wait(ctx context.Context, b int) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if _, st := s.Request(b); st != RequestPending {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Plan returns the whole plan once Finish made it: nil and the reason
// when the stream failed, nil and nil while it is still being made.
func (s *Stream) Plan() (*Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan, s.err
}

// WaitPlan waits for Finish or Fail.
func (s *Stream) WaitPlan(ctx context.Context) (*Plan, error) {
	for {
		s.mu.Lock()
		p, err, ch := s.plan, s.err, s.changed
		s.mu.Unlock()
		if p != nil || err != nil {
			return p, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
