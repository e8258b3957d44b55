package views

import (
	"fmt"
	"strconv"
	"time"

	"pushform/planner"
)

// Count formats n with thousands separators: 12,480. Every count in human
// output goes through it.
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural formats n with thousands separators and the right noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

// RecipientsNote says, as a sentence, for a plan made from the recipients list recorded
// in the state (plan --refresh=false), how old that list is; "" when the
// list was fetched for the plan or none is used.
func RecipientsNote(p *planner.Plan) string {
	if p.Recipients == nil || p.Refreshed {
		return ""
	}
	at := p.Recipients.FetchedAt
	age := p.CreatedAt.Sub(at)
	when := at.UTC().Format(time.RFC3339)
	switch {
	case at.IsZero():
		when = "at an unknown time"
	case age >= 0:
		when += ", " + roundAge(age) + " before this plan"
	}
	return fmt.Sprintf("Planned from the recipients list recorded in the state (%s, fetched %s), not fetched now (--refresh=false).",
		plural(len(p.Recipients.UserIDs), "user", "users"), when)
}

// roundAge says how long ago something was, to the unit that matters.
func roundAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute", "minutes")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour", "hours")
	}
	return plural(int(d/(24*time.Hour)), "day", "days")
}
