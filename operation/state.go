package operation

import (
	"context"
	"errors"
	"fmt"

	"pushform/backend"
	"pushform/config"
	"pushform/state"
)

// openState opens the state backend the configuration's backend block
// names (none: a local file) for an operation on the state: Dir, Backends,
// State, Diagnostics say where it is. Only the backend block is read, so
// these operations work on a configuration that does not validate yet (or
// a directory without one).
func (o *Options) openState(ctx context.Context) (backend.State, error) {
	l := NewLoader(o.Backends)
	be, diags := l.LoadBackend(o.Dir)
	if diags.HasErrors() {
		if err := o.diagnostics(l, diags); err != nil {
			return nil, err
		}
		return nil, ErrReported
	}
	return o.openBackend(ctx, be)
}

// openBackend opens the state backend that the backend block be (nil: a
// local file) and o.State choose.
func (o *Options) openBackend(ctx context.Context, be *config.Backend) (backend.State, error) {
	so := o.State
	so.ConfigDir, so.Backend, so.Types = o.Dir, be, o.backends()
	return backend.OpenState(ctx, so)
}

// locked runs edit on a session over be (cfg may be nil) under the state
// lock, warning of a stale lock first, and closes the session: an error of
// closing follows edit's.
func (o *Options) locked(ctx context.Context, cfg *config.Config, be backend.State, compact bool, edit func(*backend.Session) error) error {
	sess, err := backend.Open(ctx, cfg, be, backend.SessionOptions{Operation: o.Operation, LockTimeout: o.LockTimeout, Compact: compact})
	if err != nil {
		return err
	}
	o.Warnings.StaleLock(sess.StaleLock)
	return errors.Join(edit(sess), sess.Close())
}

// readCompact reads the state compact when the backend can: one target's
// history out of ten million targets then needs no map.
func readCompact(be backend.State) (*state.State, error) {
	if cr, ok := be.(state.CompactReader); ok {
		return cr.ReadCompact()
	}
	return be.Read()
}

// StateRead is a state as an operation that only looks read it.
type StateRead struct {
	// State is nil when there is none.
	State *state.State
	// Where names the backend: a file's path, a PostgreSQL state.
	Where string
}

// StateList reads the state for state list, without locking: it only
// looks. No state is no error: StateRead.State is nil.
func StateList(ctx context.Context, o Options) (*StateRead, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	s, err := be.Read()
	if err != nil {
		return nil, err
	}
	return &StateRead{State: s, Where: be.String()}, nil
}

// StateShow returns the address addr of the state, read without locking.
func StateShow(ctx context.Context, o Options, addr string) (*state.Message, error) {
	r, err := StateList(ctx, o)
	if err != nil {
		return nil, err
	}
	if r.State == nil {
		return nil, fmt.Errorf("no state at %s", r.Where)
	}
	msg := r.State.Messages[addr]
	if msg == nil {
		return nil, fmt.Errorf("no address %s in the state; 'pushform state list' lists them", addr)
	}
	return msg, nil
}
