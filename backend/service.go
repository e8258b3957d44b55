package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/pushapi"
	"pushform/sandbox"
	"pushform/secret"
	"pushform/state"
)

// Service is a connection to the Push Notification Service: the real one,
// or the embedded sandbox running in-process on loopback.
type Service struct {
	Client *pushapi.Client
	// Which names the service (see Which).
	Which state.Service
	// Embedded is set when the sandbox runs in-process.
	Embedded bool
	// close stops an embedded sandbox and saves its devices.
	close func() error
}

// Close releases the service; an embedded sandbox saves its devices.
func (s *Service) Close() error {
	s.Client.Close()
	return s.close()
}

// ServiceOptions say how to reach the service.
type ServiceOptions struct {
	// Getenv looks up PUSHFORM_BASE_URL and the API key variable.
	Getenv func(string) string
	// LookupEnv tells a variable set but empty from one not set, for
	// PUSHFORM_BASE_URL; nil takes an empty Getenv value as not set.
	LookupEnv func(string) (string, bool)
	// SandboxClock, when set, is the simulated time an embedded sandbox's
	// clock advances to when the service closes (apply sets it: see
	// sandbox.Server.SetClock); nil keeps the time it had.
	SandboxClock func() time.Time
	// RequestTimeout bounds each call; 0 means the client's default.
	RequestTimeout time.Duration
	// RecipientsTimeout bounds fetching the whole recipients list; 0 means
	// the client's default.
	RecipientsTimeout time.Duration
	// RecipientsMaxAttempts bounds the tries of a recipients page that
	// gets a 429 or 503, and MaxRetryAfter the wait a Retry-After may
	// impose (apply's --max-attempts and --max-retry-after); 0 means the
	// client's defaults.
	RecipientsMaxAttempts int
	MaxRetryAfter         time.Duration
	// RateLimit is the run's budget for waiting out 429s, shared with
	// apply's sends (pushapi.Options.RateLimit); nil: the client's own.
	RateLimit *pushapi.RateLimit
	// UserAgent names pushform and its version.
	UserAgent string
	// DevicesDir is where an embedded sandbox keeps its devices between
	// runs; "" means the configuration directory.
	DevicesDir string
	// Secrets learns the API key the service is reached with.
	Secrets *secret.Set
	// Log, when set, receives one line's worth of every HTTP exchange
	// (PUSHFORM_LOG=debug): counts and ids of requests, never the key,
	// target ids or body text.
	Log func(pushapi.RequestLog)
	// Simulated, when set, is the service every run reaches, whatever
	// the configuration or PUSHFORM_BASE_URL names: pushform test's.
	Simulated *Simulated
}

// Simulated is a sandbox reached in-process, through sandbox.Transport,
// with no listener (pushform test). Each connection builds a server from
// Seed and Options, with the devices and the clock that the last one left
// in DevicesDir, as the embedded sandbox keeps them between runs.
type Simulated struct {
	// Name names the service wherever a run names it: the test file.
	Name string
	// Seed returns the population of the sandbox for the configuration
	// cfg (whose service block may name a seed file).
	Seed    func(cfg *config.Config) (*sandbox.Seed, error)
	Options sandbox.Options
	// Wrap, when set, wraps the in-process transport: pushform test
	// records what the service received.
	Wrap func(http.RoundTripper) http.RoundTripper
}

// clientOptions are the client's options for the service at base.
func (o ServiceOptions) clientOptions(base, key, keyEnv string) pushapi.Options {
	return pushapi.Options{BaseURL: base, APIKey: key, APIKeyEnv: keyEnv, UserAgent: o.UserAgent, Timeout: o.RequestTimeout,
		RecipientsTimeout: o.RecipientsTimeout, RecipientsMaxAttempts: o.RecipientsMaxAttempts, MaxRetryAfter: o.MaxRetryAfter, RateLimit: o.RateLimit, Log: o.Log}
}

// Connect opens the service the configuration names (see Which).
// PUSHFORM_BASE_URL, when set, wins over both base_url and sandbox, so one
// configuration can run against a separately started sandbox or the real
// service.
func Connect(cfg *config.Config, o ServiceOptions) (*Service, error) {
	which, err := Which(cfg, o)
	if err != nil {
		return nil, err
	}
	if which.Kind == state.KindSandbox {
		return embedded(cfg, o)
	}
	svc := cfg.Service
	if svc.APIKeyEnv == "" {
		return nil, fmt.Errorf("the service block (%s) does not say which environment variable holds the API key: set api_key_env", svc.Pos)
	}
	key := o.Getenv(svc.APIKeyEnv)
	o.Secrets.Add(key)
	if key == "" {
		return nil, &MissingKeyError{Var: svc.APIKeyEnv, Environment: svc.Environment, Pos: svc.APIKeyEnvPos, Block: svc.Pos}
	}
	c, err := pushapi.New(o.clientOptions(which.URL, key, svc.APIKeyEnv))
	if err != nil {
		return nil, err
	}
	return &Service{Client: c, Which: which, close: func() error { return nil }}, nil
}

// embedded starts the configured sandbox in-process. Its devices persist in
// a file beside the state, so a second run sees what the first delivered.
func embedded(cfg *config.Config, o ServiceOptions) (*Service, error) {
	seedPath := cfg.Service.Sandbox
	if !filepath.IsAbs(seedPath) {
		seedPath = filepath.Join(cfg.Dir, seedPath)
	}
	var seed *sandbox.Seed
	var opts sandbox.Options
	if sim := o.Simulated; sim != nil {
		var err error
		if seed, err = sim.Seed(cfg); err != nil {
			return nil, err
		}
		opts, seedPath = sim.Options, sim.Name
	} else {
		var diags hcl.Diagnostics
		seed, diags = sandbox.LoadSeedFile(seedPath)
		if diags.HasErrors() {
			return nil, fmt.Errorf("sandbox seed %s: %w", seedPath, DiagError(diags))
		}
	}
	srv := sandbox.New(seed, opts)
	devices := o.devicesPath(cfg)
	if err := srv.LoadDevices(devices); err != nil {
		return nil, fmt.Errorf("loading sandbox devices: %w", err)
	}
	key, ok := srv.APIKeyFor(cfg.Service.Environment)
	o.Secrets.Add(key)
	if !ok {
		return nil, fmt.Errorf("sandbox seed %s has no api_key block for environment %q", seedPath, cfg.Service.Environment)
	}
	var base string
	var stop func() error
	copts := o.clientOptions("", key, "(embedded sandbox)")
	if sim := o.Simulated; sim != nil {
		var rt http.RoundTripper = srv.Transport()
		if sim.Wrap != nil {
			rt = sim.Wrap(rt)
		}
		copts.BaseURL, copts.HTTPClient, stop = sandbox.InProcessBaseURL, &http.Client{Transport: rt}, func() error { return nil }
	} else {
		var err error
		if base, stop, err = srv.Start("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("starting the embedded sandbox: %w", err)
		}
		copts.BaseURL = base
	}
	c, err := pushapi.New(copts)
	if err != nil {
		stop()
		return nil, err
	}
	which := state.Service{Kind: state.KindSandbox, Sandbox: cfg.Service.Sandbox}
	if o.Simulated != nil {
		which.Sandbox = o.Simulated.Name
	}
	return &Service{Client: c, Which: which, Embedded: true, close: func() error {
		err := stop()
		if o.SandboxClock != nil {
			srv.SetClock(o.SandboxClock())
		}
		return errors.Join(err, srv.SaveDevices(devices))
	}}, nil
}

// Recipients fetches the recipients list for the data sources. The ids
// arrive in chunks (the body is never held whole) and are gathered into
// one list of exactly their number at the end: ten million ids are never
// copied again and again into a growing list.
func (s *Service) Recipients(ctx context.Context) ([]string, error) {
	var chunks [][]string
	total := 0
	err := s.RecipientsFunc(ctx, func(ids []string) error {
		chunks = append(chunks, ids)
		total += len(ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return JoinIDs(chunks, total), nil
}

// JoinIDs gathers chunks of ids, total in all, into one slice, dropping
// each chunk's slice as it goes (the strings live on). It copies element
// by element, not with copy or append: those are one runtime call per
// chunk that the garbage collector cannot preempt, and a collection that
// began meanwhile spun on the fetching goroutine (tgkill, procyield) until
// each returned; 16% of an apply's CPU at a million targets at 0 ms.
func JoinIDs(chunks [][]string, total int) []string {
	out := make([]string, total)
	off := 0
	for i, c := range chunks {
		for j, id := range c {
			out[off+j] = id
		}
		off += len(c)
		chunks[i] = nil
	}
	return out[:off]
}

// RecipientsFunc streams the recipients list: fn gets the ids in chunks,
// in the order served, each id once (see pushapi.Client.RecipientsFunc);
// it may keep them. An error from fn stops the fetch and is returned.
func (s *Service) RecipientsFunc(ctx context.Context, fn func(ids []string) error) error {
	if _, err := s.Client.RecipientsFunc(ctx, fn); err != nil {
		return fmt.Errorf("fetching recipients: %w", err)
	}
	return nil
}

// DiagError flattens diagnostics into one error for places that cannot
// print snippets.
func DiagError(diags hcl.Diagnostics) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		s := d.Summary
		if d.Detail != "" {
			s += ": " + d.Detail
		}
		if d.Subject != nil {
			s = fmt.Sprintf("%s:%d: %s", d.Subject.Filename, d.Subject.Start.Line, s)
		}
		msgs = append(msgs, s)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// MissingKeyError is Connect's error when the API key's environment
// variable is empty: a command may say how to do without the service.
type MissingKeyError struct {
	Var, Environment string
	// Pos is where api_key_env names Var; zero when Var is the default,
	// and Block the service block's position.
	Pos, Block config.Pos
}

func (e *MissingKeyError) Error() string {
	where := ""
	switch {
	case e.Pos.Filename != "":
		where = fmt.Sprintf(" (api_key_env at %s)", e.Pos)
	case e.Block.Filename != "":
		where = fmt.Sprintf(" (the default: the service block at %s sets no api_key_env)", e.Block)
	}
	return fmt.Sprintf("environment variable %s is empty: it must hold the API key for environment %q%s", e.Var, e.Environment, where)
}
