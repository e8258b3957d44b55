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
		m.eachRecord(func(t *Target) {
			if (t.Outcome == Delivered || t.Outcome == Unknown) && t.Time.After(last) {
				last = t.Time
			}
		})
	}
	return last
}

// eachRecord calls f with the records of m's targets, each distinct one
// of a compact message once (a million targets share a few thousand). It
// may include a record no target holds any more: one of an earlier
// outcome, which happened too.
func (m *Message) eachRecord(f func(*Target)) {
	m.ready()
	if t := m.table; t != nil {
		for _, r := range t.records {
			if r != nil {
				f(r)
			}
		}
		for _, r := range t.more {
			f(r)
		}
		return
	}
	for _, r := range m.Targets {
		f(r)
	}
}
