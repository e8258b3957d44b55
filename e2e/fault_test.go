package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pushform/state"
)

// TestFaultyService applies a campaign of twice 20,000 user ids (84 requests) through a sandbox that
// fails 10% of send requests (half 503 before processing, half 500 after),
// drops 5% of connections (half before processing, half after) and admits
// 50 requests a second.
//
// Policy under test: apply is re-run until the plan has no changes, as a CI
// job would, and never with --retry-unknown. Tagged notifications and badges
// are retried through every ambiguous failure (the device replaces the
// copy), so each of their targets must end delivered. An untagged request
// whose answer was lost (a 500 after processing, a connection dropped after
// the request was written) leaves its targets unknown and held: the service
// may well have delivered them, and a second copy would show twice. Those
// are reported by the plan, and must show at most once.
func TestFaultyService(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: a 20,000-user campaign; skipped with -short")
	}
	sb := startSandbox(t, crashSeed, "--fail-rate", "0.1", "--drop-rate", "0.05", "--rate-limit", "50", "--fault-seed", "7", "--quiet")
	w := newWorkspace(t, sb, crashCampaign(2))

	// Every try that the sandbox faults or refuses (429) ends in exactly one
	// event: a retry, or the request's error. Its counters check the
	// events, run by run.
	type faultStats struct {
		SendRequests int `json:"sendRequests"`
		RateLimited  int `json:"rateLimited"`
		Faults       int `json:"faults"`
	}
	refusals := func() int {
		var st faultStats
		sb.get("/_sandbox/stats", &st)
		return st.Faults + st.RateLimited
	}

	// The first run streams JSON: every retry is an event saying why and
	// how long it waits.
	planned := w.planJSON().Summary["requests"]
	before := refusals()
	first := w.run("apply", "--auto-approve", "--json", "--parallelism", "20")
	if first.code != 0 && first.code != 1 {
		t.Fatalf("apply --json exited %d\n%s", first.code, first.stderr)
	}
	var retries, requests, responses, errorsSeen int
	var summary map[string]any
	for _, e := range jsonEvents(t, first.stdout) {
		switch e["type"] {
		case "retry", "wait": // a wait: a 429, which uses no try
			retries++
			if e["error"] == nil || e["error"] == "" || e["delay"] == nil || e["attempt"] == nil {
				t.Errorf("retry event without error, delay or attempt: %v", e)
			}
		case "request":
			requests++
		case "response":
			responses++
		case "error":
			errorsSeen++
			if e["error"] == nil || e["error"] == "" {
				t.Errorf("error event without the error: %v", e)
			}
		case "summary":
			summary = e
		}
	}
	if retries == 0 {
		t.Errorf("no retry event in a run through a faulty service:\n%.3000s", first.stdout)
	}
	if requests != planned || responses+errorsSeen != requests {
		t.Errorf("first run: %d requests started of %d planned, %d answered and %d failed: every planned request must start and end once",
			requests, planned, responses, errorsSeen)
	}
	if refused := refusals() - before; refused != retries+errorsSeen {
		t.Errorf("first run: the sandbox faulted or refused %d tries, but apply reported %d retries and %d failed requests", refused, retries, errorsSeen)
	}
	if summary == nil || summary["retries"] != float64(retries) || len(summary["errors"].([]any)) != errorsSeen || summary["requests"] != float64(responses) {
		t.Errorf("first run's summary %v does not match its %d retries, %d errors, %d responses", summary, retries, errorsSeen, responses)
	}
	if (first.code == 1) != (errorsSeen > 0) {
		t.Errorf("first run exited %d with %d failed requests", first.code, errorsSeen)
	}
	runs, humanRetries, humanErrors := 1, 0, 0
	for {
		p := w.planJSON()
		if p.Summary["requests"] == 0 {
			break
		}
		if runs == 6 {
			t.Fatalf("still %d requests to send after %d runs", p.Summary["requests"], runs)
		}
		before := refusals()
		r := w.run("apply", "--auto-approve", "--parallelism", "20")
		runs++
		if r.code != 0 && r.code != 1 {
			t.Fatalf("apply exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		shown, failed := strings.Count(r.stdout, "failed, retrying in")+strings.Count(r.stdout, "asks to slow down (429"), strings.Count(r.stderr, "Error: request ")
		if refused := refusals() - before; refused != shown+failed {
			t.Errorf("run %d: the sandbox faulted or refused %d tries, but apply printed %d retries and %d failed requests:\n%s\n%s", runs, refused, shown, failed, r.stdout, r.stderr)
		}
		humanRetries += shown
		humanErrors += failed
	}
	w.mustRun(0, "plan", "--detailed-exitcode")

	st := w.readState()
	targets := crashTargets(0, 1)
	ids := make([]string, 0, 20000)
	for i := range 20000 {
		ids = append(ids, fmt.Sprintf("d%05d", i))
	}
	devs := sb.devices(ids)
	var delivered, held, heldShown, dups int
	for _, ct := range targets {
		tg := st.Messages[ct.addr].Targets[ct.id]
		dev := devs[ct.device]
		shown := 0
		for _, e := range dev.Inbox {
			if ct.badge < 0 && e.Title == ct.title {
				shown++
			}
		}
		switch {
		case tg.Outcome == state.Delivered:
			delivered++
			if ct.badge >= 0 && (dev.Badge == nil || *dev.Badge != ct.badge) {
				t.Errorf("%s: badge delivered in state, device shows %v", ct.device, dev.Badge)
			} else if ct.badge < 0 && shown == 0 {
				t.Errorf("%s -> %s delivered in state, not on the device", ct.addr, ct.id)
			}
		case ct.tagged:
			t.Errorf("%s -> %s: tagged, outcome %s, want delivered", ct.addr, ct.id, tg.Outcome)
		case tg.Outcome == state.Unknown:
			held++
			if shown > 0 {
				heldShown++
			}
		default:
			t.Errorf("%s -> %s: outcome %q", ct.addr, ct.id, tg.Outcome)
		}
		if shown > 1 {
			dups++
			if dups < 10 {
				t.Errorf("%s shows %q %d times", ct.device, ct.title, shown)
			}
		}
	}
	for id, d := range devs {
		seen := map[string]bool{}
		for _, e := range d.Inbox {
			if e.Tag != "" && seen[e.Tag] {
				dups++
				t.Errorf("%s shows tag %s twice", id, e.Tag)
			}
			seen[e.Tag] = true
		}
	}
	held2 := 0
	for _, n := range jsonPlanHeld(t, w.mustRun(0, "plan", "--json").stdout) {
		held2 += n
	}
	if held2 != held {
		t.Errorf("the plan holds %d targets, the state has %d unknown", held2, held)
	}
	var stats faultStats
	sb.get("/_sandbox/stats", &stats)
	line := fmt.Sprintf("fault test: %d runs, %d retries (%d in the first run's JSON, %d printed after), %d requests failed for good (%d, %d), %d faults injected, %d answers 429; "+
		"%d targets delivered, %d untagged held as unknown (%d of them shown once, none twice), %d duplicates",
		runs, retries+humanRetries, retries, humanRetries, errorsSeen+humanErrors, errorsSeen, humanErrors, stats.Faults, stats.RateLimited, delivered, held, heldShown, dups)
	t.Log(line)
	fmt.Println(line)
	if stats.Faults+stats.RateLimited != retries+humanRetries+errorsSeen+humanErrors {
		t.Errorf("%d faults and 429s in all, %d retries and failed requests reported", stats.Faults+stats.RateLimited, retries+humanRetries+errorsSeen+humanErrors)
	}
	if tmps, _ := filepath.Glob(filepath.Join(w.dir, ".pushform.state.tmp-*")); len(tmps) > 0 {
		t.Errorf("temp files left: %v", tmps)
	}
}

// TestRetriesAreVisible checks that every retry is shown, in the human
// output and as a JSON event, and that the retry limits are flags. A gate
// in front of the sandbox refuses the second and third of the three
// requests of each run with 503 and Retry-After: 1, whatever their timing
// or order.
func TestRetriesAreVisible(t *testing.T) {
	sb := startSandbox(t, seed+`
user_range "r%04d" {
  count       = 1500
  device      = "rd%04d"
  environment = "test"
}
`, "--quiet")
	g := startGate(t, sb)
	campaign := func(name string) string {
		return `
notification "` + name + `" {
  user_ids = flatten([for a in range(3) : [for b in range(500) : format("r%04d", a * 500 + b)]])
  title    = "` + name + `"
  body     = "three requests"
  tag      = "` + name + `"
}
`
	}
	// refuseFirstTries refuses, in the next run, the first try of the
	// second and third requests (those starting at r0500 and r1000),
	// never a retry, whatever order they arrive in.
	refuseFirstTries := func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		refused := map[string]bool{}
		g.refuse = func(body []byte) bool {
			for _, first := range []string{`"userIds":["r0500"`, `"userIds":["r1000"`} {
				if bytes.Contains(body, []byte(first)) && !refused[first] {
					refused[first] = true
					return true
				}
			}
			return false
		}
	}
	received := func(title string) int {
		n := 0
		for _, d := range sb.devices(rangeIDs("rd%04d", 1500)) {
			for _, e := range d.Inbox {
				if e.Title == title {
					n++
				}
			}
		}
		return n
	}

	w := newWorkspace(t, g.base(), campaign("human"))
	refuseFirstTries()
	r := w.apply("--parallelism", "3")
	if n := strings.Count(r.stdout, "failed, retrying in"); n != 2 ||
		!strings.Contains(r.stdout, "503 Service Unavailable (request id req-gate-") || !strings.Contains(r.stdout, "retry after 1s") {
		t.Fatalf("want the 2 retries shown (%d lines):\n%s", n, r.stdout)
	}
	if sends := len(g.reset()); sends != 5 {
		t.Errorf("%d send requests, want 3 tries and 2 retries", sends)
	}
	if n := received("human"); n != 1500 {
		t.Errorf("%d devices show the notification after the retries, want 1,500", n)
	}

	// A second block beside the first: replacing it would be a rename
	// with an edit, which apply refuses (issue 21).
	w.write(campaign("human")+campaign("json"), g.base())
	refuseFirstTries()
	r = w.apply("--parallelism", "3", "--json")
	var retries int
	for _, e := range jsonEvents(t, r.stdout) {
		switch e["type"] {
		case "retry":
			retries++
			if a, _ := e["attempt"].(float64); a != 1 || e["delay"] == nil || !strings.Contains(fmt.Sprint(e["error"]), "503") {
				t.Errorf("retry event: %v", e)
			}
		case "summary":
			if e["retries"] != float64(2) {
				t.Errorf("summary counts %v retries, want 2", e["retries"])
			}
		}
	}
	if retries != 2 {
		t.Fatalf("%d retry events, want 2:\n%s", retries, r.stdout)
	}
	g.reset()

	// --max-attempts 1 sends each request once: the refused ones fail (not
	// sent) and the next plan retries them.
	w.write(campaign("human")+campaign("json")+campaign("once"), g.base())
	refuseFirstTries()
	r = w.mustRun(1, "apply", "--auto-approve", "--parallelism", "3", "--max-attempts", "1")
	if strings.Contains(r.stdout, "retrying") || !strings.Contains(r.stdout, "1,000 failed") {
		t.Fatalf("--max-attempts 1:\n%s\n%s", r.stdout, r.stderr)
	}
	if sends := len(g.reset()); sends != 3 {
		t.Errorf("--max-attempts 1: %d send requests, want 3", sends)
	}
	if a, tg := w.planJSON().action("notification.once"); a != "retry" || tg["retry"] != 1000 {
		t.Fatalf("after --max-attempts 1: %s %v", a, tg)
	}
	if n := received("once"); n != 500 {
		t.Errorf("%d devices show the notification after --max-attempts 1, want the 500 of the one request let through", n)
	}

	for _, bad := range [][]string{{"--max-attempts", "0"}, {"--retry-delay", "0s"}, {"--retry-max-delay", "1ms"}, {"--max-retry-after", "-1s"}, {"--request-timeout", "0s"}, {"--rate-limit-wait", "0s"}} {
		r := w.mustRun(1, append([]string{"apply", "--auto-approve"}, bad...)...)
		if !strings.Contains(r.stderr, bad[0]) {
			t.Errorf("%v: %s", bad, r.stderr)
		}
	}
	r = w.mustRun(0, "apply", "--help")
	for _, flag := range []string{"--max-attempts", "--retry-delay", "--retry-max-delay", "--max-retry-after", "--request-timeout", "--rate-limit-wait"} {
		if !strings.Contains(r.stderr+r.stdout, flag) {
			t.Errorf("apply --help does not list %s", flag)
		}
	}
}

// rangeIDs formats ids 0..n-1 with format.
func rangeIDs(format string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(format, i)
	}
	return ids
}
