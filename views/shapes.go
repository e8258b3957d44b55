package views

import (
	"fmt"
	"strings"

	"pushform/planner"
)

// ShapesNote says what applying the plan accepts as reviewed (its
// Shapes), so that a reviewer knows the scheduled runs will then release
// those addresses' sends; "" when it accepts nothing.
func ShapesNote(p *planner.Plan) string {
	var changed []string
	added, dropped := 0, 0
	for _, s := range p.Shapes {
		switch {
		case s.Fingerprint == "":
			dropped++
		case s.Prior == "":
			added++
		default:
			changed = append(changed, s.Address)
		}
	}
	var parts []string
	if n := len(changed); n > 0 {
		const listed = 5
		list := strings.Join(changed[:min(n, listed)], ", ")
		if n > listed {
			list += fmt.Sprintf(" and %s more", Count(n-listed))
		}
		parts = append(parts, fmt.Sprintf("the changed %s of %s", plural1(n, "shape", "shapes"), list))
	}
	if added > 0 {
		parts = append(parts, fmt.Sprintf("the shape of %s it has none recorded for", plural(added, "address", "addresses")))
	}
	if len(parts) == 0 && dropped == 0 {
		return ""
	}
	s := "Applying this plan records as reviewed " + strings.Join(parts, " and ")
	if len(parts) == 0 {
		s = "Applying this plan drops"
	} else if dropped > 0 {
		s += ", and drops"
	}
	if dropped > 0 {
		s += " the reviewed shape of " + plural(dropped, "address", "addresses") + " no longer configured"
	}
	return s + " (a shape is everything that decides who gets what and when, as evaluated now): apply --scheduled releases only the sends of a reviewed shape."
}

// plural1 is the word alone for n, singular or plural.
func plural1(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// onlyShapes reports whether accepting shapes is all applying p does.
func onlyShapes(p *planner.Plan) bool {
	if len(p.Shapes) == 0 {
		return false
	}
	q := *p
	q.Shapes = nil
	return !q.HasChanges()
}
