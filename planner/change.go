package planner

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"pushform/config"
	"pushform/state"
)

// change plans one message of the configuration against what the state
// records for it (prior, nil for none): the targets to send, hold and
// forget, and its action.
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
	chooseAction(c, m, prior, cc, &cl)
	pl.warnTargets(c, m, cc, &cl)
	return c
}

// chooseAction sets c's action from what classifying its targets found
// (cl), with the warnings of the targets that will show it twice.
func chooseAction(c *Change, m *config.Message, prior *state.Message, cc *changeContext, cl *classified) {
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
	case cl.changed && m.Content.Tag == "":
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
}

// warnTargets adds to c the warnings about its targets: repeats, tag-only
// changes not sent, and unknown outcomes held back.
func (pl *planning) warnTargets(c *Change, m *config.Message, cc *changeContext, cl *classified) {
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
