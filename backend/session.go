package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

// Session is one locked run over a configuration and its state: what plan,
// apply and state rm share. It owns the state while it is open: apply
// records through Recorder and the session persists; nobody else writes.
type Session struct {
	// Config is the configuration the run was opened with.
	Config *config.Config
	// Backend is where the state lives.
	Backend State
	// State is the recorded state, nil when nothing is recorded yet.
	State *state.State
	// StaleLock is set when the lock was left behind by a holder that ended
	// without releasing it (killed, crashed).
	StaleLock *state.LockInfo
	// Which is the service the run talks to (SessionOptions.Which); nil
	// for runs that reach none.
	Which *state.Service
	// RecordedService is set once the run recorded Which in a state
	// written before states recorded their service: from then on it
	// refuses any other.
	RecordedService bool

	svcOpts ServiceOptions
	compact bool
	closed  bool
	lockID  string
	svc     *Service
	rec     *state.Recorder
}

// SessionOptions tune Open.
type SessionOptions struct {
	// Operation names the run in the lock info: plan, apply, state rm.
	Operation string
	// LockTimeout is how long to wait for the lock; 0 tries once.
	LockTimeout time.Duration
	// Service says how to reach the service when the run needs it.
	Service ServiceOptions
	// Compact reads the state compact (state.State.Compact): no map of
	// targets, for runs that only plan and record (plan, apply).
	Compact bool
	// Which is the service the run talks to (see Which): a state whose
	// deliveries went to another is refused, and a state the run records
	// into records it. Nil for runs that reach no service.
	Which *state.Service
	// ReadOnly says the run only reads (plan, history): with a backend
	// that may only read (ReadOnlyReporter) it takes no lock, which would
	// need a write. A run that writes is refused by such a backend before
	// anything happens.
	ReadOnly bool
}

// ReadOnlyReporter is the optional capability of a backend that may be
// opened with only the right to read (a PostgreSQL role granted SELECT):
// ReadOnly says why it cannot write, nil when it can.
type ReadOnlyReporter interface {
	ReadOnly() error
}

// Open locks and reads the state of be for a run over cfg (which may be nil
// for runs that need no configuration), and refuses a state recorded for
// another environment before anything talks to the service. A backend that
// may only read is read without a lock by a ReadOnly run, and refuses any
// other. The session
// owns be from here: Close closes it, also when Open fails.
func Open(ctx context.Context, cfg *config.Config, be State, o SessionOptions) (*Session, error) {
	s := &Session{Config: cfg, Backend: be, Which: o.Which, svcOpts: o.Service, compact: o.Compact}
	if s.svcOpts.DevicesDir == "" {
		s.svcOpts.DevicesDir = be.Dir()
	}
	var roErr error
	if ro, ok := be.(ReadOnlyReporter); ok {
		roErr = ro.ReadOnly()
	}
	switch {
	case roErr != nil && !o.ReadOnly:
		return nil, errors.Join(fmt.Errorf("%s refused: %w", o.Operation, roErr), be.Close())
	case roErr == nil:
		id, err := Lock(ctx, be, o.Operation, o.LockTimeout)
		if err != nil {
			return nil, errors.Join(err, be.Close())
		}
		s.lockID = id
	}
	if info, ok := be.StaleLock(); ok {
		s.StaleLock = &info
	}
	st, err := s.read()
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.State = st
	if cfg != nil && st != nil && st.Environment != "" && st.Environment != cfg.Service.Environment {
		how := "use one state file per environment (--state)"
		if cfg.Backend != nil {
			how = "use one state_name per environment in the backend block"
		}
		err := fmt.Errorf("%s belongs to environment %q but the configuration declares %q: %s",
			Name(be), st.Environment, cfg.Service.Environment, how)
		return nil, errors.Join(err, s.Close())
	}
	if o.Which != nil {
		if err := checkService(Name(be), st, *o.Which, cfg); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	return s, nil
}

// read reads the state, compact when the session is.
func (s *Session) read() (*state.State, error) {
	if !s.compact {
		return s.Backend.Read()
	}
	if cr, ok := s.Backend.(state.CompactReader); ok {
		return cr.ReadCompact()
	}
	st, err := s.Backend.Read()
	if st != nil {
		st.Compact = true // what apply records is compact, what was read stays in maps
	}
	return st, err
}

// Service connects to the service on first use.
func (s *Session) Service() (*Service, error) {
	if s.svc == nil {
		svc, err := Connect(s.Config, s.svcOpts)
		if err != nil {
			return nil, err
		}
		s.svc = svc
	}
	return s.svc, nil
}

// CheckPlan refuses a saved plan made from another state or environment:
// applying it could send what was already sent.
func (s *Session) CheckPlan(p *planner.Plan) error {
	if p.Environment != s.Config.Service.Environment {
		return fmt.Errorf("the plan is for environment %q but the configuration declares %q", p.Environment, s.Config.Service.Environment)
	}
	if err := checkPlanService(p, s.Which); err != nil {
		return err
	}
	st := s.State
	switch {
	case st == nil && p.StateLineage == "":
		return nil
	case st == nil:
		return fmt.Errorf("the plan was made from state %s (serial %d), which no longer exists: make a new plan", p.StateLineage, p.StateSerial)
	case p.StateLineage == "":
		return fmt.Errorf("the plan was made before any state existed, but %s now holds serial %d: make a new plan", Name(s.Backend), st.Serial)
	case st.Lineage != p.StateLineage:
		return fmt.Errorf("the plan was made from another state (lineage %s, not %s): make a new plan", p.StateLineage, st.Lineage)
	case st.Serial != p.StateSerial:
		return fmt.Errorf("the state has changed since the plan was made (serial %d, plan made at %d): it is stale, make a new plan", st.Serial, p.StateSerial)
	}
	return nil
}

// Recorder returns what apply records through. A state that does not exist
// yet is created and persisted first, so a crash in the first apply leaves
// a journal that extends a known lineage and environment.
func (s *Session) Recorder(environment string) (*state.Recorder, error) {
	if s.rec != nil {
		return s.rec, nil
	}
	if s.State == nil {
		st := state.New(environment)
		st.Compact = s.compact
		if s.Which != nil {
			recordService(st, *s.Which)
		}
		if err := s.Backend.Persist(st); err != nil {
			return nil, fmt.Errorf("creating state: %w", err)
		}
		s.State = st
	} else if s.Which != nil {
		s.RecordedService = !recordService(s.State, *s.Which)
	}
	s.rec = state.NewRecorder(s.Backend, s.State)
	return s.rec, nil
}

// Persist writes the session's state as the new snapshot.
func (s *Session) Persist() error {
	if s.State == nil {
		return nil
	}
	persist := func(st *state.State) error { return s.Backend.Persist(st) }
	if s.rec == nil {
		return persist(s.State)
	}
	var err error
	s.rec.Read(func(st *state.State) { err = persist(st) })
	return err
}

// Close releases the service, the lock and the backend.
func (s *Session) Close() error {
	var errs []error
	if s.svc != nil {
		errs = append(errs, s.svc.Close())
		s.svc = nil
	}
	if s.lockID != "" {
		errs = append(errs, s.Backend.Unlock(s.lockID))
		s.lockID = ""
	}
	if !s.closed {
		errs = append(errs, s.Backend.Close())
		s.closed = true
	}
	return errors.Join(errs...)
}
