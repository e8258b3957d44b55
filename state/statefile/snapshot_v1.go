package statefile

// Snapshot format 1: the state as one plain JSON object. Still read; the
// next write migrates it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"pushform/state"
)

func decodeStateV1(data []byte) (*state.State, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var s state.State
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the state object")
	}
	if s.Version != 1 {
		if err := checkVersion(s.Version); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("format version %d is not plain JSON", s.Version)
	}
	if s.Messages == nil {
		s.Messages = map[string]*state.Message{}
	}
	for addr, m := range s.Messages {
		if m == nil {
			return nil, fmt.Errorf("message %q is null", addr)
		}
		m.Address = addr
		if m.Targets == nil {
			m.Targets = map[string]*state.Target{}
		}
		for id, t := range m.Targets {
			if t == nil {
				return nil, fmt.Errorf("target %q of %q is null", id, addr)
			}
		}
	}
	return &s, nil
}
