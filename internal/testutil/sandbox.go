package testutil

import (
	"fmt"
	"testing"

	"pushform/sandbox"
)

// StartSandbox serves a sandbox seeded from seed (the seed file syntax)
// on loopback until the test ends, and returns its API base URL
// (http://ADDR/v1) and the server. The sandbox's own tests cannot use it:
// they would import themselves.
func StartSandbox(t testing.TB, seed string, opts sandbox.Options) (string, *sandbox.Server) {
	t.Helper()
	sd, diags := sandbox.ParseSeed("seed.hcl", []byte(seed))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	srv := sandbox.New(sd, opts)
	base, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	return base, srv
}

// ServiceAt is a service block for environment "test" that sends to base
// with the API key in PF_KEY.
func ServiceAt(base string) string {
	return fmt.Sprintf("service {\n  base_url    = %q\n  api_key_env = \"PF_KEY\"\n  environment = \"test\"\n}\n", base)
}
