package statefile

import "pushform/state"

// headerOf is the header line of s written as a snapshot of format
// version: the service its deliveries went to from format 6 on.
func headerOf(s *state.State, version int) Header {
	h := Header{Version: version, Lineage: s.Lineage, Serial: s.Serial, Environment: s.Environment}
	if version >= 6 {
		h.Service = s.Service
	}
	return h
}
