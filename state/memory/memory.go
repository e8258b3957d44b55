// Package memory is a state backend that keeps the state in memory, for
// as long as its value lives: pushform test gives each test file a fresh
// one, shared by the file's runs and gone with it. The state is stored
// encoded (statefile), a snapshot and the journal entries since, so every
// Read is a copy that nothing a run does to it can change, and the codec
// is the one a file or a database stores.
package memory

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"pushform/state"
	"pushform/state/statefile"
)

// State is a state kept in memory; the zero value is not usable: New.
type State struct {
	name     string
	mu       sync.Mutex
	head     state.Head // what is stored; Known once anything was
	env      string
	snapshot []byte   // statefile encoding; nil while only a journal exists
	journal  [][]byte // statefile entry encodings since the snapshot
	seen     state.Head
	lock     *state.LockInfo
}

// New returns an empty state named name in messages.
func New(name string) *State {
	return &State{name: name}
}

// String names the state in messages.
func (m *State) String() string { return fmt.Sprintf("the in-memory state of %s", m.name) }

// Dir is "": nothing is kept in files beside this state.
func (m *State) Dir() string { return "" }

// Close keeps the state: it lives as long as the value.
func (m *State) Close() error { return nil }

// Read implements state.Reader: the snapshot with the journal replayed.
func (m *State) Read() (*state.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s *state.State
	if m.snapshot != nil {
		var err error
		if s, err = statefile.Decode(bytes.NewReader(m.snapshot)); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
	}
	m.seen = state.Head{Known: true, Exists: m.head.Exists, Lineage: m.head.Lineage, Serial: m.head.Serial}
	for _, raw := range m.journal {
		e, err := statefile.DecodeEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		if s == nil {
			s = &state.State{Version: state.FormatVersion, Lineage: m.head.Lineage, Serial: m.head.Serial,
				Environment: m.env, Messages: map[string]*state.Message{}}
		}
		if err := s.ApplyEntry(e); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
	}
	return s, nil
}

// Append implements state.Journal.
func (m *State) Append(entries ...state.Entry) error {
	rows := make([][]byte, len(entries))
	for i, e := range entries {
		rows[i] = statefile.AppendEntry(nil, e)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen.Known {
		m.seen = m.head
		m.seen.Known = true
	}
	if err := m.seen.Stale(m.String(), m.head); err != nil {
		return err
	}
	if !m.head.Exists {
		m.head = state.Head{Known: true, Exists: true, Lineage: state.NewLineage()}
		m.seen = m.head
	}
	m.journal = append(m.journal, rows...)
	return nil
}

// Persist implements state.Persister.
func (m *State) Persist(s *state.State) error {
	out := *s
	out.Version = state.FormatVersion
	out.Serial = s.Serial + 1
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, &out); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.head.Exists {
		if m.head.Lineage != s.Lineage {
			return fmt.Errorf("%w: %s has lineage %q, this state has %q", state.ErrLineage, m, m.head.Lineage, s.Lineage)
		}
		if m.head.Serial != s.Serial {
			return fmt.Errorf("%w: %s has serial %d, this state was read at serial %d", state.ErrStaleSerial, m, m.head.Serial, s.Serial)
		}
	}
	m.snapshot, m.journal, m.env = buf.Bytes(), nil, out.Environment
	s.Version, s.Serial = out.Version, out.Serial
	m.head = state.HeadOf(s)
	m.seen = m.head
	return nil
}

// Lock implements state.Locker.
func (m *State) Lock(_ context.Context, info state.LockInfo) (string, error) {
	info = info.ForNewLock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock != nil {
		return "", &state.LockError{Info: *m.lock}
	}
	m.lock = &info
	return info.ID, nil
}

// Unlock implements state.Locker.
func (m *State) Unlock(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock == nil || m.lock.ID != id {
		return fmt.Errorf("%s: unlocking: lock %q is not held", m, id)
	}
	m.lock = nil
	return nil
}

// ForceUnlock implements state.ForceUnlocker: a lock in memory is held by
// a run of this process, which is never gone while the lock is.
func (m *State) ForceUnlock(id string) (state.LockInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock == nil {
		return state.LockInfo{}, fmt.Errorf("force-unlock: %s is not locked", m)
	}
	return *m.lock, fmt.Errorf("force-unlock: %w; it is held by a run of this process", &state.LockError{Info: *m.lock})
}

// StaleLock reports none: a holder in this process cannot end without
// unlocking and leave its lock behind.
func (m *State) StaleLock() (state.LockInfo, bool) { return state.LockInfo{}, false }
