package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// DefaultBatchLimit is the most targets one request carries: the spec's
// limit of 500 userIds, applied to device ids and topics too.
const DefaultBatchLimit = 500

// DefaultMaxUnknownResends is how many requests may send a target without a
// usable answer before the plan stops sending it again.
const DefaultMaxUnknownResends = 3

// Input is what a plan is made from.
type Input struct {
	// Config must be fully resolved: no message with Targets.Unknown.
	Config *config.Config
	// State is the recorded state; nil when there is none yet.
	State *state.State
	// Recipients is the snapshot the config's recipients data sources were
	// resolved with; it also tells skipped users who are reachable again.
	Recipients *state.Snapshot
	// Refreshed says whether Recipients was fetched for this plan.
	Refreshed bool
}

// Options tune a plan; the zero value is a full plan at time.Now.
type Options struct {
	Now time.Time
	// Targets limits the plan to these addresses and what they contain
	// (campaign.x covers every message of campaign x).
	Targets []string
	// Replace forces a re-send of these addresses to every target.
	Replace []string
	// RetryUnknown re-sends untagged notifications to targets whose outcome
	// is unknown, accepting that some may show twice.
	RetryUnknown bool
	// BatchLimit caps the targets of one request; 0 means DefaultBatchLimit.
	BatchLimit int
	// MaxUnknownResends holds back a target, tagged or not, once this many
	// requests sent it and got no usable answer (RetryUnknown sends it
	// anyway); 0 means DefaultMaxUnknownResends.
	MaxUnknownResends int
	// AllowResend sends targets content the ledger says they already
	// received, once (apply --allow-resend); the plan counts them as
	// repeats.
	AllowResend bool
	// Scheduled plans only what a reviewed apply accepted (apply
	// --scheduled): the changes of addresses whose content the state
	// records, which send to new recipients, retry, or send what
	// send_after, send_rate, a frequency_cap or a window held back. Every
	// other change is left out and listed in Plan.AwaitingReview.
	Scheduled bool
	// Resume sends the next rollout stage of these addresses (and what
	// they contain) although their failure gate halted them.
	Resume []string
	// SendAt is when apply sends the plan's requests, when that may be
	// before Now: the real clock, for a plan at a --now ahead that apply
	// sends at once. Frequency caps count from the earlier of the two, so
	// a cap holds at the time the notifications really arrive. Zero: Now.
	SendAt time.Time
}

// Make computes the plan. It fails when an option names no address. The
// caller has checked that the state belongs to the configuration's
// environment (backend.Open does).
func Make(in Input, opts Options) (*Plan, error) {
	return makePlan(in, opts.withDefaults(), nil)
}

func (opts Options) withDefaults() Options {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.BatchLimit <= 0 {
		opts.BatchLimit = DefaultBatchLimit
	}
	if opts.MaxUnknownResends <= 0 {
		opts.MaxUnknownResends = DefaultMaxUnknownResends
	}
	return opts
}

// makePlan is Make; pre, when set, is the classification of the targets
// of one message already made while they arrived (see Stream).
func makePlan(in Input, opts Options, pre *preclassified) (*Plan, error) {
	cfg := in.Config
	p := &Plan{
		FormatVersion: FormatVersion,
		CreatedAt:     opts.Now.UTC(),
		Environment:   cfg.Service.Environment,
		Recipients:    in.Recipients,
		Refreshed:     in.Refreshed,
	}
	if in.State != nil {
		p.StateLineage = in.State.Lineage
		p.StateSerial = in.State.Serial
	}
	// The state as the moved blocks rename it: a moved address is planned
	// as its new address.
	st, movedFrom, err := moveState(cfg, in.State)
	if err != nil {
		return nil, err
	}
	if err := checkAddresses(cfg, st, opts); err != nil {
		return nil, err
	}

	pl := planning{opts: opts, recipients: in.Recipients, replace: toSet(opts.Replace), pre: pre}
	var contents map[string]message.Content
	if st != nil {
		pl.ledger = newLedgerIndex(st)
		contents = pl.ledger.contents
	}
	seen := make(map[string]bool, len(cfg.Messages))
	var planned []*config.Message
	msgs := map[string]*config.Message{}    // planned messages by address
	created := map[string]*config.Message{} // those with no state
	paces := map[string]*Pace{}
	// In address order: of two addresses sending the same content to a
	// target, the first sends it.
	expanded, variants, holdouts, gone, heldKept := expandVariants(cfg.Messages, newFamilyIndex(st, cfg, contents))
	pl.gone = gone
	for addr, vi := range variants {
		if pl.replace[vi.Of] {
			pl.replace[addr] = true // --replace of a notification replaces its variants
		}
	}
	byAddr := slices.Clone(expanded)
	slices.SortStableFunc(byAddr, func(a, b *config.Message) int { return strings.Compare(a.Address, b.Address) })
	var selectedMsgs []*config.Message
	for _, m := range byAddr {
		if selected(m.Address, opts.Targets) {
			selectedMsgs = append(selectedMsgs, m)
		}
	}
	pl.prepareInPlan(selectedMsgs)
	for _, m := range byAddr {
		seen[m.Address] = true
		if !selected(m.Address, opts.Targets) {
			continue
		}
		if m.Targets.Unknown {
			return nil, fmt.Errorf("%s: targets are not resolved (recipients not fetched)", m.Address)
		}
		var prior *state.Message
		if st != nil {
			prior = st.Messages[m.Address]
		}
		var c *Change
		if holdouts[m.Address] {
			c = holdoutChange(m, prior)
			if n := heldKept[m.Address]; n > 0 {
				c.Warnings = append(c.Warnings, keptHeldOut(n))
			}
		} else {
			c = pl.change(m, prior)
			holdForLocalTime(c, m, opts.Now) // before notePlanned: a held target does not get the content now
			if err := pl.personalise(c, m, prior); err != nil {
				return nil, err
			}
		}
		c.Variant = variants[m.Address]
		c.review = shapeReview(in.State, reviewAddress(m.Address, c.Variant), m.Shape, c)
		if from, ok := movedFrom[m.Address]; ok {
			c.MovedFrom = from
			if c.Action == ActionNoOp {
				c.Action = ActionMoved
			}
		}
		if !opts.Scheduled || c.review == "" && c.MovedFrom == "" {
			// What awaits review sends nothing now: it must not make a
			// later address's targets already delivered.
			pl.notePlanned(c)
		}
		c.Paces = paceGroups(cfg, m, paces)
		p.Changes = append(p.Changes, c)
		planned = append(planned, m)
		msgs[m.Address] = m
		if prior == nil {
			created[m.Address] = m
		}
	}
	warnSharedTags(planned, p.Changes[:len(planned)])
	if st != nil {
		for _, addr := range st.Addresses() {
			if seen[addr] || !selected(addr, opts.Targets) {
				continue
			}
			p.Changes = append(p.Changes, forgetChange(st.Messages[addr]))
		}
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Address < p.Changes[j].Address })
	if opts.Scheduled {
		// Before the caps: what awaits review takes none of their room.
		for _, c := range p.Changes {
			c.Accept = accepts(c)
		}
		p.Changes, p.AwaitingReview = holdForReview(p.Changes)
		clear(created) // every created address awaits review: no renames
	} else {
		p.Shapes = shapesToAccept(cfg, in.State, opts.Targets, p.Changes)
	}
	applyCaps(cfg, st, opts.capTime(), p.Changes, msgs)
	for _, c := range p.Changes {
		c.Accept = accepts(c)
	}
	p.Renames = detectRenames(cfg, p.Changes, created, st, seen, opts.Now)
	p.KindChanges = detectKindChanges(pl.ledger, st, p.Changes)
	for _, c := range p.Changes {
		if len(c.Send) == 0 {
			c.Paces = nil // nothing to pace; Plan.Pacing lists only groups that send
		}
	}
	p.Batches = batches(p.Changes, opts.BatchLimit, paces)
	p.Pacing = pacing(p, paces, opts.Now)
	p.Summary = summarize(p)
	for _, c := range p.Changes {
		for _, w := range c.Warnings {
			p.Warnings = append(p.Warnings, c.Address+": "+w)
		}
	}
	return p, nil
}

type planning struct {
	opts       Options
	recipients *state.Snapshot
	reachOnce  sync.Once
	reachable  map[string]struct{} // built on first need
	replace    map[string]bool
	// pre is one message's targets classified as they arrived; nil for none.
	pre *preclassified
	// parallelFrom overrides the package constant, for tests.
	parallelFrom int
	// ledger indexes the state's ledger (nil without a state); inPlan
	// maps, for each content several planned messages send, the targets
	// those planned so far send it to (see prepareInPlan).
	ledger *ledgerIndex
	inPlan map[vkey]map[string]string
	// gone maps a variant's address to its targets that received a
	// variant no longer declared (see splitVariants).
	gone map[string]map[string]already
}

// preclassified is what classifyAll would return for the targets of the
// message at addr, made chunk by chunk while they arrived.
type preclassified struct {
	addr       string
	changeCtx  *changeContext
	classified classified
}

// isRecipient is safe for concurrent use: classify calls it from several
// goroutines.
func (pl *planning) isRecipient(id string) bool {
	if pl.recipients == nil {
		return false
	}
	pl.reachOnce.Do(func() {
		pl.reachable = make(map[string]struct{}, len(pl.recipients.UserIDs))
		for _, u := range pl.recipients.UserIDs {
			pl.reachable[u] = struct{}{}
		}
	})
	_, ok := pl.reachable[id]
	return ok
}

func (pl *planning) change(m *config.Message, prior *state.Message) *Change {
	content := m.Content
	c := &Change{
		Address:     m.Address,
		Kind:        m.Kind,
		TargetKind:  m.Targets.Kind,
		Fingerprint: Fingerprint(m.Kind, content),
		Content:     content,
		SendAfter:   m.SendAfter,
		SendBefore:  m.SendBefore,
	}
	ids := m.Targets.IDs
	c.Targets.Total = len(ids)
	if m.Disabled {
		// Paused: nothing is sent or forgotten, the records stay.
		c.Action = ActionDisabled
		if prior != nil && prior.Fingerprint != c.Fingerprint {
			pc := prior.Content
			c.Prior = &pc
		}
		return c
	}
	if prior != nil && prior.TargetKind != c.TargetKind {
		// Ids of another kind name other things: start afresh.
		c.Forget = sortedIDs(prior)
		c.Targets.Forget = len(c.Forget)
		prior = nil
	}
	if prior != nil && prior.Fingerprint != c.Fingerprint {
		pc := prior.Content
		c.Prior = &pc
	}
	c.noteState(prior)
	if m.SendAfter != nil && pl.opts.Now.Before(*m.SendAfter) {
		// Targets no longer configured are forgotten, even while waiting.
		if prior != nil {
			c.Forget = forgotten(ids, prior, -1)
			c.Targets.Forget = len(c.Forget)
		}
		c.Action = ActionWait
		c.Targets.Waiting = len(ids)
		return c
	}
	var cc *changeContext
	var cl classified
	lc := pl.check(m, visibleOf(m.Kind, content), prior)
	if prior == nil && lc.holdsNone(ids) { // every target is new
		// The list is shared, not copied: it may hold millions of ids,
		// and neither the plan nor its readers write to it.
		cl.counts.New, cl.send = len(ids), ids
	} else if pl.pre != nil && pl.pre.addr == m.Address {
		cc, cl = pl.pre.changeCtx, pl.pre.classified
	} else {
		cc = newChangeContext(m, prior, c.Fingerprint, pl.replace[m.Address])
		cc.lc = lc
		cc.repeatAfter, cc.now = m.RepeatAfter, pl.opts.Now
		cl = pl.classifyAll(ids, cc)
	}
	c.Send, c.Held = cl.send, cl.held
	setAlready(c, cl.already, cl.alreadyRefs)
	forget := c.Targets.Forget // of a target kind change
	c.Targets = cl.counts
	c.Targets.Total, c.Targets.Forget = len(ids), forget
	c.Targets.Send = len(c.Send)
	if prior != nil {
		c.Forget = forgotten(ids, prior, cl.found)
		c.Targets.Forget = len(c.Forget)
	}
	if m.SendBefore != nil && !pl.opts.Now.Before(*m.SendBefore) {
		// The window has closed: what is not delivered never will be.
		if n := len(c.Send); n > 0 {
			t := &c.Targets
			t.Expired, t.Send = n, 0
			t.New, t.Retry, t.Unknown, t.Reachable, t.Replace = 0, 0, 0, 0, 0
			c.Send = nil
			c.Action = ActionExpired
			return c
		}
	}
	if m.Rollout != nil {
		pl.stage(m, ids, prior, c)
	}
	dups := 0
	for _, n := range cl.dup {
		dups += n
	}
	switch {
	case prior == nil || prior.TargetCount() == 0:
		// With no targets recorded, the address was accepted while it
		// waited (Change.Accept): its first sends create it on devices.
		c.Action = ActionCreate
	case cl.changed && m.Kind == config.KindBadge:
		c.Action = ActionUpdate
	case cl.changed && dups > 0:
		c.Action = ActionResend
		c.Warnings = append(c.Warnings, cc.duplicateWarnings(cl.dup)...)
	case cl.changed && content.Tag == "":
		c.Action = ActionResend // no target holds an earlier copy
	case cl.changed:
		c.Action = ActionReplace
	case c.Targets.New > 0:
		c.Action = ActionSendNew
	case c.Targets.Send > 0 && c.Targets.Retry+c.Targets.Unknown+c.Targets.Reachable == 0:
		// Every target sent had the content already: a repeat, not a
		// retry (repeat_after or --allow-resend).
		c.Action = ActionRepeat
	case c.Targets.Send > 0:
		c.Action = ActionRetry
	default:
		c.Action = ActionNoOp
	}
	if len(c.Send) == 0 && c.Targets.Staged > 0 {
		c.Action = ActionStage
	}
	if len(c.Send) == 0 && len(c.AlreadyDelivered) > 0 {
		c.Action = ActionAlreadyDelivered
	}
	if n := c.Targets.Repeat; n > 0 {
		why := "repeat_after has passed since their last delivery"
		if pl.opts.AllowResend {
			why = "--allow-resend sends it again"
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d targets already received this content and are sent it again: %s", n, why))
	}
	if c.Targets.TagOnly > 0 {
		c.Warnings = append(c.Warnings, cc.tagOnlyWarnings(cl.tagOnly, m.Address)...)
	}
	if n := c.Targets.Held - cl.heldUnanswered; n > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s an unknown outcome (a request whose answer was lost) and %s not re-sent: without a tag a second copy would show twice; use --retry-unknown to send anyway", targets(n, "has", "have"), agree(n, "is", "are")))
	}
	if cl.heldUnanswered > 0 {
		ids := "none recorded"
		if len(cl.heldIDs) > 0 {
			ids = strings.Join(cl.heldIDs, ", ")
			if cl.moreIDs {
				ids += ", ..."
			}
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d targets were sent in %d or more requests that got no usable answer (last request ids: %s) and are not sent again: the service may have delivered them each time; ask its support about those requests, then use --retry-unknown to send anyway (or raise --max-unknown-resends)",
			cl.heldUnanswered, pl.opts.MaxUnknownResends, ids))
	}
	return c
}

// What a target holds, compared with the content planned for it.
type holds int

const (
	holdsSameTag holds = iota // content with the same tag (or a badge): sending replaces it
	holdsTagOnly              // the same text under another tag or none
	holdsOther                // other content under another tag or none, or a tag not recorded
)

// earlier is content a target may hold: the planned content itself, the
// content last recorded for the address, or content sent before that.
type earlier struct {
	fp    string
	tag   string
	known bool // the tag is recorded
	holds holds
}

// changeContext is what classifying one message's targets needs.
type changeContext struct {
	prior  *state.Message
	fp     string
	force  bool // --replace: send to every target
	tagged bool // sending the same content again shows nothing twice
	users  bool
	// listed: the ids are the recipients list itself, so every one of
	// them is a recipient (a Stream has no whole list to look them up in).
	listed bool
	tag    string // the planned tag
	// earlier[0] is the planned content; the last entry stands for any
	// fingerprint not listed (its tag is not recorded).
	earlier []earlier
	buf     [3]earlier // backs earlier for the usual few
	// lc is what the ledger and this plan's earlier addresses say the
	// targets already received; nil when nothing. repeatAfter (0: never)
	// lets a target have the content again once that long has passed
	// since it did, at the plan's time now.
	lc          *ledgerCheck
	repeatAfter time.Duration
	now         time.Time
}

func newChangeContext(m *config.Message, prior *state.Message, fp string, force bool) *changeContext {
	cc := &changeContext{prior: prior, fp: fp, force: force, tagged: m.Content.Idempotent(m.Kind),
		users: m.Targets.Kind == config.TargetUsers, tag: m.Content.Tag}
	cc.earlier = cc.buf[:0]
	add := func(efp, tag string, known bool) {
		for _, e := range cc.earlier {
			if e.fp == efp {
				return
			}
		}
		e := earlier{fp: efp, tag: tag, known: known, holds: holdsOther}
		switch {
		case m.Kind == config.KindBadge:
			e.holds = holdsSameTag // a badge sets a count: nothing to show twice
		case efp == fp:
			if cc.tagged {
				e.holds = holdsSameTag
			}
		case known && tag != "" && tag == m.Content.Tag:
			e.holds = holdsSameTag
		case known:
			// Spec 2.1 rule 5 replaces only a notification with the same
			// tag: with another tag, is only the tag different?
			retagged := m.Content
			retagged.Tag = tag
			if Fingerprint(m.Kind, retagged) == efp {
				e.holds = holdsTagOnly
			}
		}
		cc.earlier = append(cc.earlier, e)
	}
	add(fp, m.Content.Tag, true)
	if prior != nil {
		add(prior.Fingerprint, prior.Content.Tag, true)
		if len(prior.EarlierTags) > 0 {
			for _, efp := range sortedTagKeys(prior.EarlierTags) {
				add(efp, prior.EarlierTags[efp], true)
			}
		}
	}
	cc.earlier = append(cc.earlier, earlier{holds: holdsOther}) // not recorded
	return cc
}

// earlierOf returns the index in cc.earlier of the content fp.
func (cc *changeContext) earlierOf(fp string) int {
	for i, e := range cc.earlier[:len(cc.earlier)-1] {
		if e.fp == fp {
			return i
		}
	}
	return len(cc.earlier) - 1
}

// classified is what the plan does with a run of one message's ids.
type classified struct {
	counts     TargetCounts
	send, held []string
	changed    bool // some target is sent content it does not hold
	found      int  // ids recorded in prior
	// dup and tagOnly count, by index in changeContext.earlier, targets
	// that hold that content and are sent content they will show beside
	// it, or are not sent because only the tag differs. Nil until needed.
	dup, tagOnly []int
	// heldUnanswered counts the held targets sent MaxUnknownResends times
	// without a usable answer; heldIDs are their last request ids
	// (distinct, at most maxHeldIDs; moreIDs when there are more).
	heldUnanswered int
	heldIDs        []string
	moreIDs        bool
	// already lists the targets not sent because they received the
	// content before; alreadyRefs, parallel, says where.
	already     []string
	alreadyRefs []already
}

const maxHeldIDs = 5

func (cl *classified) noteHeldID(id string) {
	if id == "" || slices.Contains(cl.heldIDs, id) {
		return
	}
	if len(cl.heldIDs) == maxHeldIDs {
		cl.moreIDs = true
		return
	}
	cl.heldIDs = append(cl.heldIDs, id)
}

// parallelFrom is the number of ids from which classifyAll splits the work
// between goroutines: a million map lookups are cache misses, and a second
// core halves their wall time.
const parallelFrom = 1 << 16

// classifyAll classifies ids, in chunks on all cores when they are many;
// the result is the same as one sequential pass.
func (pl *planning) classifyAll(ids []string, cc *changeContext) classified {
	chunk := parallelFrom
	if pl.parallelFrom > 0 {
		chunk = pl.parallelFrom
	}
	workers := min(runtime.GOMAXPROCS(0), len(ids)/chunk)
	if workers < 2 {
		return pl.classify(ids, cc)
	}
	parts := make([]classified, workers)
	var wg sync.WaitGroup
	for w := range workers {
		from, to := len(ids)*w/workers, len(ids)*(w+1)/workers
		wg.Go(func() { parts[w] = pl.classify(ids[from:to], cc) })
	}
	wg.Wait()
	out := parts[0]
	for _, p := range parts[1:] {
		out.merge(p, len(cc.earlier))
	}
	return out
}

// merge adds to cl the classification p of the ids that follow cl's;
// ne is len(changeContext.earlier).
func (cl *classified) merge(p classified, ne int) {
	n := &cl.counts
	n.New += p.counts.New
	n.Replace += p.counts.Replace
	n.TagOnly += p.counts.TagOnly
	n.UpToDate += p.counts.UpToDate
	n.Retry += p.counts.Retry
	n.Unknown += p.counts.Unknown
	n.Held += p.counts.Held
	n.Reachable += p.counts.Reachable
	n.Skipped += p.counts.Skipped
	n.AlreadyDelivered += p.counts.AlreadyDelivered
	n.Repeat += p.counts.Repeat
	cl.already = append(cl.already, p.already...)
	cl.alreadyRefs = append(cl.alreadyRefs, p.alreadyRefs...)
	cl.send = append(cl.send, p.send...)
	cl.held = append(cl.held, p.held...)
	cl.changed = cl.changed || p.changed
	cl.found += p.found
	for i, k := range p.dup {
		bump(&cl.dup, i, k, ne)
	}
	for i, k := range p.tagOnly {
		bump(&cl.tagOnly, i, k, ne)
	}
	cl.heldUnanswered += p.heldUnanswered
	for _, id := range p.heldIDs {
		cl.noteHeldID(id)
	}
	cl.moreIDs = cl.moreIDs || p.moreIDs
}

// classify decides, target by target, what the plan does with ids.
func (pl *planning) classify(ids []string, cc *changeContext) classified {
	var cl classified
	n := &cl.counts
	ne := len(cc.earlier)
	prior, fp := cc.prior, cc.fp
	var find *state.TargetFinder
	if prior != nil {
		find = prior.Finder()
	}
	lf := cc.lc.finder(prior)
	for _, id := range ids {
		var t *state.Target // nil unless ok: the !ok case comes first below
		var ok bool
		if find != nil {
			t = find.Find(id)
			ok = t != nil
		}
		if ok {
			cl.found++
		}
		// A target to send is counted in *count, and may change what it
		// holds (changed) or show it beside earlier content (dupAt).
		var count *int
		changed, dupAt := false, -1
		switch {
		case !ok, t.Outcome == state.Unfilled:
			// Held before because their text could not be filled in:
			// it is filled in again, and sent if it can be now.
			count = &n.New
		case cc.force:
			count, changed = &n.Replace, true
			if i := cc.earlierOf(t.Fingerprint); cc.earlier[i].holds != holdsSameTag && mayHold(t) {
				dupAt = i
			}
		case t.Outcome == state.Unknown && !pl.opts.RetryUnknown && t.Unanswered >= pl.opts.MaxUnknownResends &&
			// A replace under the same tag cannot show twice: new
			// content is sent whatever became of the old.
			(t.Fingerprint == fp || cc.earlier[cc.earlierOf(t.Fingerprint)].holds != holdsSameTag):
			n.Held++
			cl.held = append(cl.held, id)
			cl.heldUnanswered++
			cl.noteHeldID(t.RequestID)
			continue
		case t.Fingerprint != fp && (mayHold(t) || t.Outcome == state.Failed):
			i := cc.earlierOf(t.Fingerprint)
			switch h := cc.earlier[i].holds; {
			case h == holdsSameTag || t.Outcome == state.Failed: // a failed target shows nothing of it
				count, changed = &n.Replace, true
			case h == holdsTagOnly && cc.prior != nil && cc.prior.Fingerprint == fp:
				// The state records this content: keeping the earlier
				// tag was decided (Change.Accept), not asked again.
				n.UpToDate++
				continue
			case h == holdsTagOnly:
				n.TagOnly++
				bump(&cl.tagOnly, i, 1, ne)
				continue
			default:
				count, changed, dupAt = &n.Replace, true, i
			}
		case (t.Outcome == state.Delivered || t.Outcome == state.AlreadyDelivered) && cc.repeatDue(t):
			count = &n.Repeat
		case t.Outcome == state.Delivered || t.Outcome == state.AlreadyDelivered:
			n.UpToDate++
			continue
		case t.Outcome == state.Failed:
			count = &n.Retry
		case t.Outcome == state.Unknown && (cc.tagged || pl.opts.RetryUnknown):
			count = &n.Unknown
		case t.Outcome == state.Unknown:
			n.Held++
			cl.held = append(cl.held, id)
			continue
		case t.Outcome == state.Skipped && cc.users && (cc.listed || pl.isRecipient(id)):
			count = &n.Reachable
		default: // skipped: retrying does not help (spec part 3)
			n.Skipped++
			continue
		}
		if !cc.force {
			if a, had, repeat := lf.received(id); had {
				if !repeat {
					n.AlreadyDelivered++
					cl.already = append(cl.already, id)
					cl.alreadyRefs = append(cl.alreadyRefs, a)
					continue
				}
				if count != &n.Repeat {
					n.Repeat++
				}
			}
		}
		*count++
		cl.changed = cl.changed || changed
		if dupAt >= 0 {
			bump(&cl.dup, dupAt, 1, ne)
		}
		cl.send = append(cl.send, id)
	}
	return cl
}

// repeatDue reports whether repeat_after lets target t, which has the
// content, have it again now.
func (cc *changeContext) repeatDue(t *state.Target) bool {
	return repeatDueAt(cc.repeatAfter, t.Time, cc.now)
}

// bump adds n to (*counts)[i], making the slice of size on first need.
func bump(counts *[]int, i, n, size int) {
	if *counts == nil {
		*counts = make([]int, size)
	}
	(*counts)[i] += n
}

// mayHold reports whether the device of t may show what was sent to it.
func mayHold(t *state.Target) bool {
	return received(t)
}

// duplicateWarnings explain, per earlier tag, the targets that will show
// the planned notification beside the one they have.
func (cc *changeContext) duplicateWarnings(dup []int) []string {
	byTag := map[string]int{}
	var out []string
	for i, n := range dup {
		if n == 0 {
			continue
		}
		e := cc.earlier[i]
		switch {
		case i == 0: // --replace of the same untagged content
			out = append(out, fmt.Sprintf("--replace sends it again and no tag is set: %s it will show it twice", targets(n, "that has", "that have")))
		case !e.known:
			out = append(out, fmt.Sprintf("%s an earlier version whose tag is not recorded (a state written before pushform recorded it) and may show both", targets(n, "holds", "hold")))
		default:
			byTag[e.tag] += n
		}
	}
	for _, old := range sortedTagKeys(byTag) {
		n := byTag[old]
		switch {
		case old == "" && cc.tag == "":
			out = append(out, fmt.Sprintf("content changed and no tag is set: %s the earlier notification and will show both; set a tag to replace it instead", targets(n, "already has", "already have")))
		case old == "":
			out = append(out, fmt.Sprintf("a tag (%q) was added: the earlier notification was sent without one, so %s it will show both (a device replaces only a notification with the same tag, spec 2.1 rule 5)", cc.tag, targets(n, "that has", "that have")))
		case cc.tag == "":
			out = append(out, fmt.Sprintf("the tag %q was removed: %s the earlier notification will show both", old, targets(n, "that has", "that have")))
		default:
			out = append(out, fmt.Sprintf("the tag changed from %q to %q: a device replaces only a notification with the same tag (spec 2.1 rule 5), so %s the earlier one (tag %q) will show both", old, cc.tag, targets(n, "that has", "that have"), old))
		}
	}
	return out
}

// tagOnlyWarnings explain the targets not sent because only the tag
// changed, and how to send them anyway.
func (cc *changeContext) tagOnlyWarnings(tagOnly []int, addr string) []string {
	byTag := map[string]int{}
	for i, n := range tagOnly {
		if n > 0 {
			byTag[cc.earlier[i].tag] += n
		}
	}
	var out []string
	for _, old := range sortedTagKeys(byTag) {
		var what, keep string
		switch {
		case old == "":
			what, keep = fmt.Sprintf("only a tag (%q) was added", cc.tag), "without a tag"
		case cc.tag == "":
			what, keep = fmt.Sprintf("only the tag %q was removed", old), fmt.Sprintf("under tag %q", old)
		default:
			what, keep = fmt.Sprintf("only the tag changed, from %q to %q", old, cc.tag), fmt.Sprintf("under tag %q", old)
		}
		who, they := fmt.Sprintf("the %d targets that have (or may have)", byTag[old]), "they keep"
		if byTag[old] == 1 {
			who, they = "the 1 target that has (or may have)", "it keeps"
		}
		out = append(out, fmt.Sprintf("%s: nothing is sent to %s this notification; %s it %s, and later changes are planned against what they hold. To send it again with the new tag (those devices then show it twice), apply with --replace %s",
			what, who, they, keep, addr))
	}
	return out
}

// warnSharedTags warns about tagged notifications that share a tag and
// reach the same targets (spec 2.1 rule 7): on those devices the one sent
// later replaces the other, while the state records both as delivered.
// Lists from recipients are only known now, so validate cannot see these.
// A pair is flagged when one of them sends in this plan and neither is
// marked shared_tag. It takes time linear in the targets of the messages
// whose tag another message shares.
func warnSharedTags(msgs []*config.Message, changes []*Change) {
	var tagged []int
	for i, m := range msgs {
		if m.Kind == config.KindNotification && m.Content.Tag != "" {
			tagged = append(tagged, i)
		}
	}
	sort.Slice(tagged, func(a, b int) bool {
		ma, mb := msgs[tagged[a]], msgs[tagged[b]]
		if ma.Targets.Kind != mb.Targets.Kind {
			return ma.Targets.Kind < mb.Targets.Kind
		}
		if ma.Content.Tag != mb.Content.Tag {
			return ma.Content.Tag < mb.Content.Tag
		}
		return ma.Address < mb.Address
	})
	for from := 0; from < len(tagged); {
		to := from + 1
		first := msgs[tagged[from]]
		for to < len(tagged) && msgs[tagged[to]].Targets.Kind == first.Targets.Kind && msgs[tagged[to]].Content.Tag == first.Content.Tag {
			to++
		}
		members := tagged[from:to]
		from = to
		if len(members) < 2 {
			continue
		}
		// Each target remembers the last member reaching it: a chain of
		// replacements is reported pair by pair.
		last := map[string]int{}
		type pair struct{ a, b int }
		overlap := map[pair]int{}
		var pairs []pair
		for j, mi := range members {
			for _, id := range msgs[mi].Targets.IDs {
				if i, ok := last[id]; ok {
					p := pair{i, j}
					if overlap[p] == 0 {
						pairs = append(pairs, p)
					}
					overlap[p]++
				}
				last[id] = j
			}
		}
		for _, p := range pairs {
			a, b := msgs[members[p.a]], msgs[members[p.b]]
			ca, cb := changes[members[p.a]], changes[members[p.b]]
			if a.SharedTag || b.SharedTag || ca.Targets.Send+cb.Targets.Send == 0 {
				continue
			}
			cb.Warnings = append(cb.Warnings, fmt.Sprintf("shares tag %q with %s, and both reach %d of the same %s: on those devices the one sent later replaces the other (spec 2.1 rules 5 and 7) while the state records both as delivered; give each its own tag, or set shared_tag = true on the one meant to replace the other",
				first.Content.Tag, a.Address, overlap[p], targetNoun(first.Targets.Kind)))
		}
	}
}

func targetNoun(k config.TargetKind) string {
	switch k {
	case config.TargetDevices:
		return "devices"
	case config.TargetTopics:
		return "topics"
	}
	return "users"
}

func sortedTagKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func forgetChange(m *state.Message) *Change {
	return &Change{
		Address:     m.Address,
		Action:      ActionForget,
		Kind:        m.Kind,
		TargetKind:  m.TargetKind,
		Fingerprint: m.Fingerprint,
		Content:     m.Content,
		Forget:      sortedIDs(m),
		Targets:     TargetCounts{Forget: m.TargetCount()},
	}
}

func summarize(p *Plan) Summary {
	var s Summary
	for _, c := range p.Changes {
		// Moved counts every address a move renames, whatever else its
		// change does: below, not by its action.
		if r, _ := Info(c.Action); r.summary != nil && c.Action != ActionMoved {
			*r.summary(&s)++
		}
		if c.Local != nil {
			if c.Action == ActionWait {
				s.LocalWait++
			}
			s.WaitingTargets += c.Targets.Waiting
			s.QuietTargets += c.Targets.Quiet
		}
		s.StagedTargets += c.Targets.Staged
		s.UnfilledTargets += c.Targets.Unfilled
		s.HoldoutTargets += c.Targets.Holdout
		if c.Rollout != nil && c.Rollout.State == RolloutHalted {
			s.Halted++
		}
		s.AlreadyDeliveredTargets += c.Targets.AlreadyDelivered
		if c.MovedFrom != "" {
			s.Moved++
		}
		s.ExpiredTargets += c.Targets.Expired
		s.CappedTargets += c.Targets.Capped
		s.Targets += len(c.Send)
	}
	s.Requests = len(p.Batches)
	for _, pc := range p.Pacing {
		s.PacedSeconds = max(s.PacedSeconds, pc.Duration.Seconds())
	}
	return s
}

// Fingerprint identifies a message's content: equal content, equal
// fingerprint, whatever the targets.
func Fingerprint(kind message.Kind, c message.Content) string {
	b, err := json.Marshal(struct {
		Kind string `json:"kind"`
		message.Content
	}{string(kind), c})
	if err != nil { // a struct of strings and ints always marshals
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// selected reports whether addr is covered by one of the --target
// addresses; no targets select everything.
func selected(addr string, targets []string) bool {
	if len(targets) == 0 {
		return true
	}
	for _, t := range targets {
		if covers(t, addr) {
			return true
		}
	}
	return false
}

// covers reports whether target names addr or an address inside it:
// campaign.x covers campaign.x.notification.y, notification.o covers
// notification.o["k"].
func covers(target, addr string) bool {
	return addr == target || strings.HasPrefix(addr, target+".") || strings.HasPrefix(addr, target+"[")
}

// checkAddresses refuses --target and --replace values that name nothing,
// so a typo cannot silently plan nothing (or everything).
func checkAddresses(cfg *config.Config, st *state.State, opts Options) error {
	known := func(t string) bool {
		for _, m := range cfg.Messages {
			if covers(t, m.Address) || variantOf(t, m) {
				return true
			}
		}
		if st != nil {
			for a := range st.Messages {
				if covers(t, a) {
					return true
				}
			}
		}
		return false
	}
	for _, t := range opts.Targets {
		if !known(t) {
			return fmt.Errorf("--target %s matches no address in the configuration or the state", t)
		}
	}
	for _, r := range opts.Resume {
		found := false
		for _, m := range cfg.Messages {
			if covers(r, m.Address) && m.Rollout != nil {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("--resume %s matches no address with a rollout in the configuration", r)
		}
	}
	for _, r := range opts.Replace {
		found := false
		for _, m := range cfg.Messages {
			if m.Address == r {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("--replace %s matches no address in the configuration (give the full address, e.g. campaign.NAME.notification.NAME)", r)
		}
	}
	return nil
}

// forgotten returns the targets of prior that ids no longer lists, sorted.
// found is how many of ids prior records (-1: not counted); when distinct
// ids found every recorded target, nothing is forgotten, and a set of a
// million ids need not be built to learn that.
func forgotten(ids []string, prior *state.Message, found int) []string {
	sorted := distinct(ids)
	if found == prior.TargetCount() && sorted {
		return nil
	}
	recorded := recordedIDs(prior)
	var out []string
	if sorted { // both in order: one pass over each
		i := 0
		for id := range recorded {
			for i < len(ids) && ids[i] < id {
				i++
			}
			if i == len(ids) || ids[i] != id {
				out = append(out, id)
			}
		}
		return out
	}
	inConfig := toSet(ids)
	for id := range recorded {
		if !inConfig[id] {
			out = append(out, id)
		}
	}
	return out
}

// distinct reports, cheaply, that xs holds no id twice: true when xs is
// strictly increasing (recipients lists usually are); false means unknown.
func distinct(xs []string) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] {
			return false
		}
	}
	return true
}

func toSet(xs []string) map[string]bool {
	s := make(map[string]bool, len(xs))
	for _, x := range xs {
		s[x] = true
	}
	return s
}

// sortedIDs returns the ids of m's targets in order, in a slice of its own.
func sortedIDs(m *state.Message) []string {
	out := make([]string, 0, m.TargetCount())
	for id := range recordedIDs(m) {
		out = append(out, id)
	}
	return out
}

// recordedIDs yields the ids of m's targets in order, changing nothing in
// m (a stream's apply may be reading it too).
func recordedIDs(m *state.Message) iter.Seq[string] {
	if !m.Compact() {
		ids, _ := m.SortedTargets() // of a map: a list of its own
		return slices.Values(ids)
	}
	return func(yield func(string) bool) {
		for id := range m.AllTargets() {
			if !yield(id) {
				return
			}
		}
	}
}

// targets says "1 target has" or "3 targets have": n targets and the
// words that follow, agreeing with n.
func targets(n int, one, many string) string {
	if n == 1 {
		return "1 target " + one
	}
	return fmt.Sprintf("%d targets %s", n, many)
}

// agree picks the word that agrees with n.
func agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
