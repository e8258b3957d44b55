package command

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/pushapi"
	"pushform/sandbox"
)

// service is a connection to the Push Notification Service: the real one,
// or the embedded sandbox running in-process on loopback.
type service struct {
	client *pushapi.Client
	// close stops an embedded sandbox and saves its devices.
	close func() error
	// embedded is set when the sandbox runs in-process.
	embedded bool
}

// connect opens the service the configuration names. PUSHFORM_BASE_URL, when
// set, wins over both base_url and sandbox, so one configuration can run
// against a separately started sandbox or the real service.
func (m *Meta) connect(cfg *config.Config, statePath string) (*service, error) {
	svc := cfg.Service
	base := m.Getenv("PUSHFORM_BASE_URL")
	if base == "" && svc.Sandbox != "" {
		return m.embedded(cfg, statePath)
	}
	if base == "" {
		base = svc.BaseURL
	}
	if base == "" {
		return nil, fmt.Errorf("no service address: set base_url in the service block (%s), or PUSHFORM_BASE_URL", svc.Pos)
	}
	if svc.APIKeyEnv == "" {
		return nil, fmt.Errorf("the service block (%s) does not say which environment variable holds the API key: set api_key_env", svc.Pos)
	}
	key := m.Getenv(svc.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("environment variable %s is empty: it must hold the API key for environment %q", svc.APIKeyEnv, svc.Environment)
	}
	c, err := pushapi.New(pushapi.Options{BaseURL: base, APIKey: key, APIKeyEnv: svc.APIKeyEnv, UserAgent: "pushform/" + Version, Timeout: m.requestTimeout})
	if err != nil {
		return nil, err
	}
	return &service{client: c, close: func() error { return nil }}, nil
}

// embedded starts the configured sandbox in-process. Its devices persist in
// a file beside the state, so a second run sees what the first delivered.
func (m *Meta) embedded(cfg *config.Config, statePath string) (*service, error) {
	seedPath := cfg.Service.Sandbox
	if !filepath.IsAbs(seedPath) {
		seedPath = filepath.Join(cfg.Dir, seedPath)
	}
	seed, diags := sandbox.LoadSeedFile(seedPath)
	if diags.HasErrors() {
		return nil, fmt.Errorf("sandbox seed %s: %w", seedPath, diagError(diags))
	}
	srv := sandbox.New(seed, sandbox.Options{})
	// Its devices are kept beside the state between runs.
	devices := filepath.Join(filepath.Dir(statePath), sandbox.DefaultDevicesFile)
	if err := srv.LoadDevices(devices); err != nil {
		return nil, fmt.Errorf("loading sandbox devices: %w", err)
	}
	key, ok := srv.APIKeyFor(cfg.Service.Environment)
	if !ok {
		return nil, fmt.Errorf("sandbox seed %s has no api_key block for environment %q", seedPath, cfg.Service.Environment)
	}
	base, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the embedded sandbox: %w", err)
	}
	c, err := pushapi.New(pushapi.Options{BaseURL: base, APIKey: key, APIKeyEnv: "(embedded sandbox)", UserAgent: "pushform/" + Version, Timeout: m.requestTimeout})
	if err != nil {
		stop()
		return nil, err
	}
	return &service{client: c, embedded: true, close: func() error {
		return errors.Join(stop(), srv.SaveDevices(devices))
	}}, nil
}

// diagError flattens diagnostics into one error for places that cannot
// print snippets.
func diagError(diags hcl.Diagnostics) error {
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

// fetchRecipients gets the recipients list for the data sources.
func fetchRecipients(ctx context.Context, svc *service) ([]string, error) {
	r, err := svc.client.Recipients(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching recipients: %w", err)
	}
	return r.UserIDs, nil
}
