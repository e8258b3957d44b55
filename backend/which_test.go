package backend

import (
	"context"
	"strings"
	"testing"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

// TestWhich: the service a run talks to, from the configuration and
// PUSHFORM_BASE_URL; set but empty is an error naming what it would hide.
func TestWhich(t *testing.T) {
	sandboxCfg := config.Service{Environment: "test", Sandbox: "sandbox.hcl"}
	baseCfg := config.Service{Environment: "production", BaseURL: "https://push.example.com/v1"}
	for _, tt := range []struct {
		name string
		svc  config.Service
		env  map[string]string // nil value: unset
		want state.Service
		err  string
	}{
		{"sandbox", sandboxCfg, nil, state.Service{Kind: state.KindSandbox, Sandbox: "sandbox.hcl"}, ""},
		{"base_url", baseCfg, nil, state.Service{Kind: state.KindBaseURL, URL: "https://push.example.com/v1"}, ""},
		{"PUSHFORM_BASE_URL wins over the sandbox", sandboxCfg, map[string]string{"PUSHFORM_BASE_URL": "http://127.0.0.1:8787/v1/"},
			state.Service{Kind: state.KindBaseURL, URL: "http://127.0.0.1:8787/v1"}, ""},
		{"PUSHFORM_BASE_URL set but empty, sandbox", sandboxCfg, map[string]string{"PUSHFORM_BASE_URL": ""}, state.Service{},
			"PUSHFORM_BASE_URL is set but empty (a CI system gives an empty value for a variable nobody defined): set it to the service's base URL, or unset it to use the embedded sandbox (sandbox.hcl)"},
		{"PUSHFORM_BASE_URL set but empty, base_url", baseCfg, map[string]string{"PUSHFORM_BASE_URL": ""}, state.Service{},
			"or unset it to use the service block's base_url"},
		{"PUSHFORM_BASE_URL not a base URL", baseCfg, map[string]string{"PUSHFORM_BASE_URL": "http://push.example.com/v1"}, state.Service{},
			"PUSHFORM_BASE_URL: the service base URL uses plain http://"},
		{"none", config.Service{Environment: "test"}, nil, state.Service{}, "no service address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := ServiceOptions{LookupEnv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
			got, err := Which(&config.Config{Service: tt.svc}, o)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("err = %v, want %q", err, tt.err)
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case got != tt.want:
				t.Fatalf("Which = %+v, want %+v", got, tt.want)
			}
		})
	}
	// Without LookupEnv, an empty Getenv value is unset.
	if got, err := Which(&config.Config{Service: sandboxCfg}, ServiceOptions{Getenv: func(string) string { return "" }}); err != nil || !got.Simulated() {
		t.Fatalf("Getenv only: %+v, %v", got, err)
	}
}

// TestSessionRecordsItsService: a new state records the service of the
// run that creates it, and refuses a run against another with a message
// that says how to start a fresh state; a state that records none (written
// before format 6) records the first one it is used with, and says so.
func TestSessionRecordsItsService(t *testing.T) {
	sb := state.Service{Kind: state.KindSandbox, Sandbox: "sandbox.hcl"}
	real := state.Service{Kind: state.KindBaseURL, URL: "https://push.example.com/v1"}
	other := state.Service{Kind: state.KindBaseURL, URL: "https://push.other.example/v1"}
	sameHost := state.Service{Kind: state.KindBaseURL, URL: "https://PUSH.example.com:8443/v2/v1"}
	dir := t.TempDir()
	open := func(which state.Service) (*Session, error) {
		t.Helper()
		be, err := OpenState(context.Background(), StateOptions{ConfigDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{Dir: dir, Service: config.Service{Environment: "test"}}
		return Open(context.Background(), cfg, be, SessionOptions{Operation: "apply", Which: &which})
	}
	s, err := open(sb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recorder("test"); err != nil {
		t.Fatal(err)
	}
	if s.RecordedService || !s.State.Service.Same(sb.Record()) {
		t.Fatalf("a new state: recorded %+v (note %v), want the sandbox without a note", s.State.Service, s.RecordedService)
	}
	s.Close()
	_, err = open(real)
	if err == nil || !strings.Contains(err.Error(), "holds deliveries made through the embedded sandbox, which reached no real device, but this run talks to https://push.example.com/v1") ||
		!strings.Contains(err.Error(), "nothing was sent: start a fresh state for it: --state with a new file; or unset PUSHFORM_BASE_URL") {
		t.Fatalf("a sandbox state with a real service: %v", err)
	}

	// A state from before format 6: the first service it is used with.
	s, err = open(sb)
	if err != nil {
		t.Fatal(err)
	}
	s.State.Service = nil
	if err := s.Persist(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = open(real)
	if err != nil {
		t.Fatalf("a state that records no service: %v", err)
	}
	if _, err := s.Recorder("test"); err != nil {
		t.Fatal(err)
	}
	if !s.RecordedService || !s.State.Service.Same(real.Record()) {
		t.Fatalf("recorded %+v (note %v), want the real service, said", s.State.Service, s.RecordedService)
	}
	if err := s.Persist(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = open(sameHost); err != nil {
		t.Fatalf("the same host: %v", err)
	}
	// A run that records nothing records the service all the same.
	s.State.Service = nil
	if err := s.Persist(); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordService(); err != nil || !s.RecordedService {
		t.Fatalf("RecordService: %v (note %v)", err, s.RecordedService)
	}
	s.Close()
	if s, err = open(sameHost); err != nil || !s.State.Service.Same(real.Record()) {
		t.Fatalf("after RecordService the state records %+v (%v)", s.State.Service, err)
	}
	s.Close()
	for _, which := range []state.Service{sb, other} {
		_, err = open(which)
		if err == nil || !strings.Contains(err.Error(), "holds deliveries made through the service at push.example.com, but this run talks to "+which.String()) {
			t.Fatalf("a real state with %s: %v", which, err)
		}
		// Another host may be the same service at a new address: a
		// fresh state would send everything again, and the refusal
		// says so rather than advise one.
		moved := strings.Contains(err.Error(), "If it is the same service at a new address, do not: a fresh state holds no record of what was sent")
		if moved != (which.Kind == state.KindBaseURL) {
			t.Errorf("a real state with %s: %v", which, err)
		}
	}
}

// TestCheckPlanService: a saved plan made for another service is refused.
func TestCheckPlanService(t *testing.T) {
	sb := state.Service{Kind: state.KindSandbox, Sandbox: "sandbox.hcl"}
	real := state.Service{Kind: state.KindBaseURL, URL: "https://push.example.com/v1"}
	for _, tt := range []struct {
		plan, run *state.Service
		want      string
	}{
		{&sb, &sb, ""},
		{nil, &real, ""}, // made by an earlier pushform
		{&sb, &real, "the plan was made for embedded sandbox (sandbox.hcl) but this run talks to https://push.example.com/v1"},
		{&real, &sb, "the plan was made for https://push.example.com/v1 but this run talks to embedded sandbox (sandbox.hcl)"},
	} {
		err := checkPlanService(&planner.Plan{Service: tt.plan}, tt.run)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v with %v: %v, want %q", tt.plan, tt.run, err, tt.want)
		}
	}
}
