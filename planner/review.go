package planner

// What a reviewed apply accepts, and what a scheduled apply may release
// without another review (apply --scheduled).

// accepts reports whether apply records c's content with nothing sent:
// the content is new to the address and the plan holds back every target
// (send_after, a frequency_cap, quiet_hours, a rollout stage) or the
// targets keep it under the earlier tag. The state then records the content as reviewed, and the tag-only
// decision is not planned again.
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
// those that await review. A change is released when the state records
// its address with the same content and nothing renames it: its sends
// are new recipients, retries and what was held back, and its forgets
// are targets that left the list. Forgets of addresses, moves, new
// addresses and changed content await review, unless applying them
// would do nothing (an expired new address).
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
// may apply it.
func reviewReason(c *Change) string {
	switch {
	case c.Action == ActionForget:
		return "forget"
	case c.MovedFrom != "":
		return "moved from " + c.MovedFrom
	case c.Action == ActionDisabled || c.recorded:
		return ""
	case len(c.Send) == 0 && len(c.Forget) == 0 && len(c.AlreadyDelivered) == 0 && !c.Accept:
		return "" // applying it records nothing
	case !c.inState:
		return "new address"
	}
	return "content changed"
}
