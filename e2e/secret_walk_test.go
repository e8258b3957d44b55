package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One secret check (issue 37): the API key in any evaluated string of the
// configuration (a variant, a salt, test devices, a time-zone map) is
// refused before anything is sent, stored or printed, with the file and
// line of the attribute.
func TestSecretWalkRefuses(t *testing.T) {
	sb := startSandbox(t, seed, "--quiet")
	const variants = `
notification "n" {
  user_ids = ["alice", "bob"]
  title    = "Spring"
  body     = "Sale"
  variant "a" {
    weight = 1
    %s
  }
  variant "b" {
    weight = 1
  }
}
`
	cases := []struct {
		name, config, attr, line string
		args                     []string // the command that would have used it
	}{
		{"variant title", strings.Replace(variants, "%s", `title = var.k`, 1), `variant "a".title`, "main.hcl line 15", nil},
		{"variant body", strings.Replace(variants, "%s", `body = "your key: ${var.k}"`, 1), `variant "a".body`, "main.hcl line 15", nil},
		{"variant open_to_url", strings.Replace(variants, "%s", `open_to_url = "https://shop.example.com/?k=${var.k}"`, 1), `variant "a".open_to_url`, "main.hcl line 15", nil},
		{"salt", `
notification "n" {
  user_ids = ["alice", "bob"]
  title    = "Spring"
  body     = "Sale"
  salt     = var.k
  rollout {
    stages = ["50%", "100%"]
    wait   = "1h"
  }
}
`, "salt", "main.hcl line 13", nil},
		{"campaign test_devices", `
campaign "c" {
  test_devices = ["alice-phone", var.k]
  notification "n" {
    user_ids = ["alice"]
    title    = "Spring"
    body     = "Sale"
  }
}
`, "test_devices", "main.hcl line 10", []string{"test-send", "campaign.c.notification.n"}},
		{"time zones", `
time_zones {
  by_user = { alice = "UTC", (var.k) = "UTC" }
}
notification "n" {
  user_ids = ["alice"]
  title    = "Spring"
  body     = "Sale"
}
`, "by_user", "main.hcl line 10", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t, sb, "variable \"k\" { default = \"\" }\n"+tc.config)
			w.env = append(w.env, "PUSHFORM_VAR_k="+testKey)
			before := sb.stats()
			commands := [][]string{{"validate"}, {"plan"}, {"plan", "--json"}, {"apply", "--auto-approve"}}
			if tc.args != nil {
				commands = append(commands, tc.args)
			}
			for _, args := range commands {
				r := w.mustRun(1, args...) // run fails the test if the key is printed
				out := r.stderr + r.stdout
				if !strings.Contains(out, "The API key (PF_KEY) appears in "+tc.attr) || args[len(args)-1] != "--json" && !strings.Contains(out, tc.line) {
					t.Errorf("%s: the error does not name %s at %s:\n%s", strings.Join(args, " "), tc.attr, tc.line, out)
				}
			}
			if st := sb.stats(); st.SendRequests != before.SendRequests {
				t.Errorf("%d requests sent", st.SendRequests-before.SendRequests)
			}
			if _, err := os.Stat(filepath.Join(w.dir, "pushform.state")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a state was written: %v", err)
			}
		})
	}
	for _, dev := range []string{"alice-phone", "bob-phone"} {
		if d := sb.device(dev); d.Received != 0 {
			t.Errorf("%s was shown %d notifications", dev, d.Received)
		}
	}
}

// TestSecretWalkServiceTestDevices: the key in the service block's
// test_devices is refused as in any other block: test-send neither prints
// it nor records it in the ledger.
func TestSecretWalkServiceTestDevices(t *testing.T) {
	sb := startSandbox(t, seed, "--quiet")
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "PF_KEY="+testKey, "PUSHFORM_VAR_k="+testKey, "NO_COLOR=1")}
	config := `variable "k" { default = "" }
service {
  base_url     = "` + sb.base + `"
  api_key_env  = "PF_KEY"
  environment  = "test"
  test_devices = ["alice-phone", var.k]
}
notification "n" {
  user_ids = ["alice"]
  title    = "Spring"
  body     = "Sale"
}
`
	if err := os.WriteFile(filepath.Join(w.dir, "main.hcl"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	r := w.mustRun(1, "test-send", "notification.n")
	if !strings.Contains(r.stderr, "The API key (PF_KEY) appears in test_devices") || !strings.Contains(r.stderr, "main.hcl line 6") {
		t.Errorf("test-send:\n%s", r.stderr)
	}
	if st := sb.stats(); st.SendRequests != 0 {
		t.Errorf("test-send sent %d requests", st.SendRequests)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pushform.state")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a state was written: %v", err)
	}
}
