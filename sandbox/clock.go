package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"sync"
	"time"

	"pushform/atomicfile"
)

// The simulated clock of an embedded sandbox. pushform runs the sandbox
// in-process for `service { sandbox = ... }`, where `apply --now` steps
// through a schedule: the time the last run reached is kept in the devices
// file with the devices it reached, so the next run never goes back
// before it. The sandbox itself reads no clock but its rate limiter's: the
// simulated time is pushform's to keep.

// simClock holds the simulated time; the zero value holds none.
type simClock struct {
	mu sync.Mutex
	at time.Time
}

// load sets the clock from the devices file's value (nil: none saved).
func (c *simClock) load(t *time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t != nil {
		c.at = t.UTC()
	}
}

// saved is the value the devices file records: nil when never set.
func (c *simClock) saved() *time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return nil
	}
	t := c.at
	return &t
}

// Clock returns the simulated time the sandbox's devices have reached:
// what LoadDevices read, advanced by SetClock; the zero time when there is
// none.
func (s *Server) Clock() time.Time {
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	return s.clock.at
}

// SetClock advances the simulated time to t, which SaveDevices records; a
// t before the time held is ignored: the clock never goes backwards.
func (s *Server) SetClock(t time.Time) {
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	if t.After(s.clock.at) {
		s.clock.at = t.UTC()
	}
}

// ReadClock reads the simulated time a devices file at path records
// (see SetClock): the zero time when the file does not exist or records
// none.
func ReadClock(path string) (time.Time, error) {
	f, err := readDevicesFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, err
	case f.Clock == nil:
		return time.Time{}, nil
	}
	return f.Clock.UTC(), nil
}

// AdvanceClock moves the simulated time the devices file at path records
// to t, when t is later: what a run that sent nothing (so never started
// the sandbox, whose SaveDevices records it) reached. A missing file is
// created holding the clock alone.
func AdvanceClock(path string, t time.Time) error {
	f, err := readDevicesFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = &devicesFile{Version: devicesFileVersion, Messages: []savedMessage{}, Devices: []savedDevice{}}
	case err != nil:
		return err
	}
	if f.Clock != nil && !t.After(*f.Clock) {
		return nil
	}
	at := t.UTC()
	f.Clock = &at
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(f)
	})
}
