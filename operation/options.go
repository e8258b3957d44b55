package operation

import (
	"errors"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/secret"
	"pushform/views"
)

// ErrReported means the error was already shown, as diagnostics passed to
// Options.Diagnostics (or Options.Report when showing them failed).
var ErrReported = errors.New("reported")

// Options are the inputs of Open and of the operations on the state
// (StateList, StateRemove, History, ...): where the configuration and
// state are, how to reach the service, and what to plan. Nothing in them
// is a flag or a terminal.
type Options struct {
	// Operation names the run in the lock info: plan, apply, test-send,
	// state rm. A plan takes no lock on a backend that may only read.
	Operation string
	// Dir is the configuration directory.
	Dir string
	// Config are the loader options: variables and the environment. Its
	// Recipients are ignored: Open resolves them after the fetch.
	Config config.Options
	// Backends are the state backend types a backend block may name; nil
	// means backend.Builtins().
	Backends backend.Registry
	// State says where the state is; its ConfigDir, Backend and Types are
	// filled in by Open.
	State backend.StateOptions
	// StateBackend, when set, is the state the run uses instead of the
	// one State names, which is then never opened: pushform test's
	// in-memory state.
	StateBackend backend.State
	// LockTimeout is how long to wait for the state lock.
	LockTimeout time.Duration
	// Service says how to reach the service.
	Service backend.ServiceOptions
	// Getenv reads the environment: the API key's variable and the
	// backend's secrets, added to Secrets once the configuration names
	// them.
	Getenv  func(string) string
	Secrets *secret.Set
	// Clock is the real clock; nil means time.Now. The run's time is
	// chosen from it once (see operation.Clock).
	Clock func() time.Time
	// Now is --now: the time to plan at. Apply through a base URL refuses
	// it; the embedded sandbox's clock moves to it. Zero: none given.
	Now time.Time
	// SavedAt is the time a saved plan being applied was made for with
	// --now; zero for none. Through a base URL apply refuses it before
	// then; the embedded sandbox's clock moves to it.
	SavedAt time.Time
	// Refresh fetches the recipients list; false plans from the one the
	// state recorded.
	Refresh bool
	// Planner are the plan's choices; Open sets its Now and SendAt.
	Planner planner.Options
	// Diagnostics shows the configuration's diagnostics (warnings too)
	// with the loader that holds their sources; nil shows none.
	Diagnostics func(*config.Loader, hcl.Diagnostics) error
	// Report receives errors that do not stop the operation (showing
	// diagnostics or a plan failed); nil drops them.
	Report func(error)
	// Warnings shows what the operation warns about as it goes: the lock
	// a holder that ended without unlocking left behind, what --force lets
	// through. Nil shows nothing.
	Warnings *views.Warnings
}

func (o *Options) clock() func() time.Time {
	if o.Clock == nil {
		return time.Now
	}
	return o.Clock
}

func (o *Options) getenv() func(string) string {
	if o.Getenv == nil {
		return func(string) string { return "" }
	}
	return o.Getenv
}

func (o *Options) backends() backend.Registry {
	if o.Backends == nil {
		return backend.Builtins()
	}
	return o.Backends
}

func (o *Options) report(err error) {
	if o.Report != nil {
		o.Report(err)
	}
}

func (o *Options) diagnostics(l *config.Loader, diags hcl.Diagnostics) error {
	if o.Diagnostics == nil {
		return nil
	}
	return o.Diagnostics(l, diags)
}

// NewLoader returns a configuration loader that checks backend blocks
// against the schemas of backends (nil: backend.Builtins()).
func NewLoader(backends backend.Registry) *config.Loader {
	if backends == nil {
		backends = backend.Builtins()
	}
	l := config.NewLoader()
	l.Backends = backends
	l.PolicyObjects = &config.PolicyObjects{Plan: plandoc.PlanType, Change: plandoc.ChangeType}
	return l
}

// LoadConfig loads the configuration in dir with l and adds the secrets
// it names (the API key, a backend's password) to secrets, before
// anything can print or store what a server says. The Config is nil when
// there were errors.
func LoadConfig(l *config.Loader, dir string, opts config.Options, backends backend.Registry, getenv func(string) string, secrets *secret.Set) (*config.Config, hcl.Diagnostics) {
	if backends == nil {
		backends = backend.Builtins()
	}
	cfg, diags := l.Load(dir, opts)
	if cfg != nil && cfg.Service.APIKeyEnv != "" {
		secrets.Add(getenv(cfg.Service.APIKeyEnv))
	}
	if cfg != nil && cfg.Backend != nil {
		for _, s := range backends.BackendSecrets(cfg.Backend, getenv) {
			secrets.Add(s.Values...) // the database password, taken out of every message too
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, diags
}
