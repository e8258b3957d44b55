package secret

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Set is the secrets one run knows, one Redactor over all of them that
// grows as the run learns them: the API key once the configuration names
// its variable (or the embedded sandbox's seed gives it), each database
// password once its connection string is read. Everything that prints or
// stores text from outside redacts through the same Set. A nil *Set
// redacts nothing; a Set is safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	secrets []string
	red     atomic.Pointer[Redactor]
}

// NewSet returns a Set holding secrets.
func NewSet(secrets ...string) *Set {
	s := &Set{}
	s.Add(secrets...)
	return s
}

// Add adds secrets (short and empty ones are ignored, as by NewRedactor).
func (s *Set) Add(secrets ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.secrets)
	for _, v := range secrets {
		if len(v) >= MinRedactLength && !slices.Contains(s.secrets, v) {
			s.secrets = append(s.secrets, v)
		}
	}
	if len(s.secrets) != n {
		s.red.Store(NewRedactor(s.secrets...))
	}
}

// Redactor returns the Redactor of the secrets added so far (nil: none).
func (s *Set) Redactor() *Redactor {
	if s == nil {
		return nil
	}
	return s.red.Load()
}

// String is Redactor().String.
func (s *Set) String(t string) string { return s.Redactor().String(t) }

// Error is Redactor().Error.
func (s *Set) Error(err error) error { return s.Redactor().Error(err) }

// Contains is Redactor().Contains.
func (s *Set) Contains(t string) bool { return s.Redactor().Contains(t) }
