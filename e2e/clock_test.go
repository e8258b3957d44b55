package e2e

import "time"

// aheadOfClock returns at: t0 + d in RFC 3339, with t0 a minute ahead of
// the real clock in whole seconds. Apply refuses a --now in the past and
// records deliveries at the real time, so tests that walk through time
// with --now start from the real clock.
func aheadOfClock() (t0 time.Time, at func(d time.Duration) string) {
	t0 = time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	return t0, func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
}
