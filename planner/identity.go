package planner

import (
	"strings"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// A notification's identity (the "Once" promise): a person is sent one
// variant of a notification, or held out of it, once and for good. The
// ledger already says who got what: every variant is recorded under its
// own address (ADDR.variant.NAME) and the holdout under ADDR.holdout,
// current or forgotten. So a target's variant is read from those records
// whenever they hold it, and the weights, holdout and salt assign only
// targets they do not: a change of any of them moves nobody.
//
// The records read are those of the notification's family: its own
// address (the state as moved blocks rename it; a moved block also
// renames its variants and holdout, see moveState), its variants and
// holdout, and the addresses it was known by before:
//   - an address a moved block of the configuration moves to it, whose
//     forgotten records the ledger keeps under the old name;
//   - for a notification with variants or a holdout, an address the
//     configuration no longer declares that sent (itself or through a
//     variant) content one of its variants sends: a rename without a
//     moved block is the same notification, as the ledger takes it to
//     be for content. A rename that edits every variant is not
//     recognised here; the rename guard (detectRenames) refuses it
//     unless a moved block records it.
// A notification without variants or a holdout has assignments only when
// its family recorded some (variants or a holdout since removed).

// addrPart says what of a notification an address of the state names.
type addrPart int

const (
	partBase    addrPart = iota // the notification itself
	partVariant                 // one of its variants
	partHoldout                 // its holdout
)

// splitVariantAddress splits a recorded address into the address of the
// notification and what of it addr names (a variant's name).
func splitVariantAddress(addr string) (base string, part addrPart, name string) {
	if b, ok := strings.CutSuffix(addr, HoldoutSuffix); ok && b != "" {
		return b, partHoldout, ""
	}
	if i := strings.LastIndex(addr, VariantInfix); i > 0 {
		// A variant's name is a label: an instance key holding the infix
		// ends in `"]`.
		if n := addr[i+len(VariantInfix):]; n != "" && !strings.ContainsAny(n, `."[]`) {
			return addr[:i], partVariant, n
		}
	}
	return addr, partBase, ""
}

// NotificationOf returns the address of the notification whose variant
// or holdout addr names; ok is false when addr names neither.
func NotificationOf(addr string) (base string, ok bool) {
	base, part, _ := splitVariantAddress(addr)
	return base, part != partBase
}

// familyIndex finds the ledger messages of a notification's family: by
// notification address, the messages of its variants, holdout and own
// address.
type familyIndex struct {
	byBase map[string][]*state.Message
	// split: the addresses with variant or holdout records.
	split map[string]bool
	// gone maps what a device shows to the addresses the configuration
	// no longer declares whose variants (or themselves) sent it, by
	// target kind.
	gone map[vkey][]string
	// movedInto maps an address to the recorded ones moved blocks move
	// to it.
	movedInto map[string][]string
	contents  map[string]message.Content
}

// newFamilyIndex indexes the notifications of st's ledger (st as moved
// blocks rename it) for the configuration cfg; contents maps the ledger's
// fingerprints to their content.
func newFamilyIndex(st *state.State, cfg *config.Config, contents map[string]message.Content) *familyIndex {
	ix := &familyIndex{byBase: map[string][]*state.Message{}, split: map[string]bool{}, gone: map[vkey][]string{}, contents: contents}
	if st == nil {
		return ix
	}
	declared := make(map[string]bool, len(cfg.Messages))
	anySplit := false
	for _, m := range cfg.Messages {
		declared[m.Address] = true
		anySplit = anySplit || len(m.Variants) > 0 || m.Holdout > 0
	}
	for m := range st.LedgerMessages() {
		if m.Kind != message.KindNotification {
			continue
		}
		base, part, _ := splitVariantAddress(m.Address)
		ix.byBase[base] = append(ix.byBase[base], m)
		if part != partBase {
			ix.split[base] = true
		}
		if !anySplit || declared[base] || part == partHoldout || movedAway(cfg, base) {
			continue
		}
		for _, fp := range m.Fingerprints() {
			if c, ok := contents[fp]; ok {
				k := vkey{m.TargetKind, visibleOf(m.Kind, c)}
				if l := ix.gone[k]; len(l) == 0 || l[len(l)-1] != base {
					ix.gone[k] = append(l, base)
				}
			}
		}
	}
	if len(cfg.Moved) > 0 {
		ix.movedInto = map[string][]string{}
		for base := range ix.byBase {
			if to, ok := cfg.MovedTo(base); ok {
				ix.movedInto[to] = append(ix.movedInto[to], base)
			}
		}
	}
	return ix
}

// family returns the ledger messages of m's family of m's target kind:
// nil when m has no variants or holdout and none of them is a variant's
// or a holdout's (a notification without any has no assignments).
func (ix *familyIndex) family(m *config.Message) []*state.Message {
	if ix == nil || len(ix.byBase) == 0 || m.Kind != config.KindNotification {
		return nil
	}
	// Its old names in moved blocks: the ledger keeps its forgotten
	// records under them.
	bases := append([]string{m.Address}, ix.movedInto[m.Address]...)
	split := len(m.Variants) > 0 || m.Holdout > 0
	if split {
		for v := range groupContents(m) {
			bases = append(bases, ix.gone[vkey{m.Targets.Kind, v}]...)
		}
	}
	var out []*state.Message
	seen := map[string]bool{}
	for _, base := range bases {
		if seen[base] {
			continue
		}
		seen[base] = true
		split = split || ix.split[base]
		for _, sm := range ix.byBase[base] {
			if sm.TargetKind == m.Targets.Kind {
				out = append(out, sm)
			}
		}
	}
	if !split {
		return nil
	}
	return out
}

// groupContents maps what m's variants show to their group (1+i), or,
// without variants, m's content to 1.
func groupContents(m *config.Message) map[visible]int {
	out := map[visible]int{}
	if len(m.Variants) == 0 {
		out[visibleOf(m.Kind, m.Content)] = 1
		return out
	}
	for i, v := range m.Variants {
		vis := visibleOf(m.Kind, v.Content)
		if _, dup := out[vis]; !dup {
			out[vis] = 1 + i
		}
	}
	return out
}

// Groups of a split: groupHoldout, 1+i for variant i (1 for everyone
// else without variants), or a variant no longer declared.
const (
	groupHoldout = 0
	groupGone    = -1
)

// assigner reads targets' assignments from the records of a family.
type assigner struct {
	srcs []assignSource
}

type assignSource struct {
	src  *ledgerSource
	find *state.TargetFinder
	// groups maps the fingerprints of m's records to their group.
	groups map[string]int
	other  int // the group of a fingerprint not in groups
}

// assigner returns the assigner of m over its family fam; nil when fam
// is empty.
func (ix *familyIndex) assigner(m *config.Message, fam []*state.Message) *assigner {
	if len(fam) == 0 {
		return nil
	}
	byContent := groupContents(m)
	byName := map[string]int{}
	for i, v := range m.Variants {
		byName[v.Name] = 1 + i
	}
	a := &assigner{}
	for _, sm := range fam {
		_, part, name := splitVariantAddress(sm.Address)
		src := assignSource{src: &ledgerSource{m: sm, forgotten: !sm.ForgottenAt.IsZero()}, find: sm.Finder(), groups: map[string]int{}, other: groupGone}
		switch {
		case part == partHoldout:
			src.other = groupHoldout
		case part == partVariant && byName[name] > 0:
			src.other = byName[name] // an edited variant is the same variant
		case part == partBase && len(m.Variants) == 0:
			src.other = 1
		}
		if part != partHoldout {
			for _, fp := range sm.Fingerprints() {
				if c, ok := ix.contents[fp]; ok {
					if g, same := byContent[visibleOf(sm.Kind, c)]; same {
						src.groups[fp] = g
					}
				}
			}
		}
		a.srcs = append(a.srcs, src)
	}
	return a
}

// assignment is a target's record in its family that decides its group.
type assignment struct {
	group int
	rec   *state.Target
	src   *ledgerSource
}

// assigned returns target id's assignment; ok is false when the family
// holds none. The latest record wins among those of one rank: a
// delivery (or one that may have been) of a declared variant, then of a
// variant no longer declared, then the holdout, then a failed or skipped
// send to a declared variant. A test send assigns nothing.
func (a *assigner) assigned(id string) (best assignment, ok bool) {
	if a == nil {
		return best, false
	}
	bestRank := -1
	for i := range a.srcs {
		s := &a.srcs[i]
		t := s.find.Find(id)
		if t == nil || t.Outcome == state.TestSend {
			continue
		}
		g, known := s.groups[t.Fingerprint]
		if !known {
			g = s.other
		}
		var rank int
		switch {
		case received(t) && g != groupGone:
			rank = 3
		case received(t):
			rank = 2
		case t.Outcome == state.Holdout:
			rank, g = 1, groupHoldout
		case g != groupGone && g != groupHoldout:
			rank = 0
		default:
			continue
		}
		if rank > bestRank || rank == bestRank && t.Time.After(best.rec.Time) {
			best, bestRank = assignment{group: g, rec: t, src: s.src}, rank
		}
	}
	return best, bestRank >= 0
}

// keptHeldOut is the warning of a holdout the configuration dropped (or
// set to nothing) whose targets stay held out.
func keptHeldOut(n int) string {
	return targets(n, "was", "were") + " held out before and " + agree(n, "stays", "stay") +
		" held out: a person keeps the assignment they got. To reach them, send them a notification of its own"
}
