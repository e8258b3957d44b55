package backend_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/internal/testutil"
	"pushform/sandbox"
)

// env is a Getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestConnectErrors: each missing piece is named with where to set it,
// and the key never shows.
func TestConnectErrors(t *testing.T) {
	pos := config.Pos{Filename: "main.hcl", Line: 3}
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "prod-only.hcl", "api_key \"k-prod\" { environment = \"production\" }\n")
	for _, tt := range []struct {
		name string
		svc  config.Service
		vars map[string]string
		want string
	}{
		{"no address", config.Service{Environment: "test", Pos: pos}, nil,
			"no service address: set base_url in the service block (main.hcl:3), or PUSHFORM_BASE_URL"},
		{"no key variable", config.Service{Environment: "test", BaseURL: "https://push.example.com/v1", Pos: pos}, nil,
			"the service block (main.hcl:3) does not say which environment variable holds the API key: set api_key_env"},
		{"empty key variable", config.Service{Environment: "test", BaseURL: "https://push.example.com/v1", APIKeyEnv: "PF_KEY", Pos: pos,
			APIKeyEnvPos: config.Pos{Filename: "main.hcl", Line: 5}},
			map[string]string{"OTHER": "k"}, `environment variable PF_KEY is empty: it must hold the API key for environment "test" (api_key_env at main.hcl:5)`},
		{"empty default key variable", config.Service{Environment: "test", BaseURL: "https://push.example.com/v1", APIKeyEnv: config.DefaultAPIKeyEnv, Pos: pos},
			nil, `environment variable PUSHFORM_API_KEY is empty: it must hold the API key for environment "test" (the default: the service block at main.hcl:3 sets no api_key_env)`},
		{"missing seed", config.Service{Environment: "test", Sandbox: "none.hcl", Pos: pos}, nil,
			"sandbox seed " + filepath.Join(dir, "none.hcl")},
		{"seed without the environment's key", config.Service{Environment: "test", Sandbox: "prod-only.hcl", Pos: pos}, nil,
			`sandbox seed ` + filepath.Join(dir, "prod-only.hcl") + ` has no api_key block for environment "test"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Dir: dir, Service: tt.svc}
			svc, err := backend.Connect(cfg, backend.ServiceOptions{Getenv: env(tt.vars), DevicesDir: t.TempDir()})
			if err == nil {
				svc.Close()
				t.Fatalf("connected; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "k-prod") {
				t.Errorf("the error shows a key: %v", err)
			}
		})
	}
}

// TestEmbeddedSandbox runs the quickstart's sandbox in-process: the
// recipients are the seed's users with a device that can receive a push
// in the configured environment, and Close saves the devices where asked.
func TestEmbeddedSandbox(t *testing.T) {
	dir := testutil.Quickstart(t)
	devices := t.TempDir()
	cfg := &config.Config{Dir: dir, Service: config.Service{Environment: "test", Sandbox: "sandbox.hcl"}}
	svc, err := backend.Connect(cfg, backend.ServiceOptions{Getenv: env(nil), DevicesDir: devices})
	if err != nil {
		t.Fatal(err)
	}
	if !svc.Embedded {
		t.Error("an embedded sandbox is not marked Embedded")
	}
	ids, err := svc.Recipients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, "alice") || slices.Contains(ids, "carol") {
		t.Errorf("recipients %v: want alice (a test device), not carol (production only)", ids)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(devices, sandbox.DefaultDevicesFile)); err != nil {
		t.Errorf("devices not saved in DevicesDir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, sandbox.DefaultDevicesFile)); err == nil {
		t.Error("devices saved in the configuration directory although DevicesDir was given")
	}
}

// TestBaseURLWinsOverSandbox: PUSHFORM_BASE_URL points one configuration
// at a separately started service, even one that names a sandbox seed
// (here one that does not exist: it is never read).
func TestBaseURLWinsOverSandbox(t *testing.T) {
	base, _ := testutil.StartSandbox(t, "api_key \"k-test\" { environment = \"test\" }\nuser \"zed\" {\n  device \"zed-phone\" { environment = \"test\" }\n}\n", sandbox.Options{})
	cfg := &config.Config{Dir: t.TempDir(), Service: config.Service{Environment: "test", Sandbox: "missing.hcl", APIKeyEnv: "PF_KEY"}}
	svc, err := backend.Connect(cfg, backend.ServiceOptions{Getenv: env(map[string]string{"PUSHFORM_BASE_URL": base, "PF_KEY": "k-test"})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if svc.Embedded {
		t.Error("PUSHFORM_BASE_URL started the embedded sandbox")
	}
	ids, err := svc.Recipients(context.Background())
	if err != nil || !slices.Equal(ids, []string{"zed"}) {
		t.Errorf("recipients = %v, %v; want [zed] from the service at PUSHFORM_BASE_URL", ids, err)
	}
}

func TestDiagError(t *testing.T) {
	at := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 7, Column: 3}}
	for _, tt := range []struct {
		name  string
		diags hcl.Diagnostics
		want  string
	}{
		{"summary only", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad"}}, "Bad"},
		{"detail and place", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad", Detail: "why", Subject: at}}, "main.hcl:7: Bad: why"},
		{"warnings left out", hcl.Diagnostics{
			{Severity: hcl.DiagWarning, Summary: "Careful"},
			{Severity: hcl.DiagError, Summary: "One"},
			{Severity: hcl.DiagError, Summary: "Two", Subject: at},
		}, "One; main.hcl:7: Two"},
	} {
		if got := backend.DiagError(tt.diags).Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestJoinIDs: the chunks come out as one list, in order, and the chunk
// slices are dropped.
func TestJoinIDs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		chunks [][]string
	}{
		{"none", nil},
		{"one", [][]string{{"a", "b"}}},
		{"several, one empty", [][]string{{"a"}, {}, {"b", "c"}, {"d"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, c := range tt.chunks {
				want = append(want, c...)
			}
			got := backend.JoinIDs(tt.chunks, len(want))
			if !slices.Equal(got, want) || len(got) != len(want) {
				t.Errorf("JoinIDs = %q, want %q", got, want)
			}
			for i, c := range tt.chunks {
				if c != nil {
					t.Errorf("chunk %d kept", i)
				}
			}
		})
	}
}
