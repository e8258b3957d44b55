package sandbox

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// issueExample is the seed of issue 2, verbatim.
const issueExample = `api_key "k-test" { environment = "test" }
api_key "k-prod" { environment = "production" }
user "alice" {
  device "alice-phone" {
    environment   = "production" # which app the device runs
    push_token    = true         # default true; false = uninstalled / notifications off
    permission    = true         # default true: user granted notification permission
    online        = true         # default true; offline devices keep only the newest per tag
    shell_version = "4.300"
    fail          = ""           # non-empty: every delivery to this device fails with this message
    last_seen     = "2026-11-01T10:00:00Z" # optional: reported as unreachableSince when skipped
  }
}
device "kiosk-1" { environment = "test" }      # a device with no signed-in user
topic "deals" { devices = ["alice-phone", "kiosk-1"] }
`

func TestParseSeedExample(t *testing.T) {
	seed := mustSeed(t, issueExample)
	want := &Seed{
		APIKeys: []APIKey{{Key: "k-test", Environment: "test"}, {Key: "k-prod", Environment: "production"}},
		Users: []User{{ID: "alice", Devices: []Device{{
			ID: "alice-phone", Environment: "production", PushToken: true, Permission: true, Online: true,
			ShellVersion: "4.300", LastSeen: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		}}}},
		Devices: []Device{{ID: "kiosk-1", Environment: "test", PushToken: true, Permission: true, Online: true}},
		Topics:  []Topic{{Name: "deals", Devices: []string{"alice-phone", "kiosk-1"}}},
	}
	if seed.Users[0].DeclRange.Start.Line != 3 || seed.Topics[0].DeclRange.Start.Line != 15 {
		t.Errorf("ranges: %v %v", seed.Users[0].DeclRange, seed.Topics[0].DeclRange)
	}
	clearRanges(seed)
	if !reflect.DeepEqual(seed, want) {
		t.Errorf("seed\n got %+v\nwant %+v", seed, want)
	}
}

// clearRanges zeroes the source positions, to compare seeds by value.
func clearRanges(s *Seed) {
	for i := range s.APIKeys {
		s.APIKeys[i].DeclRange = hcl.Range{}
	}
	for i := range s.Users {
		s.Users[i].DeclRange = hcl.Range{}
		for j := range s.Users[i].Devices {
			s.Users[i].Devices[j].DeclRange = hcl.Range{}
		}
	}
	for i := range s.Devices {
		s.Devices[i].DeclRange = hcl.Range{}
	}
	for i := range s.Topics {
		s.Topics[i].DeclRange = hcl.Range{}
		s.Topics[i].deviceRanges = nil
	}
	for i := range s.UserRanges {
		s.UserRanges[i].DeclRange = hcl.Range{}
	}
}

func TestSeedDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string // "LINE: summary" of each error, in order
	}{
		{"unknown attribute", `device "d" {
  environment = "test"
  colour      = "red"
}`, []string{"3: Unsupported argument"}},
		{"a broken device is still known to topics", `device "d" {
  environment = "staging"
  colour      = "red"
}
topic "t" { devices = ["d"] }`, []string{"3: Unsupported argument", "2: Invalid environment"}},
		{"unknown block", `group "g" {}`, []string{"1: Unsupported block type"}},
		{"bad environment", `api_key "k" { environment = "staging" }
device "d" { environment = "Test" }`, []string{"1: Invalid environment", "2: Invalid environment"}},
		{"missing environment", `device "d" {}`, []string{"1: Missing required argument"}},
		{"wrong type", `device "d" {
  environment = "test"
  online      = "sometimes"
}`, []string{"3: Invalid value"}},
		{"device ids duplicated", `user "a" {
  device "d1" { environment = "test" }
}
user "b" {
  device "d1" { environment = "test" }
}
device "d1" { environment = "production" }`, []string{"5: Duplicated device id", "7: Duplicated device id"}},
		{"user duplicated", `user "a" {}
user "a" {}`, []string{"2: Duplicated user id"}},
		{"topic naming an unknown device", `device "d1" { environment = "test" }
topic "t" {
  devices = [
    "d1",
    "d2",
  ]
}`, []string{"5: Unknown device in topic"}},
		{"topic duplicated", `topic "t" { devices = [] }
topic "t" { devices = [] }`, []string{"2: Duplicated topic"}},
		{"bad last_seen", `device "d" {
  environment = "test"
  last_seen   = "yesterday"
}`, []string{"3: Invalid last_seen"}},
		{"empty label", `user "" {}`, []string{"1: Empty user id"}},
		{"key duplicated", `api_key "k" {}
api_key "k" { environment = "test" }`, []string{"2: Duplicated API key"}},
		{"range format", `user_range "user-%s" {
  count       = 3
  device      = "d%5d"
  environment = "test"
}`, []string{"1: Invalid user_range format", "3: Invalid device format"}},
		{"range count", `user_range "u%d" {
  count       = 1.5
  device      = "d%d"
  environment = "test"
}
user_range "v%d" {
  count       = -1
  device      = "e%d"
  environment = "test"
}`, []string{"2: Invalid count", "7: Invalid count"}},
		{"range missing attributes", `user_range "u%d" {}`,
			[]string{"1: Missing required argument", "1: Missing required argument", "1: Missing required argument"}},
		{"ranges overlap", `user_range "u%d" {
  count       = 100
  device      = "d%d"
  environment = "test"
}
user_range "u%02d" {
  count       = 100
  device      = "x%d"
  environment = "test"
}`, []string{"6: Duplicated user id"}},
		{"explicit ids inside a range", `user_range "u%03d" {
  count       = 10
  device      = "d%03d"
  environment = "test"
}
user "u005" {}
device "d009" { environment = "test" }
device "d010" { environment = "test" }`, []string{"6: Duplicated user id", "7: Duplicated device id"}},
		{"syntax error", `user "a" {`, []string{"1: Unclosed configuration block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed, diags := ParseSeed("seed.hcl", []byte(tc.src))
			if seed != nil {
				t.Error("a seed with errors was returned")
			}
			var got []string
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				if d.Subject == nil || d.Subject.Filename != "seed.hcl" {
					t.Errorf("diagnostic without file: %v", d)
					continue
				}
				got = append(got, fmt.Sprintf("%d: %s", d.Subject.Start.Line, d.Summary))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("diagnostics %q, want %q\n%s", got, tc.want, diags.Error())
			}
		})
	}
}

func TestLoadSeedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sandbox.hcl")
	os.WriteFile(p, []byte(issueExample), 0o600)
	if _, diags := LoadSeedFile(p); diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, diags := LoadSeedFile(filepath.Join(dir, "none.hcl")); !diags.HasErrors() || !strings.Contains(diags.Error(), "none.hcl") {
		t.Errorf("missing file: %v", diags)
	}
}

func TestIDFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		ok     bool
		i      int
		id     string
	}{
		{"u%07d", true, 42, "u0000042"},
		{"u%07d", true, 12345678, "u12345678"},
		{"%d", true, 0, "0"},
		{"user-%d@shop", true, 15, "user-15@shop"},
		{"100%%-%03d", true, 7, "100%-007"},
		{"u%s", false, 0, ""},
		{"u%5d", false, 0, ""},
		{"u%0d", false, 0, ""},
		{"u%d%d", false, 0, ""},
		{"plain", false, 0, ""},
		{"u%", false, 0, ""},
		{"u%019d", false, 0, ""},
	} {
		f, err := parseIDFormat(tc.format)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v", tc.format, err)
			continue
		}
		if !tc.ok {
			continue
		}
		if got := f.id(tc.i); got != tc.id {
			t.Errorf("%q(%d) = %q, want %q", tc.format, tc.i, got, tc.id)
		}
		if i, ok := f.parse(tc.id); !ok || i != tc.i {
			t.Errorf("%q parse %q = %d %v", tc.format, tc.id, i, ok)
		}
	}
	f, _ := parseIDFormat("u%04d")
	for _, id := range []string{"u", "u123", "u01234", "x0001", "u00a1", "u-001", "u00001", "u0001 "} {
		if i, ok := f.parse(id); ok {
			t.Errorf("%q parsed as %d", id, i)
		}
	}
	// Every id round-trips, and no other string parses.
	for i := range 20000 {
		if j, ok := f.parse(f.id(i)); !ok || j != i {
			t.Fatalf("%d: %d %v", i, j, ok)
		}
	}
}

func TestUserRange(t *testing.T) {
	src := `
api_key "k" { environment = "test" }
user_range "u%07d" {        # user ids: the label formatted with index 0..count-1
  count       = 1000000
  device      = "d%07d"     # one device per user, id formatted with the same index
  environment = "test"      # push_token, permission, online default to true
}
user_range "offline-%d" {
  count       = 3
  device      = "offline-dev-%d"
  environment = "test"
  online      = false
  permission  = false
  last_seen   = "2026-01-02T03:04:05Z"
}
user "alice" {
  device "a1" { environment = "test" }
}
topic "some" { devices = ["d0000007", "a1", "offline-dev-2"] }
`
	// How fast it seeds is BenchmarkSeedMillion's business.
	s, c := start(t, src, Options{})
	r := c.send("k", `[{"userIds":["u0000000","u0999999","u1000000","u000001","offline-2"],"title":"t","body":"b"},`+
		`{"deviceIds":["d0000005","offline-dev-0"],"badgeCount":3},{"topics":["some"],"title":"t","body":"b"}]`)
	want := []result{
		{UserID: "u0000000", Status: "delivered", DeviceCount: intp(1)},
		{UserID: "u0999999", Status: "delivered", DeviceCount: intp(1)},
		{UserID: "u1000000", Status: "skipped", Reason: "no_active_device"},
		{UserID: "u000001", Status: "skipped", Reason: "no_active_device"},
		{UserID: "offline-2", Status: "delivered", DeviceCount: intp(1)},
		{DeviceID: "d0000005", Status: "delivered", DeviceCount: intp(1)},
		{DeviceID: "offline-dev-0", Status: "delivered", DeviceCount: intp(1)},
		{Topics: []string{"some"}, Status: "delivered", DeviceCount: intp(3)},
	}
	if r.status != http.StatusOK || !reflect.DeepEqual(r.results(t), want) {
		t.Errorf("%d %s", r.status, r.body)
	}
	if v := c.device("d0999999"); v.UserID != "u0999999" || v.Received != 1 || v.Environment != "test" {
		t.Errorf("d0999999: %+v", v)
	}
	if v := c.device("offline-dev-2"); v.Online || len(v.Pending) != 2 || v.UserID != "offline-2" {
		t.Errorf("offline-dev-2: %+v", v)
	}
	// Range devices that lost their token are skipped with the range's last_seen.
	s.Patch("offline-dev-1", DevicePatch{PushToken: ptr(false)})
	r = c.send("k", `[{"userIds":["offline-1"],"badgeCount":1}]`)
	if got := r.results(t)[0]; got.UnreachableSince != "2026-01-02T03:04:05Z" {
		t.Errorf("offline-1: %+v", got)
	}
	var ids []string
	c.recipients("k", "").json(t, &ids)
	if len(ids) != 1+1000000 || ids[0] != "alice" || ids[1] != "u0000000" || ids[len(ids)-1] != "u0999999" {
		t.Errorf("%d recipients, first %v", len(ids), ids[:3])
	}
}

func TestNewToleratesAHandBuiltSeed(t *testing.T) {
	seed := &Seed{
		APIKeys: []APIKey{{Key: "k", Environment: "test"}, {Key: "k", Environment: "production"}, {Key: "bad", Environment: "staging"}},
		Users: []User{
			{ID: "a", Devices: []Device{{ID: "d1", Environment: "test", PushToken: true}, {ID: "d1", Environment: "test"}}},
			{ID: "a"},
			{ID: "u5", Devices: []Device{{ID: "x", Environment: "test", PushToken: true}}}, // clashes with the range
		},
		Devices:    []Device{{ID: "d3", Environment: "test", PushToken: true}},
		Topics:     []Topic{{Name: "t", Devices: []string{"d1", "ghost", "r2"}}},
		UserRanges: []UserRange{{UserFormat: "u%d", DeviceFormat: "r%d", Count: 10, Environment: "test", PushToken: true}, {UserFormat: "bad", Count: 5}},
	}
	s := New(seed, Options{})
	if k, ok := s.APIKeyFor("test"); !ok || k != "k" {
		t.Errorf("APIKeyFor(test) = %q %v", k, ok)
	}
	if _, ok := s.APIKeyFor("production"); ok {
		t.Error("a duplicated key was kept")
	}
	ns, _ := decodeSendRequest([]byte(`[{"userIds":["a","u5"],"badgeCount":1},{"deviceIds":["d3","r9"],"badgeCount":1},{"topics":["t"],"badgeCount":1}]`))
	res := s.process(ns, envTest, "r")
	want := `{"results":[{"userId":"a","status":"delivered","deviceCount":1},{"userId":"u5","status":"delivered","deviceCount":1},` +
		`{"deviceId":"d3","status":"delivered","deviceCount":1},{"deviceId":"r9","status":"delivered","deviceCount":1},` +
		`{"topics":["t"],"status":"delivered","deviceCount":2}]}`
	if string(res.body) != want {
		t.Errorf("got  %s\nwant %s", res.body, want)
	}
	if v, ok := s.Device("r5"); !ok || v.UserID != "u5" {
		t.Errorf("u5 should be the range's: %+v", v)
	}
}
