package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONOfAConfigurationThatDoesNotLoad: plan --json and apply --json
// of a configuration with an error print its diagnostics as JSON on
// stdout (apply: after its version line), exit 1, and send nothing.
func TestJSONOfAConfigurationThatDoesNotLoad(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
badge "b" {
  device_ids  = ["alice-phone"]
  badge_count = -1
}
`)
	before := sb.stats()
	type diag struct {
		Type        string `json:"type"`
		Valid       bool   `json:"valid"`
		ErrorCount  int    `json:"error_count"`
		Diagnostics []struct {
			Summary  string `json:"summary"`
			Filename string `json:"filename"`
			Line     int    `json:"line"`
		} `json:"diagnostics"`
	}
	for _, args := range [][]string{{"plan", "--json"}, {"apply", "--json", "--auto-approve"}} {
		r := w.mustRun(1, args...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if args[0] == "apply" {
			if len(lines) != 2 || lines[0] != `{"type":"version","format_version":"1"}` {
				t.Fatalf("%v: stdout\n%s", args, r.stdout)
			}
			lines = lines[1:]
		}
		var d diag
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &d) != nil {
			t.Fatalf("%v: stdout\n%s", args, r.stdout)
		}
		if d.Valid || d.ErrorCount != 1 || len(d.Diagnostics) != 1 || d.Diagnostics[0].Summary != "Invalid badge_count" ||
			d.Diagnostics[0].Filename != "main.hcl" || d.Diagnostics[0].Line != 10 || (args[0] == "apply") != (d.Type == "diagnostics") {
			t.Errorf("%v: %+v", args, d)
		}
		if !strings.Contains(r.stderr, "Error: Invalid badge_count") {
			t.Errorf("%v: stderr\n%s", args, r.stderr)
		}
	}
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Errorf("%d requests sent", after.SendRequests-before.SendRequests)
	}
}
