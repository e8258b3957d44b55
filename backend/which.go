package backend

import (
	"fmt"
	"path/filepath"
	"time"

	"pushform/config"
	"pushform/sandbox"
	"pushform/secret"
	"pushform/state"
)

// BaseURLVar is the environment variable that points a configuration at
// another service: when set, it wins over the service block's base_url and
// sandbox.
const BaseURLVar = "PUSHFORM_BASE_URL"

// lookup is o's LookupEnv, or one made from Getenv (which cannot tell an
// empty variable from an unset one).
func (o ServiceOptions) lookup(name string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv(name)
	}
	if o.Getenv == nil {
		return "", false
	}
	v := o.Getenv(name)
	return v, v != ""
}

// Which names the service a run over cfg talks to, without connecting:
// PUSHFORM_BASE_URL when it is set, else the service block's sandbox or
// base_url (or ServiceOptions.Simulated, before all). Every run that
// reaches the service asks this one function, so what a plan names is what
// apply reaches.
//
// A PUSHFORM_BASE_URL that is set but empty is an error, not "unset": it
// is what a CI system gives for a variable nobody defined (GitHub Actions'
// ${{ vars.NAME }}), and falling back to the embedded sandbox there would
// "deliver" to simulated devices with a real key in hand.
func Which(cfg *config.Config, o ServiceOptions) (state.Service, error) {
	if o.Simulated != nil {
		return state.Service{Kind: state.KindSandbox, Sandbox: o.Simulated.Name}, nil
	}
	svc := cfg.Service
	base, set := o.lookup(BaseURLVar)
	switch {
	case set && base == "":
		fallback := "the service block's base_url"
		if svc.Sandbox != "" {
			fallback = fmt.Sprintf("the embedded sandbox (%s)", svc.Sandbox)
		}
		return state.Service{}, fmt.Errorf("%s is set but empty (a CI system gives an empty value for a variable nobody defined): "+
			"set it to the service's base URL, or unset it to use %s; nothing was sent", BaseURLVar, fallback)
	case set:
		u, err := secret.CheckBaseURL(base)
		if err != nil {
			return state.Service{}, fmt.Errorf("%s: %w", BaseURLVar, err)
		}
		return state.Service{Kind: state.KindBaseURL, URL: u}, nil
	case svc.Sandbox != "":
		return state.Service{Kind: state.KindSandbox, Sandbox: svc.Sandbox}, nil
	case svc.BaseURL != "":
		return state.Service{Kind: state.KindBaseURL, URL: svc.BaseURL}, nil
	}
	return state.Service{}, fmt.Errorf("no service address: set base_url in the service block (%s), or %s", svc.Pos, BaseURLVar)
}

// devicesPath is the file where an embedded sandbox keeps its devices and
// its simulated clock between runs.
func (o ServiceOptions) devicesPath(cfg *config.Config) string {
	dir := o.DevicesDir
	if dir == "" {
		dir = cfg.Dir
	}
	return filepath.Join(dir, sandbox.DefaultDevicesFile)
}

// SandboxClock returns the simulated time the embedded sandbox of the
// session's configuration has reached (see sandbox.ReadClock): the zero
// time when it has none yet.
func (s *Session) SandboxClock() (time.Time, error) {
	path := s.svcOpts.devicesPath(s.Config)
	t, err := sandbox.ReadClock(path)
	if err != nil {
		return t, fmt.Errorf("reading the embedded sandbox's clock: %w", err)
	}
	return t, nil
}
