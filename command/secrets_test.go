package command

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"pushform/secret"
)

// TestLoadConfigLearnsSecrets: once the configuration is loaded, the run's
// secrets hold the API key and the database password, so every message the
// run prints is redacted of both, whatever printed it.
func TestLoadConfigLearnsSecrets(t *testing.T) {
	const key, pw = "k-test-CANARY-0123456789", "pg-canary p@ss/w0rd"
	dir := t.TempDir()
	src := "service {\n  base_url    = \"https://push.example.com/v1\"\n  api_key_env = \"PF_KEY\"\n  environment = \"test\"\n}\nbackend \"pg\" {}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PF_KEY": key, "PUSHFORM_PG_CONN_STR": "postgres://u:pg-canary%20p%40ss%2Fw0rd@db/app"}
	m := &Meta{Env: Env{Stdout: io.Discard, Stderr: io.Discard, Dir: dir, Getenv: func(k string) string { return env[k] }}, secrets: secret.NewSet()}
	if _, diags := m.loadConfig(m.newLoader(), configFlags{}, nil); diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, s := range []string{key, pw} {
		if !m.secrets.Contains("failed: " + s) {
			t.Errorf("the run's secrets do not hold %q", s)
		}
	}
}
