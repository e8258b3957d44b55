package state

import (
	"fmt"
	"maps"
)

// What a reviewed apply accepted: per address, the fingerprint of the
// evaluated shape of its configuration (config.Message.Shape) when a
// reviewed apply (not --scheduled) applied it. apply --scheduled releases
// only sends of addresses whose shape is still the accepted one.

// EntryAccept records the shapes a reviewed apply accepted: each item's
// Fingerprint is the shape of Items[].Address, or "" to drop the address's
// (it is no longer in the configuration). Nothing is sent.
const EntryAccept EntryType = "accept"

// AcceptedShape returns the shape a reviewed apply accepted for addr, and
// whether there is one.
func (s *State) AcceptedShape(addr string) (string, bool) {
	fp, ok := s.Accepted[addr]
	return fp, ok
}

// accept applies the items of an accept entry.
func (s *State) accept(items []Item) error {
	for _, it := range items {
		if it.Address == "" {
			return fmt.Errorf("journal: accept entry without an address")
		}
	}
	for _, it := range items {
		if it.Fingerprint == "" {
			delete(s.Accepted, it.Address)
			continue
		}
		if s.Accepted == nil {
			s.Accepted = map[string]string{}
		}
		s.Accepted[it.Address] = it.Fingerprint
	}
	return nil
}

// moveAccepted carries the accepted shapes of moved addresses to their new
// addresses (a move entry's items, already checked).
func (s *State) moveAccepted(items []Item) {
	moved := map[string]string{}
	for _, it := range items {
		if fp, ok := s.Accepted[it.Address]; ok {
			moved[it.To] = fp
		}
	}
	if len(moved) == 0 {
		return
	}
	for _, it := range items {
		delete(s.Accepted, it.Address)
	}
	maps.Copy(s.Accepted, moved)
}
