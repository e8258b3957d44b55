package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/state"
)

// Issue 22: the shapes where the spec is silent that a second, independent
// implementation of the service answered another way, each against a
// sandbox process serving that shape.

// rangeSeed is n users u00000... with one test device d00000... each.
func rangeSeed(n int) string {
	return fmt.Sprintf(`
api_key "k-test-canary-0123456789" { environment = "test" }
user_range "u%%05d" {
  count       = %d
  device      = "d%%05d"
  environment = "test"
}
`, n)
}

// TestRecipientsPagedByLinkAndNextLink: 5,028 recipients in pages of
// 1,000, the next page named by a Link header, then by links.next in the
// body, with a 429 and a 503 on pages along the way: every device gets
// the campaign exactly once, and the next plan has nothing to do.
func TestRecipientsPagedByLinkAndNextLink(t *testing.T) {
	for _, tc := range []struct{ paging, fault string }{
		{"link", "429@3"},
		{"links-next", "503@2"},
	} {
		t.Run(tc.paging, func(t *testing.T) {
			sb := startSandbox(t, rangeSeed(5028), "--recipients-paging", tc.paging, "--recipients-fault", tc.fault)
			w := newWorkspace(t, sb, `
data "recipients" "all" {}

notification "launch" {
  user_ids = data.recipients.all.user_ids
  title    = "Launch"
  body     = "It is here"
  tag      = "launch"
}
`)
			w.apply() // meets the fault: the page is asked for again
			if r := w.mustRun(0, "recipients"); len(strings.Fields(r.stdout)) != 5028 {
				t.Fatalf("recipients lists %d ids, want 5,028", len(strings.Fields(r.stdout)))
			}
			st := sb.stats()
			var received struct {
				DeviceIDs []string `json:"deviceIds"`
			}
			sb.get("/_sandbox/devices", &received)
			// 5,028 devices received something and 5,028 deliveries were
			// made in all: each device got the campaign exactly once.
			if len(received.DeviceIDs) != 5028 || st.Deliveries != 5028 || st.Targets != 5028 {
				t.Fatalf("%d devices reached, %d deliveries, %d targets; want 5,028 each", len(received.DeviceIDs), st.Deliveries, st.Targets)
			}
			w.mustRun(0, "plan", "--detailed-exitcode")
		})
	}
}

// TestSameUsersTwoNotificationsReversed: two untagged notifications to
// the same two users, one over the service's length limit (answered as a
// failed result, not a 400), results in reverse order. They never share a
// request, so no result is taken for the other's: the good one is
// delivered once, the bad one failed with the service's message, and the
// next apply delivers nothing and shows nothing twice.
func TestSameUsersTwoNotificationsReversed(t *testing.T) {
	sb := startSandbox(t, rangeSeed(2), "--max-length", "20", "--max-length-answer", "207", "--results-order", "reverse")
	w := newWorkspace(t, sb, `
notification "good" {
  user_ids = ["u00000", "u00001"]
  title    = "Good"
  body     = "Short"
}

notification "long" {
  user_ids = ["u00000", "u00001"]
  title    = "Long"
  body     = "This body is longer than the service takes"
}
`)
	if p := w.planJSON(); p.Summary["requests"] != 2 {
		t.Fatalf("two notifications to the same users must not share a request: %v", p.Summary)
	}
	w.mustRun(1, "apply", "--auto-approve")
	st := w.readState()
	for _, u := range []string{"u00000", "u00001"} {
		good, long := st.Messages["notification.good"].Targets[u], st.Messages["notification.long"].Targets[u]
		if good.Outcome != state.Delivered {
			t.Errorf("good, %s: %+v", u, good)
		}
		if long.Outcome != state.Failed || !strings.Contains(long.Message, "payload too large: body is 42 characters long") {
			t.Errorf("long, %s: %+v", u, long)
		}
	}
	for _, d := range []string{"d00000", "d00001"} {
		if v := sb.device(d); v.Received != 1 || v.Inbox[0].Title != "Good" {
			t.Errorf("%s: %+v", d, v)
		}
	}
	before := sb.stats()
	r := w.mustRun(1, "apply", "--auto-approve", "--json")
	for _, e := range jsonEvents(t, r.stdout) {
		if e["type"] == "request" && fmt.Sprint(e["addresses"]) != "[notification.long]" {
			t.Errorf("the next apply sends more than the failed block: %v", e)
		}
	}
	if after := sb.stats(); after.Deliveries != before.Deliveries {
		t.Errorf("the next apply delivered %d more", after.Deliveries-before.Deliveries)
	}
	for _, d := range []string{"d00000", "d00001"} {
		if v := sb.device(d); v.Received != 1 {
			t.Errorf("%s shows %d notifications, want the good one once", d, v.Received)
		}
	}
}

// TestRecipientsRetriesFollowApplyFlags: apply's --max-attempts bounds the
// recipients pages' retries too: with 1, a 503 on page 2 ends the run
// there, naming it (the streamed apply has sent the first page's users);
// the next apply, with the default, asks for the page again and sends the
// rest: every device gets the campaign once.
func TestRecipientsRetriesFollowApplyFlags(t *testing.T) {
	sb := startSandbox(t, rangeSeed(1500), "--recipients-paging", "link", "--recipients-fault", "503@2")
	w := newWorkspace(t, sb, `
data "recipients" "all" {}

notification "launch" {
  user_ids = data.recipients.all.user_ids
  title    = "Launch"
  body     = "It is here"
}
`)
	r := w.mustRun(1, "apply", "--auto-approve", "--max-attempts", "1")
	if !strings.Contains(r.stderr, "503") {
		t.Fatalf("--max-attempts 1: the 503 on page 2 is not named:\n%s", r.stderr)
	}
	if st := sb.stats(); st.Deliveries >= 1500 {
		t.Fatalf("--max-attempts 1: %d delivered, as if page 2 had been asked for again", st.Deliveries)
	}
	w.apply()
	if st := sb.stats(); st.Deliveries != 1500 || st.Targets != 1500 {
		t.Fatalf("%d delivered to %d targets, want 1,500 each", st.Deliveries, st.Targets)
	}
}

// holdProxy stands between pushform and a sandbox: it holds send
// requests until inFlight of them have arrived, then forwards the first
// and holds the others until release is closed. A request once received
// is forwarded whatever pushform does meanwhile, as a service processes
// what reached it.
type holdProxy struct {
	*httptest.Server
	up       string
	inFlight int
	mu       sync.Mutex
	sends    int
	allIn    chan struct{}
	release  chan struct{}
}

func startHoldProxy(t *testing.T, sb *sandbox, inFlight int) *holdProxy {
	h := &holdProxy{up: sb.root, inFlight: inFlight, allIn: make(chan struct{}), release: make(chan struct{})}
	h.Server = httptest.NewServer(h)
	t.Cleanup(h.Close)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return h
}

func (h *holdProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if strings.HasSuffix(r.URL.Path, "/send") {
		h.mu.Lock()
		h.sends++
		n := h.sends
		if n == h.inFlight {
			close(h.allIn)
		}
		h.mu.Unlock()
		<-h.allIn
		if n > 1 {
			<-h.release
		}
	}
	req, _ := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, h.up+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// TestWrongKeyInFlight: a wrong key with --parallelism 10 and 2,400
// targets. The first request's 401 comes back while the four others are
// in flight (all five reach the service first; the four are held until
// pushform has reported the 401). A 401 processes
// nothing: the four get theirs too and apply exits 1 with nothing
// unknown; once the key is fixed one apply delivers all 2,400.
func TestWrongKeyInFlight(t *testing.T) {
	sb := startSandbox(t, rangeSeed(2400))
	proxy := startHoldProxy(t, sb, 5)
	w := newWorkspace(t, &sandbox{t: t, base: proxy.URL + "/v1", root: proxy.URL}, `
notification "all" {
  # range() stops at 1024 values: the 2,400 ids in three parts.
  user_ids = concat([for i in range(1000) : format("u%05d", i)], [for i in range(1000, 2000) : format("u%05d", i)], [for i in range(2000, 2400) : format("u%05d", i)])
  title    = "All"
  body     = "Everyone"
  tag      = "all"
}
`)
	p := w.startProcEnv([]string{"PF_KEY=k-wrong-key-0000"}, "apply", "--auto-approve", "--json", "--parallelism", "10")
	if _, ok := p.waitLine(`"status":401`, 30*time.Second); !ok {
		t.Fatalf("no 401 event\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
	}
	close(proxy.release)
	if code := p.wait(30 * time.Second); code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "rejected the API key"); n != 1 {
		t.Errorf("the 401 is printed %d times:\n%s", n, p.stderr)
	}
	counts := map[state.Outcome]int{}
	for _, tg := range w.readState().Messages["notification.all"].AllTargets() {
		counts[tg.Outcome]++
		if tg.Outcome == state.Failed && !strings.Contains(tg.Message, "not sent: the service rejected the API key (401") {
			t.Fatalf("target %+v", tg)
		}
	}
	if counts[state.Unknown] != 0 || counts[state.Failed] != 2400 {
		t.Fatalf("outcomes %v: a 401 processes nothing, so all 2,400 are failed (not sent) and none unknown", counts)
	}
	w.mustRun(2, "plan", "--detailed-exitcode") // all 2,400 to send
	w.apply("--parallelism", "10")
	if st := sb.stats(); st.Deliveries != 2400 {
		t.Fatalf("%d deliveries after fixing the key, want 2,400", st.Deliveries)
	}
	w.mustRun(0, "plan", "--detailed-exitcode")
}
