package sandbox_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"pushform/sandbox"
)

// The embedded mode: seed, restore the devices of the last run, serve on
// a free loopback port with the seed's key, save the devices afterwards.
func ExampleServer_Start() {
	seed, diags := sandbox.ParseSeed("sandbox.hcl", []byte(`
api_key "k-test" { environment = "test" }
user "alice" {
  device "alice-phone" { environment = "test" }
}
`))
	if diags.HasErrors() {
		panic(diags)
	}
	dir, _ := filepath.Abs(".")
	devices := filepath.Join(dir, "testdata-not-written", sandbox.DefaultDevicesFile)
	s := sandbox.New(seed, sandbox.Options{})
	if err := s.LoadDevices(devices); err != nil { // a missing file is no error
		panic(err)
	}
	base, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer stop()
	key, _ := s.APIKeyFor("test")

	req, _ := http.NewRequest("POST", base+"/push-notifications/send",
		strings.NewReader(`[{"userIds":["alice"],"title":"Hi","body":"there"}]`))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	v, _ := s.Device("alice-phone")
	fmt.Println(resp.StatusCode, v.Received, v.Inbox[0].Title)
	// After the run, s.SaveDevices(devices) keeps them for the next one.

	// Output: 200 1 Hi
}
