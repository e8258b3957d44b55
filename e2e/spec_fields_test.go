package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/state"
)

// fieldsSeed is 60 users in one request's reach: u00000-u00054 with a
// device each, gone0-gone3 whose only device lost its token (skipped,
// unreachable since 2026-11-01 11:00 UTC), and broken, whose device fails.
func fieldsSeed() string {
	var b strings.Builder
	b.WriteString(rangeSeed(55))
	for i := range 4 {
		fmt.Fprintf(&b, "user \"gone%d\" {\n  device \"gone%d-phone\" {\n    environment = \"test\"\n    push_token  = false\n    last_seen   = \"2026-11-01T11:00:00Z\"\n  }\n}\n", i, i)
	}
	b.WriteString("user \"broken\" {\n  device \"broken-phone\" {\n    environment = \"test\"\n    fail        = \"APNs: BadDeviceToken\"\n  }\n}\n")
	return b.String()
}

const fieldsCampaign = `
notification "sale" {
  user_ids = concat([for i in range(55) : format("u%05d", i)], ["gone0", "gone1", "gone2", "gone3", "broken"])
  title    = "Sale"
  body     = "20% off"
  tag      = "sale"
}
`

// TestSpecOptionalFields: one answer of 60 results whose optional fields
// come in forms the spec leaves open: unreachableSince as PostgreSQL
// prints it, or with a space and Z, is read; in words, or a deviceCount
// in words, is kept as served. Either way every outcome stands (55
// delivered, 4 skipped, 1 failed), the failure is the only thing the next
// apply sends, and no device is shown anything twice.
func TestSpecOptionalFields(t *testing.T) {
	since := time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		flags []string
		read  bool // unreachableSince and deviceCount are read
	}{
		{"pg", []string{"--since-format", "pg"}, true},
		{"space-z", []string{"--since-format", "space-z"}, true},
		{"words", []string{"--since-format", "words", "--device-count-format", "words"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := startSandbox(t, fieldsSeed(), tc.flags...)
			w := newWorkspace(t, sb, fieldsCampaign)
			w.env = append(w.env, "PUSHFORM_LOG=debug")
			r := w.mustRun(1, "apply", "--auto-approve") // the failed target
			if !strings.Contains(r.stdout, "55 delivered, 4 skipped, 1 failed, 0 unknown") {
				t.Fatalf("the outcomes do not stand:\n%s\n%s", r.stdout, r.stderr)
			}
			if got := strings.Contains(r.stderr, "unreadable_fields=59"); got == tc.read {
				t.Errorf("the debug log says of the unreadable fields (want them: %v):\n%s", !tc.read, r.stderr)
			}
			st := w.readState().Messages["notification.sale"]
			for id, tg := range st.Targets {
				switch {
				case id == "broken":
					if tg.Outcome != state.Failed || tg.Message != "APNs: BadDeviceToken" {
						t.Errorf("%s: %+v", id, tg)
					}
				case strings.HasPrefix(id, "gone"):
					if tg.Outcome != state.Skipped {
						t.Errorf("%s: %+v", id, tg)
					} else if tc.read && (tg.UnreachableSince == nil || !tg.UnreachableSince.Equal(since) || tg.Unreadable != "") {
						t.Errorf("%s: %+v, want unreachable since %s", id, tg, since)
					} else if !tc.read && (tg.UnreachableSince != nil || tg.Unreadable != `unreachableSince: "1 November 2026, 11:00"`) {
						t.Errorf("%s: %+v, want the unreadable time kept as served", id, tg)
					}
				default:
					if tg.Outcome != state.Delivered {
						t.Errorf("%s: %+v", id, tg)
					} else if tc.read && (tg.DeviceCount != 1 || tg.Unreadable != "") {
						t.Errorf("%s: %+v", id, tg)
					} else if !tc.read && (tg.DeviceCount != -1 || tg.Unreadable != `deviceCount: "1 device"`) {
						t.Errorf("%s: %+v, want the unreadable count kept as served", id, tg)
					}
				}
			}
			if !tc.read {
				h := w.mustRun(0, "history", "--user", "gone0", "--json")
				var doc struct {
					Deliveries []struct {
						Outcome, Unreadable string
					}
				}
				if err := json.Unmarshal([]byte(h.stdout), &doc); err != nil || len(doc.Deliveries) != 1 || doc.Deliveries[0].Unreadable == "" {
					t.Errorf("history --json: %v\n%s", err, h.stdout)
				}
				if h := w.mustRun(0, "history", "--user", "gone0"); !strings.Contains(h.stdout, `unreadable: "unreachableSince:`) {
					t.Errorf("history does not show the unreadable field:\n%s", h.stdout)
				}
			}
			before := sb.stats()
			r = w.mustRun(1, "apply", "--auto-approve", "--json")
			for _, e := range jsonEvents(t, r.stdout) {
				if e["type"] == "request" && e["targets"] != float64(1) {
					t.Errorf("the next apply sends more than the failed target: %v", e)
				}
			}
			if after := sb.stats(); after.Deliveries != before.Deliveries {
				t.Errorf("the next apply delivered %d more", after.Deliveries-before.Deliveries)
			}
			for i := range 55 {
				if d := sb.device(fmt.Sprintf("d%05d", i)); d.Received != 1 {
					t.Fatalf("d%05d shows %d notifications, want 1", i, d.Received)
				}
			}
		})
	}
}
