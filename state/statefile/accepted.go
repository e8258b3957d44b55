package statefile

// Format 6's part of the snapshot body, after the ledger: the shapes a
// reviewed apply accepted (state.State.Accepted), by address.

import (
	"slices"
	"strconv"

	"pushform/state"
)

// accepted writes the accepted shapes: their count, then each address and
// fingerprint, in address order.
func (e *encoder) accepted(s *state.State) {
	addrs := make([]string, 0, len(s.Accepted))
	for a := range s.Accepted {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	e.uvarint(uint64(len(addrs)))
	for _, a := range addrs {
		e.str(a)
		e.str(s.Accepted[a])
	}
}

// accepted reads what encoder.accepted wrote.
func (d *decoder) accepted(s *state.State) {
	n := d.count(2) // an address and a fingerprint take a byte each at least
	if n == 0 || d.err != nil {
		return
	}
	s.Accepted = make(map[string]string, n)
	for range n {
		addr, fp := d.str(), d.str()
		if d.err != nil {
			return
		}
		if _, dup := s.Accepted[addr]; dup || addr == "" || fp == "" {
			d.fail("accepted shape of " + strconv.Quote(addr) + " repeated or empty")
			return
		}
		s.Accepted[addr] = fp
	}
}
