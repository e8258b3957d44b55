package views

import (
	"fmt"
	"strings"
	"time"

	"pushform/planner"
)

// Local-time delivery in the views: a change that deliver_at_local or
// quiet_hours touch gets one "local time" line with its waves (how many
// targets fall due at which UTC time, which is next, what this plan
// sends) and its quiet window, after its notes. Human and markdown show
// the same line; JSON carries planner.Local as it is.

// wavesShown is how many waves a change lists before it counts the rest.
const wavesShown = 6

// waveTime formats a wave's time: the date once it differs from the
// previous one shown, then the UTC time of day.
func waveTime(t, prev time.Time) string {
	t = t.UTC()
	if !prev.IsZero() && t.YearDay() == prev.UTC().YearDay() && t.Year() == prev.UTC().Year() {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// localLine describes a change's waves and quiet hours; "" for a change
// without them.
func localLine(c *planner.Change) string {
	l := c.Local
	if l == nil {
		return ""
	}
	var parts []string
	if l.DeliverAtLocal != "" {
		parts = append(parts, "deliver_at_local "+l.DeliverAtLocal)
	}
	if l.QuietHours != "" {
		parts = append(parts, "quiet_hours "+l.QuietHours)
	}
	if len(l.Waves) > 0 {
		var ws []string
		var prev time.Time
		for i, w := range l.Waves {
			if i == wavesShown {
				rest := 0
				for _, w := range l.Waves[i:] {
					rest += w.Send + w.Waiting + w.Quiet + w.Expired
				}
				ws = append(ws, fmt.Sprintf("and %s more (%s)", plural(len(l.Waves)-i, "wave", "waves"), Count(rest)))
				break
			}
			ws = append(ws, waveTime(w.At, prev)+" "+waveCounts(w, l.NextWave))
			prev = w.At
		}
		parts = append(parts, "waves (UTC): "+strings.Join(ws, ", "))
	}
	if l.NextWave != nil && (l.QuietOpens == nil || !l.NextWave.Equal(*l.QuietOpens)) {
		parts = append(parts, "next at "+l.NextWave.UTC().Format(time.RFC3339))
	}
	if l.QuietOpens != nil {
		parts = append(parts, "quiet until "+l.QuietOpens.UTC().Format(time.RFC3339))
	}
	if c.Targets.UpToDate > 0 {
		parts = append(parts, Count(c.Targets.UpToDate)+" delivered before")
	}
	if l.DefaultZone > 0 {
		parts = append(parts, fmt.Sprintf("%s in the default zone", Count(l.DefaultZone)))
	}
	return "local time: " + strings.Join(parts, "; ")
}

// waveCounts says what happens to one wave: "600 sent now",
// "600 waiting (next)", "3 quiet", "2 expired".
func waveCounts(w planner.Wave, next *time.Time) string {
	var out []string
	if w.Send > 0 {
		out = append(out, Count(w.Send)+" now")
	}
	if w.Waiting > 0 {
		s := Count(w.Waiting) + " waiting"
		if next != nil && next.Equal(w.At) {
			s += " (next)"
		}
		out = append(out, s)
	}
	if w.Quiet > 0 {
		out = append(out, Count(w.Quiet)+" quiet")
	}
	if w.Expired > 0 {
		out = append(out, Count(w.Expired)+" expired")
	}
	return strings.Join(out, " + ")
}

// localNotes are the notes of a change's targets held by local time;
// said is the count its headline gives (see counted).
func localNotes(c *planner.Change, said *int) []string {
	if c.Local == nil {
		return nil
	}
	t := &c.Targets
	var notes []string
	if t.Waiting > 0 && said != &t.Waiting {
		notes = append(notes, Count(t.Waiting)+" waiting for their local time")
	}
	if t.Quiet > 0 && said != &t.Quiet {
		notes = append(notes, Count(t.Quiet)+" held by quiet_hours")
	}
	if t.Expired > 0 && said != &t.Expired {
		notes = append(notes, Count(t.Expired)+" expired (their local time falls after send_before)")
	}
	return notes
}

// localHeadline is the headline of a wait or quiet change that local
// time holds; "" for any other.
func localHeadline(c *planner.Change) string {
	l := c.Local
	if l == nil {
		return ""
	}
	noun := targetNoun(c.TargetKind)
	switch c.Action {
	case planner.ActionWait:
		when := "later"
		if l.NextWave != nil {
			when = l.NextWave.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf(" waits for local time (next wave %s): %s", when, countOf(c.Targets.Waiting+c.Targets.Quiet, noun))
	case planner.ActionQuiet:
		when := "its window ends"
		if l.QuietOpens != nil {
			when = l.QuietOpens.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf(" is held by quiet_hours %s: %s, sent from %s", l.QuietHours, countOf(c.Targets.Quiet, noun), when)
	}
	return ""
}

// localHeld reports whether local time holds every target of c.
func localHeld(c *planner.Change) bool {
	return c.Local != nil && (c.Action == planner.ActionWait || c.Action == planner.ActionQuiet)
}

// localHeldLine says what the plan holds back for local time, for the summary.
func localHeldLine(s planner.Summary) string {
	var out string
	if s.WaitingTargets > 0 {
		out += " " + plural(s.WaitingTargets, "target is waiting for its local time", "targets are waiting for their local time") + " (deliver_at_local)."
	}
	if s.QuietTargets > 0 {
		out += fmt.Sprintf(" %s held by quiet_hours until their window ends.", plural(s.QuietTargets, "target is", "targets are"))
	}
	return out
}
