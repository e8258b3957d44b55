package views

import (
	"fmt"
	"strings"

	"pushform/planner"
)

// ReachLine says who the plan's sends reach, on one line; "" when the
// reach was not counted or nothing is sent.
func ReachLine(p *planner.Plan) string {
	r := p.Summary.Reach
	if r == nil || r.Users+r.Devices+r.Topics == 0 {
		return ""
	}
	var parts []string
	if r.Users > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s new)", plural(r.Users, "user", "users"), Count(r.NewUsers)))
	}
	if r.Devices > 0 {
		parts = append(parts, "about "+plural(r.Devices, "device", "devices")+" (as last reported)")
	}
	if r.Topics > 0 {
		parts = append(parts, plural(r.Topics, "topic", "topics"))
	}
	line := "Reach: " + strings.Join(parts, ", ")
	if r.AlreadyHad > 0 {
		line += "; " + plural(r.AlreadyHad, "target", "targets") + " already had this content"
	}
	return line + "."
}

// writeTotals writes the comment's paragraphs of who gets how many pushes
// and the reach line.
func writeTotals(b *strings.Builder, p *planner.Plan) {
	if who := pushTotals(p); who != "" {
		fmt.Fprintf(b, "\n%s\n", who)
	}
	if line := ReachLine(p); line != "" {
		fmt.Fprintf(b, "\n%s\n", md(line))
	}
}
