package planner

import (
	"fmt"
	"strings"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// The plan consults the state's ledger (see state/ledger.go): a target is
// not sent content it already received (or may have: an unknown outcome)
// under any address, current or forgotten. Content is compared by what a
// device shows: the kind and the content without its tag
// (see visible). Only the ledger messages holding records of the
// planned content are read, so a ledger of forgotten campaigns costs a
// plan nothing unless it sends one of them again.

// visible is what a device shows of content: all of it but the tag (a
// tag decides only what a later send replaces). Comparable, so it keys
// maps without hashing the content first.
type visible struct {
	kind             message.Kind
	title, body, url string
	badge            int
	hasBadge, silent bool
}

func visibleOf(kind message.Kind, c message.Content) visible {
	v := visible{kind: kind, title: c.Title, body: c.Body, url: c.OpenToURL, silent: c.SilentInForeground}
	if c.BadgeCount != nil {
		v.badge, v.hasBadge = *c.BadgeCount, true
	}
	return v
}

// EarlierDelivery is a delivery the ledger holds that makes targets of a
// change already delivered: the address it was recorded under, its
// request id and time, and its outcome (unknown: may have been
// delivered). InPlan marks an earlier address of this same plan that
// sends the same content to the target (its request id is not known yet).
type EarlierDelivery struct {
	Address   string        `json:"address"`
	RequestID string        `json:"request_id,omitempty"`
	Time      time.Time     `json:"time,omitzero"`
	Outcome   state.Outcome `json:"outcome,omitempty"`
	Forgotten bool          `json:"forgotten,omitempty"`
	InPlan    bool          `json:"in_plan,omitempty"`
}

// ledgerSource is one ledger message holding records of some content.
type ledgerSource struct {
	m *state.Message
	// vfps maps the fingerprints of m's records whose content is known to
	// their visible fingerprints.
	vfps map[string]visible
	// forgotten: m is a ledger entry of a forgotten address or targets.
	forgotten bool
}

// ledgerIndex finds the ledger messages holding a content.
type ledgerIndex struct {
	byVisible map[vkey][]*ledgerSource
	badges    map[message.TargetKind][]*ledgerSource
	// contents maps every fingerprint the ledger knows to its content.
	contents map[string]message.Content
}

type vkey struct {
	tk  message.TargetKind
	vfp visible
}

// newLedgerIndex indexes the messages of st's ledger by the visible
// content of their records. It reads no targets: the fingerprints of a
// message's records are known without them.
func newLedgerIndex(st *state.State) *ledgerIndex {
	ix := &ledgerIndex{byVisible: map[vkey][]*ledgerSource{}, badges: map[message.TargetKind][]*ledgerSource{}}
	if st == nil {
		return ix
	}
	contents := st.Contents()
	ix.contents = contents
	for m := range st.LedgerMessages() {
		src := &ledgerSource{m: m, vfps: map[string]visible{}, forgotten: !m.ForgottenAt.IsZero()}
		for _, fp := range m.Fingerprints() {
			c, ok := contents[fp]
			if !ok {
				continue // content not recorded (a state older than the ledger)
			}
			v := visibleOf(m.Kind, c)
			src.vfps[fp] = v
			k := vkey{m.TargetKind, v}
			if l := ix.byVisible[k]; len(l) == 0 || l[len(l)-1] != src {
				ix.byVisible[k] = append(l, src)
			}
		}
		if m.Kind == message.KindBadge && len(src.vfps) > 0 {
			ix.badges[m.TargetKind] = append(ix.badges[m.TargetKind], src)
		}
	}
	return ix
}

// ledgerCheck is what classifying one message's targets consults: the
// ledger messages that may hold its content, and the targets that
// addresses planned before it in this plan send the same content to.
type ledgerCheck struct {
	vfp     visible
	badge   bool
	sources []*ledgerSource
	// inPlan maps targets to the address planned earlier that sends them
	// this content; nil when none does.
	inPlan map[string]string
	// gone maps targets that received another variant of the
	// notification, no longer declared, to that delivery: they had it.
	gone map[string]already
	// repeatAfter (0: never) lets a target receive the content again once
	// that long passed since the delivery; now is the plan's time.
	repeatAfter time.Duration
	now         time.Time
	allowResend bool
}

// check returns the ledger check of message m (visible fingerprint vfp)
// whose own recorded state is prior; nil when there is nothing to check.
func (pl *planning) check(m *config.Message, vfp visible, prior *state.Message) *ledgerCheck {
	badge := m.Kind == config.KindBadge
	var from []*ledgerSource
	switch {
	case pl.ledger == nil: // no state yet
	case badge:
		from = pl.ledger.badges[m.Targets.Kind]
	default:
		from = pl.ledger.byVisible[vkey{m.Targets.Kind, vfp}]
	}
	var sources []*ledgerSource
	for _, src := range from {
		// The address's own records are classified against it already;
		// a badge's count it last set still decides what it shows.
		if src.m != prior || badge {
			sources = append(sources, src)
		}
	}
	inPlan := pl.inPlan[vkey{m.Targets.Kind, vfp}]
	gone := pl.gone[m.Address]
	if len(sources) == 0 && len(inPlan) == 0 && len(gone) == 0 {
		return nil
	}
	return &ledgerCheck{vfp: vfp, badge: badge, sources: sources, inPlan: inPlan, gone: gone, repeatAfter: m.RepeatAfter,
		now: pl.opts.Now, allowResend: pl.opts.AllowResend}
}

// holdsNone reports, cheaply, that the check holds back none of ids: it
// has no ledger messages, and no address planned before sends to them.
func (lc *ledgerCheck) holdsNone(ids []string) bool {
	if lc == nil {
		return true
	}
	if len(lc.sources) > 0 || len(lc.gone) > 0 {
		return false
	}
	for _, id := range ids {
		if _, ok := lc.inPlan[id]; ok {
			return false
		}
	}
	return true
}

// ledgerFinder looks targets up in a check's sources; one per goroutine.
type ledgerFinder struct {
	lc    *ledgerCheck
	finds []*state.TargetFinder
	prior *state.Message
}

func (lc *ledgerCheck) finder(prior *state.Message) *ledgerFinder {
	if lc == nil {
		return nil
	}
	f := &ledgerFinder{lc: lc, finds: make([]*state.TargetFinder, len(lc.sources)), prior: prior}
	for i, src := range lc.sources {
		f.finds[i] = src.m.Finder()
	}
	return f
}

// already is a target's earlier delivery of the content: the record and
// the ledger message holding it, or the address of this plan sending it.
type already struct {
	rec    *state.Target
	src    *ledgerSource
	inPlan string
}

// received reports whether target id already received the content, and
// the delivery that says so; repeat is set when it did but may have it
// again (repeat_after passed, or --allow-resend).
func (f *ledgerFinder) received(id string) (a already, ok, repeat bool) {
	if f == nil {
		return a, false, false
	}
	if addr, in := f.lc.inPlan[id]; in {
		return already{inPlan: addr}, true, false
	}
	if a, had := f.lc.gone[id]; had {
		return a, true, f.lc.allowResend || repeatDueAt(f.lc.repeatAfter, a.rec.Time, f.lc.now)
	}
	var best *state.Target
	var bestSrc *ledgerSource
	for i, src := range f.lc.sources {
		t := f.finds[i].Find(id)
		if t == nil || !received(t) {
			continue
		}
		v, known := src.vfps[t.Fingerprint]
		if !known || !f.lc.badge && v != f.lc.vfp {
			continue
		}
		if best == nil || t.Time.After(best.Time) {
			best, bestSrc = t, src
		}
	}
	// A badge shows the count it was set to last: only that one counts.
	if best == nil || f.lc.badge && (bestSrc.vfps[best.Fingerprint] != f.lc.vfp || bestSrc.m == f.prior) {
		return a, false, false
	}
	a = already{rec: best, src: bestSrc}
	repeat = f.lc.allowResend || repeatDueAt(f.lc.repeatAfter, best.Time, f.lc.now)
	return a, true, repeat
}

// repeatDueAt reports whether repeat_after (0: never) lets a target that
// received content at t have it again at now.
func repeatDueAt(repeatAfter time.Duration, t, now time.Time) bool {
	return repeatAfter > 0 && !now.Before(t.Add(repeatAfter))
}

// received reports whether a record says its content reached the target,
// or may have.
func received(t *state.Target) bool {
	return t.Outcome == state.Delivered || t.Outcome == state.Unknown || t.Outcome == state.AlreadyDelivered
}

// earlierOf describes a's delivery for the plan.
func earlierOf(a already) EarlierDelivery {
	if a.inPlan != "" {
		return EarlierDelivery{Address: a.inPlan, InPlan: true}
	}
	e := EarlierDelivery{Address: a.src.m.Address, RequestID: a.rec.RequestID, Time: a.rec.Time, Outcome: a.rec.Outcome, Forgotten: a.src.forgotten}
	if a.rec.Outcome == state.AlreadyDelivered && a.rec.Reason != "" {
		// A record of an earlier already-delivered: point at the delivery.
		e.Address, e.Outcome = a.rec.Reason, state.Delivered
	}
	return e
}

// setAlready fills c's already-delivered targets from the classified
// ones: the distinct earlier deliveries, in order of first use.
func setAlready(c *Change, ids []string, refs []already) {
	if len(ids) == 0 {
		return
	}
	c.AlreadyDelivered = ids
	c.AlreadyVia = make([]int, len(refs))
	type key struct {
		rec    *state.Target
		src    *ledgerSource
		inPlan string
	}
	seen := map[key]int{}
	for i, a := range refs {
		k := key(a)
		n, ok := seen[k]
		if !ok {
			e := earlierOf(a)
			// Equal deliveries through different records are one.
			for j, x := range c.Earlier {
				if x == e {
					n, ok = j, true
					break
				}
			}
			if !ok {
				n = len(c.Earlier)
				c.Earlier = append(c.Earlier, e)
			}
			seen[k] = n
		}
		c.AlreadyVia[i] = n
	}
}

// planInPlan prepares, for every content that several planned messages
// of one target kind send, the map of targets earlier ones send it to:
// each target gets it once. Messages are planned in address order.
func (pl *planning) prepareInPlan(msgs []*config.Message) {
	count := map[vkey]int{}
	for _, m := range msgs {
		v := visibleOf(m.Kind, m.Content)
		if !m.Disabled {
			count[vkey{m.Targets.Kind, v}]++
		}
	}
	for k, n := range count {
		if n > 1 {
			if pl.inPlan == nil {
				pl.inPlan = map[vkey]map[string]string{}
			}
			pl.inPlan[k] = map[string]string{}
		}
	}
}

// notePlanned records that change c sends its content to its targets.
func (pl *planning) notePlanned(c *Change) {
	if len(pl.inPlan) == 0 {
		return
	}
	set := pl.inPlan[vkey{c.TargetKind, visibleOf(c.Kind, c.Content)}]
	if set == nil {
		return
	}
	for _, id := range c.Send {
		if _, ok := set[id]; !ok {
			set[id] = c.Address
		}
	}
}

// AlreadyLine describes c's earlier delivery for people: "already
// delivered on 2026-11-24 under notification.y, request req-1".
func (c *Change) AlreadyLine() string {
	if len(c.Earlier) == 0 {
		return ""
	}
	e := c.Earlier[0]
	var s string
	var notes []string
	switch {
	case e.InPlan:
		s = "sent by " + e.Address + " in this plan"
	case e.Outcome == state.Unknown:
		s = fmt.Sprintf("may have been delivered on %s under %s", e.Time.UTC().Format(time.DateOnly), e.Address)
		notes = append(notes, "unknown outcome")
	default:
		s = fmt.Sprintf("already delivered on %s under %s", e.Time.UTC().Format(time.DateOnly), e.Address)
	}
	if e.Forgotten {
		notes = append([]string{"forgotten"}, notes...)
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	if e.RequestID != "" {
		s += ", request " + e.RequestID
	}
	if n := len(c.Earlier) - 1; n > 0 {
		s += fmt.Sprintf(", and %d more", n)
	}
	return s
}

// RecordEntries returns the journal entries apply writes for the plan's
// held-out targets (outcome holdout, the address held out from as the
// reason) and its already-delivered targets: one record entry per change, each target
// pointing at its earlier delivery (state.AlreadyDelivered, with that
// delivery's request id and time, and its address as the reason). Targets
// an address of this same plan sends are left out: whether they get it
// is not known yet, and the next plan sees it in the ledger. A change
// that accepts its content (Change.Accept) records it with no targets.
// Last, the shapes the plan accepts (Plan.Shapes).
func (p *Plan) RecordEntries(at time.Time) []state.Entry {
	var out []state.Entry
	for _, c := range p.Changes {
		out = append(out, c.unfilledEntries(at)...)
		if !c.Accept && len(c.Holdout) == 0 && len(c.AlreadyDelivered) == 0 {
			continue // nothing to record: no copy of the content
		}
		content := c.Content
		it := state.Item{Address: c.Address, Kind: c.Kind, TargetKind: c.TargetKind, Fingerprint: c.Fingerprint, Content: &content}
		if c.Accept {
			// The content with no targets: the address records it.
			out = append(out, state.Entry{Type: state.EntryRecord, Time: at, Items: []state.Item{it}})
		}
		if len(c.Holdout) > 0 {
			of := ""
			if c.Variant != nil {
				of = c.Variant.Of
			}
			ho := it
			ho.Targets, ho.Outcomes = c.Holdout, make([]*state.Target, len(c.Holdout))
			rec := &state.Target{Outcome: state.Holdout, Fingerprint: c.Fingerprint, Time: at, Reason: of}
			for i := range ho.Outcomes {
				ho.Outcomes[i] = rec // equal outcomes share one record
			}
			out = append(out, state.Entry{Type: state.EntryRecord, Time: at, Items: []state.Item{ho}})
		}
		if len(c.AlreadyDelivered) == 0 {
			continue
		}
		for i, id := range c.AlreadyDelivered {
			e := c.Earlier[c.AlreadyVia[i]]
			if e.InPlan {
				continue
			}
			it.Targets = append(it.Targets, id)
			it.Outcomes = append(it.Outcomes, &state.Target{Outcome: state.AlreadyDelivered, Fingerprint: c.Fingerprint,
				RequestID: e.RequestID, Time: e.Time, Reason: e.Address})
		}
		if len(it.Targets) > 0 {
			out = append(out, state.Entry{Type: state.EntryRecord, Time: at, Items: []state.Item{it}})
		}
	}
	return append(out, p.acceptEntries(at)...)
}
