package views

import (
	"fmt"
	"strings"
	"time"

	"pushform/planner"
)

// extraLines are the lines human and markdown plans show under a change
// after its notes: which variant it is, and its rollout.
func extraLines(c *planner.Change) []string {
	var out []string
	if c.TestSendCommand != "" {
		out = append(out, "needs a test send (require_test_send): "+c.TestSendCommand)
	}
	if v := c.Variant; v != nil && v.Name != "" {
		out = append(out, fmt.Sprintf("variant %q of %s: weight %d, %s of the audience", v.Name, v.Of, v.Weight, sharePercent(v.Share)))
	}
	out = append(out, rolloutLines(c)...)
	return append(out, personalLines(c)...)
}

// sharePercent writes a share rounded for people: "47.5%".
func sharePercent(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f*100), "0"), ".") + "%"
}

// rolloutLines describe a change's staged rollout: where it stands, and a
// line per stage with its size, what was sent and what this plan sends.
// Human and markdown plans show them under the change.
func rolloutLines(c *planner.Change) []string {
	rs := c.Rollout
	if rs == nil {
		return nil
	}
	noun := targetNoun(c.TargetKind)
	out := []string{rs.StageLine()}
	if rs.State == planner.RolloutHalted && len(rs.RequestIDs) > 0 {
		out = append(out, "failures came back from request "+strings.Join(rs.RequestIDs, ", "))
	}
	for i, st := range rs.Stages {
		line := fmt.Sprintf("stage %d  %-5s %s, %s sent", i+1, st.Percent, countOf(st.Size, noun), Count(st.Sent))
		switch {
		case st.Send > 0:
			line += fmt.Sprintf(", sends %s now", Count(st.Send))
		case i > rs.Sends && st.Sent < st.Size && rs.State == planner.RolloutHalted:
			line += ", halted"
		case i == rs.Current+1 && rs.NextDue != nil:
			line += ", due " + rs.NextDue.UTC().Format(time.RFC3339)
		case i > rs.Sends && st.Sent < st.Size:
			line += ", later"
		}
		out = append(out, line)
	}
	return out
}
