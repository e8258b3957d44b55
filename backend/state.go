// Package backend turns a configuration into the things a run talks to:
// the state backend it chose (a local file, or PostgreSQL) and the Push
// Notification Service client (the real service, or the embedded sandbox).
// Session is one locked run over both: lock, read, one environment check,
// record, persist, unlock. Commands reach state only through here.
package backend

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"pushform/config"
	"pushform/secret"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/memory"
	"pushform/state/pg"
)

// DefaultStateFile is the local state file, in the configuration directory.
const DefaultStateFile = "pushform.state"

// State is an opened state backend: a state.Manager with what the commands
// need besides.
type State interface {
	state.Manager
	state.ForceUnlocker
	// StaleLock returns the lock info that the last successful Lock found
	// left behind by a holder that ended without unlocking.
	StaleLock() (state.LockInfo, bool)
	// String names the state in messages: a path, or a database state name.
	String() string
	// Dir is where files that belong with this state are kept (the
	// embedded sandbox's devices); "" to use the configuration directory.
	Dir() string
	// Close releases what the backend holds open (connections).
	Close() error
}

// StateOptions say where the state is.
type StateOptions struct {
	// ConfigDir is the configuration directory.
	ConfigDir string
	// Path is the local state file (--state), resolved; "" means
	// DefaultStateFile in ConfigDir.
	Path string
	// Backend is the configuration's backend block; nil keeps the state in
	// a local file.
	Backend *config.Backend
	// Types are the backend types a block may name; nil means Builtins().
	Types Registry
	// Getenv reads the environment: the connection string from the
	// variable the backend block names, and test hooks (local.PauseEnv).
	Getenv func(string) string
	// Log receives the backend's debug lines (connects, locks); nil: none.
	Log func(string)
	// Secrets are the run's secrets (the API key), taken out of the
	// backend's messages.
	Secrets *secret.Set
}

var (
	_ State = localState{}
	_ State = (*pg.Manager)(nil)
	_ State = (*memory.State)(nil)
)

// OpenState opens the state backend: the one the configuration's backend
// block names, or the local file backend without one.
func OpenState(ctx context.Context, o StateOptions) (State, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if o.Backend != nil {
		types := o.Types
		if types == nil {
			types = Builtins()
		}
		if o.Path != "" {
			where := "a backend"
			if n, ok := types[o.Backend.Type].(interface{ Where() string }); ok {
				where = n.Where()
			}
			return nil, fmt.Errorf("--state names a local state file, but the configuration keeps its state in %s (backend %q)", where, o.Backend.Type)
		}
		return types.open(ctx, o.Backend, OpenEnv{ConfigDir: o.ConfigDir, Getenv: getenv, Secrets: o.Secrets, Log: o.Log})
	}
	path := o.Path
	if path == "" {
		path = filepath.Join(o.ConfigDir, DefaultStateFile)
	}
	return localState{local.NewFileWith(path, local.Options{PauseAt: getenv(local.PauseEnv)})}, nil
}

// OpenPG opens the PostgreSQL backend with options given directly (tests,
// state push and pull between backends).
func OpenPG(ctx context.Context, o pg.Options) (State, error) {
	m, err := pg.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// IsLocal reports whether s is the local file backend: what fills its
// disk is the user's to free, a database's errors say what failed.
func IsLocal(s State) bool {
	_, ok := s.(localState)
	return ok
}

// localState is the local file backend as a State.
type localState struct{ *local.File }

func (l localState) String() string { return l.Path() }

// Name is how messages name be's state: "the state FILE" for a file, the
// backend's own words otherwise ("PostgreSQL state ...").
func Name(be State) string {
	if _, ok := be.(localState); ok {
		return "the state " + be.String()
	}
	return be.String()
}
func (l localState) Dir() string  { return filepath.Dir(l.Path()) }
func (l localState) Close() error { return nil }

// Lock takes the state lock for an operation, waiting up to timeout (0: one
// try). A refusal says how to wait.
func Lock(ctx context.Context, l state.Locker, operation string, timeout time.Duration) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	id, err := state.LockWithContext(ctx, l, state.NewLockInfo(operation))
	var le *state.LockError
	if errors.As(err, &le) && timeout == 0 {
		return "", fmt.Errorf("%w; --lock-timeout waits for it", err)
	}
	return id, err
}
