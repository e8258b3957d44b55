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
	// Getenv reads the connection string from the variable the backend
	// block names.
	Getenv func(string) string
	// Secrets are the run's secrets, taken out of the backend's messages.
	Secrets *secret.Set
	// PG, when set, chooses the PostgreSQL backend with these options
	// directly (tests); Backend fills it in otherwise. Path must then be ""
	// (--state names a local file).
	PG *pg.Options
}

// pgOptions turns a backend "pg" block into the options of pg.Open, with
// the connection string from the environment.
func (o StateOptions) pgOptions() (*pg.Options, error) {
	b := o.Backend
	if b.Type != "pg" {
		return nil, fmt.Errorf("backend %q (%s) is not supported by this pushform", b.Type, b.Pos)
	}
	conn := ""
	if o.Getenv != nil {
		conn = o.Getenv(b.ConnStrEnv)
	}
	if conn == "" {
		return nil, fmt.Errorf("environment variable %s is empty: it must hold the postgres:// URL of the database that keeps the state (backend \"pg\" at %s)", b.ConnStrEnv, b.Pos)
	}
	// pg takes the password out of its messages itself, and the run's
	// other secrets (the API key) through Redact.
	return &pg.Options{ConnString: conn, Schema: b.SchemaName, StateName: b.StateName, Redact: o.Secrets.String}, nil
}

var (
	_ State = localState{}
	_ State = (*pg.Manager)(nil)
)

// OpenState opens the state backend. Without a backend block in the
// configuration it is the local file backend.
func OpenState(ctx context.Context, o StateOptions) (State, error) {
	if o.PG == nil && o.Backend != nil {
		opts, err := o.pgOptions()
		if err != nil {
			return nil, err
		}
		o.PG = opts
	}
	if o.PG != nil {
		if o.Path != "" {
			return nil, errors.New("--state names a local state file, but the configuration keeps its state in PostgreSQL (backend \"pg\")")
		}
		m, err := pg.Open(ctx, *o.PG)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	path := o.Path
	if path == "" {
		path = filepath.Join(o.ConfigDir, DefaultStateFile)
	}
	return localState{local.NewFile(path)}, nil
}

// localState is the local file backend as a State.
type localState struct{ *local.File }

func (l localState) String() string { return l.Path() }
func (l localState) Dir() string    { return filepath.Dir(l.Path()) }
func (l localState) Close() error   { return nil }

// Lock takes the state lock for an operation, waiting up to timeout (0: one
// try). A refusal says how to wait.
func Lock(ctx context.Context, l state.Locker, operation string, timeout time.Duration) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	id, err := l.Lock(ctx, state.NewLockInfo(operation))
	var le *state.LockError
	if errors.As(err, &le) && timeout == 0 {
		return "", fmt.Errorf("%w; --lock-timeout waits for it", err)
	}
	return id, err
}
