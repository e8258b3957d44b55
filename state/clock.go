package state

import "time"

// LastDelivery returns the latest time the ledger records a delivery at,
// or a send whose outcome is unknown (it may have been delivered), under
// any address, current or forgotten; the zero time when there is none.
// Apply refuses a --now before it: deliveries are recorded at the real
// time, so a clock turned back behind them could bypass a frequency cap
// or a delivery window.
func (s *State) LastDelivery() time.Time {
	var last time.Time
	if s == nil {
		return last
	}
	for m := range s.LedgerMessages() {
		var prev *Target
		for _, t := range m.AllTargets() {
			if t == prev { // records are shared between targets: read each once
				continue
			}
			prev = t
			if (t.Outcome == Delivered || t.Outcome == Unknown) && t.Time.After(last) {
				last = t.Time
			}
		}
	}
	return last
}
