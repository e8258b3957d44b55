package statefile

// Format 7's part of the snapshot body, after the ledger: the deny
// policies applies overrode (state.State.Overrides), oldest first.

import (
	"pushform/state"
)

// overrides writes the overrides: their count, then each one's time,
// policy, reason and addresses.
func (e *encoder) overrides(s *state.State) {
	e.uvarint(uint64(len(s.Overrides)))
	for _, o := range s.Overrides {
		e.time(o.Time)
		e.str(o.Policy)
		e.str(o.Reason)
		e.ids(o.Addresses)
	}
}

// overrides reads what encoder.overrides wrote.
func (d *decoder) overrides(s *state.State) {
	n := d.count(4) // a time, two strings and a count take a byte each at least
	for range n {
		o := state.Override{Time: d.time(), Policy: d.str(), Reason: d.str(), Addresses: d.ids()}
		if d.err != nil {
			return
		}
		if o.Policy == "" {
			d.fail("override without a policy")
			return
		}
		s.Overrides = append(s.Overrides, o)
	}
}
