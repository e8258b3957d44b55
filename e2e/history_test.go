package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestHistoryAndPrune answers "what did alice receive?" with the real
// binary after real applies, on both backends: a notification sent, its
// block removed (forgotten), another sent; then prunes the forgotten
// address's records.
func TestHistoryAndPrune(t *testing.T) {
	for _, backend := range []string{"local", "pg"} {
		t.Run(backend, func(t *testing.T) {
			sb := startSandbox(t, seed)
			w := newWorkspace(t, sb, `
notification "welcome" {
  user_ids = ["alice", "bob"]
  title    = "Welcome"
  body     = "Glad you are here"
}
`)
			if backend == "pg" {
				w.usePG(newPGState(t))
			}
			w.apply()
			w.write(`
notification "coupon" {
  user_ids = ["alice"]
  title    = "Coupon"
  body     = "Your 10% coupon"
  tag      = "coupon-10"
}
`, sb)
			w.apply()

			var doc struct {
				Known      bool `json:"known"`
				Deliveries []struct {
					Address     string     `json:"address"`
					Forgotten   bool       `json:"forgotten"`
					ForgottenAt *time.Time `json:"forgotten_at"`
					Content     struct{ Title, Tag string }
					Outcome     string `json:"outcome"`
					RequestID   string `json:"request_id"`
				} `json:"deliveries"`
			}
			r := w.mustRun(0, "history", "--user", "alice", "--json")
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			inbox := sb.device("alice-phone").Inbox
			if !doc.Known || len(doc.Deliveries) != 2 || len(inbox) != 2 {
				t.Fatalf("history %+v, inbox %+v", doc, inbox)
			}
			for i, want := range []struct {
				addr, title string
				forgotten   bool
			}{{"notification.welcome", "Welcome", true}, {"notification.coupon", "Coupon", false}} {
				d := doc.Deliveries[i]
				if d.Address != want.addr || d.Content.Title != want.title || d.Forgotten != want.forgotten ||
					(d.ForgottenAt != nil) != want.forgotten || d.Outcome != "delivered" || d.RequestID != inbox[i].RequestID {
					t.Errorf("delivery %d = %+v; want %+v with the request id alice-phone shows, %q", i, d, want, inbox[i].RequestID)
				}
			}
			r = w.mustRun(0, "history", "notification.welcome")
			if !strings.Contains(r.stdout, "notification.welcome: 1 apply (forgotten at ") || !strings.Contains(r.stdout, "forgotten: 2 targets out of the configuration's view") {
				t.Errorf("history notification.welcome:\n%s", r.stdout)
			}
			if r := w.mustRun(0, "history", "--user", "zed"); !strings.Contains(r.stdout, `The ledger has no record of user "zed"`) {
				t.Errorf("history --user zed:\n%s", r.stdout)
			}
			tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
			if r := w.mustRun(0, "history", "--user", "alice", "--since", tomorrow); !strings.Contains(r.stdout, `No record of user "alice" since `) {
				t.Errorf("history --since tomorrow:\n%s", r.stdout)
			}
			if r := w.mustRun(1, "history", "--user", "alice", "--until", "soon"); !strings.Contains(r.stderr, `--until "soon" is neither`) {
				t.Errorf("bad --until:\n%s", r.stderr)
			}

			if r := w.mustRun(1, "state", "prune"); !strings.Contains(r.stderr, "state prune needs --before TIME") {
				t.Errorf("prune without --before:\n%s", r.stderr)
			}
			// alice's and bob's records of the forgotten welcome: a time
			// in the future, and records younger than a day, need --force.
			if r := w.mustRun(1, "state", "prune", "--before", tomorrow); !strings.Contains(r.stderr, "is in the future") {
				t.Errorf("prune --before tomorrow:\n%s", r.stderr)
			}
			if r := w.mustRun(1, "state", "prune", "--before", time.Now().UTC().Format(time.RFC3339Nano)); !strings.Contains(r.stderr, "would drop 2 ledger records younger than a day") {
				t.Errorf("prune --before now:\n%s", r.stderr)
			}
			if r := w.mustRun(0, "state", "prune", "--before", tomorrow, "--force"); !strings.Contains(r.stdout, "Dropped 2 ledger records older than ") {
				t.Errorf("prune:\n%s%s", r.stdout, r.stderr)
			}
			r = w.mustRun(0, "history", "--user", "alice")
			if !strings.Contains(r.stdout, `User "alice": 1 record under 1 address`) || strings.Contains(r.stdout, "Welcome") {
				t.Errorf("history after prune:\n%s", r.stdout)
			}
			// The addresses' view is whole: nothing to send.
			if r := w.mustRun(0, "plan", "--detailed-exitcode"); !strings.Contains(r.stdout, "No changes.") {
				t.Errorf("plan after prune:\n%s", r.stdout)
			}
		})
	}
}
