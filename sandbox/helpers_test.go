package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// conformanceSeed is the population most tests use.
const conformanceSeed = `
api_key "k-test" { environment = "test" }
api_key "k-prod" { environment = "production" }
api_key "k-legacy" {}                       # spec 5.4: a production key

user "alice" {
  device "alice-phone" {
    environment   = "production"
    shell_version = "4.300"
    last_seen     = "2026-11-01T10:00:00Z"
  }
  device "alice-test-phone" {
    environment = "test"
    last_seen   = "2026-10-01T08:00:00Z"
  }
}
user "bob" {                                # prod only, token lost
  device "bob-phone" {
    environment = "production"
    push_token  = false
    last_seen   = "2026-09-15T12:30:00Z"
  }
}
user "carol" {                              # test, no permission
  device "carol-phone" {
    environment = "test"
    permission  = false
  }
}
user "dave" {                               # test, offline
  device "dave-phone" {
    environment = "test"
    online      = false
  }
}
user "erin" {                               # test, one device fails, one works
  device "erin-broken" {
    environment = "test"
    fail        = "InvalidRegistration"
  }
  device "erin-ok" { environment = "test" }
}
user "frank" {                              # test, every device fails
  device "frank-phone" {
    environment = "test"
    fail        = "DeviceTokenNotForTopic"
  }
}
user "gina" {}                              # no device at all

device "kiosk-1" { environment = "test" }
device "kiosk-prod" { environment = "production" }

topic "deals" { devices = ["alice-phone", "alice-test-phone", "kiosk-1", "kiosk-prod"] }
topic "news" { devices = ["kiosk-1", "carol-phone"] }
topic "broken" { devices = ["frank-phone"] }

user_range "u%04d" {
  count       = 2500
  device      = "d%04d"
  environment = "test"
}
`

func mustSeed(t testing.TB, src string) *Seed {
	t.Helper()
	seed, diags := ParseSeed("seed.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("seed: %s", diags.Error())
	}
	return seed
}

// start runs a sandbox on loopback for the test.
func start(t testing.TB, src string, opts Options) (*Server, *client) {
	t.Helper()
	s := New(mustSeed(t, src), opts)
	return s, serve(t, s)
}

// serve runs s on loopback for the test.
func serve(t testing.TB, s *Server) *client {
	t.Helper()
	base, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return &client{t: t, base: base, root: strings.TrimSuffix(base, "/v1")}
}

type client struct {
	t    testing.TB
	base string // http://ADDR/v1
	root string // http://ADDR
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
}

func (c *client) do(method, url, key, contentType string, body []byte) response {
	c.t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func (c *client) send(key, body string) response {
	c.t.Helper()
	return c.do(http.MethodPost, c.base+"/push-notifications/send", key, "application/json", []byte(body))
}

func (c *client) recipients(key, query string) response {
	c.t.Helper()
	return c.do(http.MethodGet, c.base+"/push-notifications/recipients"+query, key, "application/json", nil)
}

func (c *client) device(id string) DeviceView {
	c.t.Helper()
	r := c.do(http.MethodGet, c.root+"/_sandbox/devices/"+id, "", "", nil)
	if r.status != http.StatusOK {
		c.t.Fatalf("device %s: %d %s", id, r.status, r.body)
	}
	var v DeviceView
	r.json(c.t, &v)
	return v
}

func (c *client) patch(id, body string) response {
	c.t.Helper()
	return c.do(http.MethodPatch, c.root+"/_sandbox/devices/"+id, "", "application/json", []byte(body))
}

// result is a results entry, decoded loosely.
type result struct {
	UserID           string   `json:"userId,omitempty"`
	DeviceID         string   `json:"deviceId,omitempty"`
	Topics           []string `json:"topics,omitempty"`
	Status           string   `json:"status"`
	DeviceCount      *int     `json:"deviceCount,omitempty"`
	Reason           string   `json:"reason,omitempty"`
	Message          string   `json:"message,omitempty"`
	UnreachableSince string   `json:"unreachableSince,omitempty"`
}

func (r response) results(t testing.TB) []result {
	t.Helper()
	var out struct {
		Results []result `json:"results"`
	}
	r.json(t, &out)
	return out.Results
}

var requestIDPattern = regexp.MustCompile(`^req-[0-9a-f]{24}$`)

func checkRequestID(t testing.TB, r response) {
	t.Helper()
	if id := r.header.Get("x-request-id"); !requestIDPattern.MatchString(id) {
		t.Errorf("status %d: x-request-id %q", r.status, id)
	}
}

func intp(n int) *int { return &n }
