package planner

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"pushform/state"
)

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

func sortedTagKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
