package command

import (
	"strings"
	"testing"
	"time"

	"pushform/operation"
)

func TestCheckPlanAge(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		madeAt time.Time
		maxAge time.Duration
		want   string
	}{
		{"fresh", now.Add(-time.Hour), 24 * time.Hour, ""},
		{"at the limit", now.Add(-24 * time.Hour), 24 * time.Hour, ""},
		{"too old", now.Add(-26*time.Hour - 3*time.Minute), 24 * time.Hour, "p.plan was made 26h3m0s ago (at 2026-12-01T07:57:00Z), longer ago than max_plan_age (24h0m0s)"},
		{"a short max_plan_age", now.Add(-2 * time.Minute), time.Minute, "made 2m0s ago"},
		{"no time recorded", time.Time{}, 24 * time.Hour, "does not record when it was made"},
		{"made a little ahead of this clock", now.Add(maxClockSkew), 24 * time.Hour, ""},
		{"made in the future", now.Add(maxClockSkew + time.Second), 24 * time.Hour, "after this machine's clock"},
		{"a clock a year ahead", now.AddDate(1, 0, 0), 24 * time.Hour, "p.plan says it was made at 2027-12-02T10:00:00Z, 8760h0m0s after this machine's clock (2026-12-02T10:00:00Z)"},
	} {
		err := checkPlanAge("p.plan", tc.madeAt, now, tc.maxAge)
		if (err == nil) != (tc.want == "") || err != nil && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was sent")) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckPlanAhead(t *testing.T) {
	real := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		clock operation.Clock
		out   string
		want  string
	}{
		{"no --now", operation.Clock{At: real, Real: real}, "p.plan", ""},
		{"within max_plan_age", operation.Clock{At: real.Add(23 * time.Hour), Asked: true, Real: real}, "p.plan", ""},
		{"past max_plan_age", operation.Clock{At: real.Add(25 * time.Hour), Asked: true, Real: real}, "p.plan",
			"--now 2026-12-03T11:00:00Z is 25h0m0s ahead of the clock, more than max_plan_age (24h0m0s)"},
		{"not saved", operation.Clock{At: real.Add(25 * time.Hour), Asked: true, Real: real}, "", ""},
		{"the embedded sandbox", operation.Clock{At: real.Add(25 * time.Hour), Asked: true, Real: real, Simulated: true}, "p.plan", ""},
	} {
		err := checkPlanAhead(&tc.clock, tc.out, 24*time.Hour)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
