package command

import (
	"cmp"
	"slices"
	"strings"

	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

// variantExport collects, from the addresses' view of s, which variant
// (or the holdout) each target of the notification at addr got.
func variantExport(s *state.State, addr string) views.VariantExport {
	x := views.VariantExport{Address: addr}
	for _, a := range s.Addresses() {
		var sum views.VariantSummary
		switch {
		case a == addr+planner.HoldoutSuffix:
			sum.Holdout = true
		case strings.HasPrefix(a, addr+planner.VariantInfix):
			sum.Name = strings.TrimPrefix(a, addr+planner.VariantInfix)
		default:
			continue
		}
		m := s.Messages[a]
		sum.Address, sum.Outcomes = a, map[state.Outcome]int{}
		if !sum.Holdout {
			sum.Title, sum.Body = m.Content.Title, m.Content.Body
		}
		for id, t := range m.AllTargets() {
			sum.Targets++
			sum.Outcomes[t.Outcome]++
			name := sum.Name
			if other, ok := strings.CutPrefix(t.Reason, addr+planner.VariantInfix); ok && t.Outcome == state.AlreadyDelivered {
				// Recorded here, it got a variant no longer declared:
				// the one that reached it.
				name = other
			}
			x.Assignments = append(x.Assignments, views.VariantAssignment{TargetKind: m.TargetKind, Target: id, Variant: name,
				Holdout: sum.Holdout, Outcome: t.Outcome, RequestID: t.RequestID, Time: t.Time})
		}
		x.Variants = append(x.Variants, sum)
	}
	slices.SortStableFunc(x.Assignments, func(a, b views.VariantAssignment) int {
		return cmp.Or(cmp.Compare(a.TargetKind, b.TargetKind), cmp.Compare(a.Target, b.Target))
	})
	return x
}
