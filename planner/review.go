package planner

import (
	"time"

	"pushform/config"
	"pushform/state"
)

// What a reviewed apply accepts, and what a scheduled apply may release
// without another review (apply --scheduled). The one rule: a scheduled
// apply releases a change only when the state records the address's
// shape, as a reviewed apply accepted it, and the configuration's is the
// same (config.Message.Shape: every evaluated attribute and nested block
// of the message, its campaign and the top-level settings, less what
// config/shape.go lists). Forgets and moves await review whatever the
// shape.

// Shape is one address's shape as a reviewed apply of the plan records
// it: the fingerprint of the configuration's (config.Message.Shape), or ""
// to drop the one the state records for an address the configuration no
// longer has.
type Shape struct {
	Address     string `json:"address"`
	Fingerprint string `json:"fingerprint"`
	// Prior is the shape the state records, "" for none.
	Prior string `json:"prior,omitempty"`
}

// shapesToAccept lists what a reviewed apply of the plan accepts: the
// shape of every selected message of cfg that the state does not record
// as accepted, and the removal of those the state records for addresses
// cfg no longer has. A message without a shape (a Config not loaded from
// files) has nothing to accept, nor has a new address that can send
// nothing, paused or past its send_before (changes tells): its next
// edit is a change of its own.
func shapesToAccept(cfg *config.Config, st *state.State, targets []string, changes []*Change) []Shape {
	var accepted map[string]string
	if st != nil {
		accepted = st.Accepted
	}
	live := map[string]bool{}
	for _, c := range changes {
		if c.inState || c.Action != ActionExpired && c.Action != ActionDisabled && c.Action != ActionForget {
			live[reviewAddress(c.Address, c.Variant)] = true
		}
	}
	var out []Shape
	configured := make(map[string]bool, len(cfg.Messages))
	for _, m := range cfg.Messages {
		configured[m.Address] = true
		prior, ok := accepted[m.Address]
		if m.Shape == "" || !selected(m.Address, targets) || !ok && !live[m.Address] {
			continue
		}
		if prior != m.Shape {
			out = append(out, Shape{Address: m.Address, Fingerprint: m.Shape, Prior: prior})
		}
	}
	for _, addr := range sortedStrings(accepted) {
		if !configured[addr] && selected(addr, targets) {
			out = append(out, Shape{Address: addr, Prior: accepted[addr]})
		}
	}
	return out
}

// reviewAddress is the address whose shape the change at addr is
// reviewed with: its notification's for a variant or the holdout (vi).
func reviewAddress(addr string, vi *VariantInfo) string {
	if vi != nil {
		return vi.Of
	}
	return addr
}

// acceptEntries returns the entry that records the plan's Shapes.
func (p *Plan) acceptEntries(at time.Time) []state.Entry { return acceptEntries(p.Shapes, at) }

// acceptEntries returns the entry that records shapes as accepted.
func acceptEntries(shapes []Shape, at time.Time) []state.Entry {
	if len(shapes) == 0 {
		return nil
	}
	e := state.Entry{Type: state.EntryAccept, Time: at, Items: make([]state.Item, len(shapes))}
	for i, s := range shapes {
		e.Items[i] = state.Item{Address: s.Address, Fingerprint: s.Fingerprint}
	}
	return []state.Entry{e}
}

// Why a change awaits review when its shape is not the accepted one
// (Review.Why).
const (
	ReviewNew     = "new address"
	ReviewContent = "content changed"
	ReviewShape   = "changed since the reviewed apply (the settings, targets or schedule that decide who gets what and when)"
	ReviewNone    = "not reviewed: no reviewed apply accepted its shape"
	// ReviewBefore: the state has no reviewed shapes at all; it was
	// written before pushform recorded them.
	ReviewBefore = "not reviewed: the state was written before pushform recorded reviewed shapes"
)

// shapeReview says why a change of a message whose configured shape is
// shape, at address addr (a variant's is its notification's), awaits
// review in a scheduled plan: "" when st records that very shape as
// accepted. Call it once c.noteState was.
func shapeReview(st *state.State, addr, shape string, c *Change) string {
	if st != nil {
		if prior, ok := st.Accepted[addr]; ok {
			switch {
			case prior == shape && shape != "":
				return ""
			case c.inState && !c.recorded:
				return ReviewContent
			}
			return ReviewShape
		}
	}
	switch {
	case !c.inState:
		return ReviewNew
	case st.Accepted == nil:
		return ReviewBefore
	}
	return ReviewNone
}

// accepts reports whether apply records c's content with nothing sent:
// the content is new to the address and the plan holds back every target
// (send_after, a frequency_cap, quiet_hours, a rollout stage) or the
// targets keep it under the earlier tag. The state then records the
// content, and the tag-only decision is not planned again.
func accepts(c *Change) bool {
	if c.recorded || len(c.Send) > 0 {
		return false
	}
	switch c.Action {
	case ActionWait, ActionCapped, ActionQuiet, ActionStage:
		return true
	case ActionNoOp, ActionMoved:
		return c.Targets.TagOnly > 0
	}
	return false
}

// holdForReview splits changes into those a scheduled apply applies and
// those that await review (see reviewReason).
func holdForReview(changes []*Change) (released []*Change, held []Review) {
	released = changes[:0:0]
	for _, c := range changes {
		if why := reviewReason(c); why != "" {
			held = append(held, Review{Address: c.Address, Action: c.Action, Why: why})
			continue
		}
		released = append(released, c)
	}
	return released, held
}

// reviewReason says why c awaits review, or "" when a scheduled apply
// may apply it: forgets of addresses and moves always await review;
// what applying would record nothing for (a paused address, an expired
// new one) never does; anything else awaits review unless the state
// records the shape it was planned with as accepted (c.review).
func reviewReason(c *Change) string {
	switch {
	case c.Action == ActionForget:
		return "forget"
	case c.MovedFrom != "":
		return "moved from " + c.MovedFrom
	case c.Action == ActionDisabled:
		return ""
	case len(c.Send) == 0 && len(c.Forget) == 0 && len(c.AlreadyDelivered) == 0 && len(c.Holdout) == 0 && !c.Accept:
		return "" // applying it records nothing
	}
	return c.review
}
