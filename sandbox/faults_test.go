package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const oneDelivery = `[{"deviceIds":["kiosk-1"],"title":"t","body":"b"}]`

func TestFailRate(t *testing.T) {
	opts := Options{FailRate: 1, FaultSeed: 7}
	s, c := start(t, conformanceSeed, opts)
	var statuses []int
	received := int64(0)
	for range 40 {
		r := c.send("k-test", oneDelivery)
		checkRequestID(t, r)
		statuses = append(statuses, r.status)
		v := c.device("kiosk-1")
		switch r.status {
		case http.StatusServiceUnavailable:
			if r.header.Get("Retry-After") != "1" {
				t.Errorf("503 without Retry-After: 1")
			}
			if v.Received != received {
				t.Errorf("503 delivered")
			}
		case http.StatusInternalServerError:
			received++
			if v.Received != received {
				t.Errorf("500 after processing did not deliver")
			}
			// The log has what was done under the id of the lost answer.
			lr := c.do("GET", c.root+"/_sandbox/log/"+r.header.Get("x-request-id"), "", "", nil)
			if !strings.Contains(string(lr.body), `"fault":"500-after-processing"`) || !strings.Contains(string(lr.body), `"delivered"`) {
				t.Errorf("log of a 500: %s", lr.body)
			}
		default:
			t.Fatalf("status %d with fail rate 1", r.status)
		}
	}
	n503 := 0
	for _, st := range statuses {
		if st == 503 {
			n503++
		}
	}
	if n503 < 10 || n503 > 30 {
		t.Errorf("%d of 40 were 503, expected about half", n503)
	}
	if st := s.Stats(); st.Faults != 40 || st.SendRequests != received {
		t.Errorf("stats %+v", st)
	}

	// The same seed gives the same sequence.
	_, c2 := start(t, conformanceSeed, opts)
	for i, want := range statuses {
		if r := c2.send("k-test", oneDelivery); r.status != want {
			t.Fatalf("request %d: %d, first run %d", i, r.status, want)
		}
	}
}

func TestFailRateFraction(t *testing.T) {
	s := New(mustSeed(t, conformanceSeed), Options{FailRate: 0.1, DropRate: 0.05, FaultSeed: 3})
	counts := map[fault]int{}
	for range 20000 {
		counts[s.faults.draw()]++
	}
	for f, want := range map[fault]float64{
		faultFailBefore: 0.05, faultFailAfter: 0.05, faultDropBefore: 0.025, faultDropAfter: 0.025, faultNone: 0.85,
	} {
		got := float64(counts[f]) / 20000
		if got < want*0.85 || got > want*1.15 {
			t.Errorf("%v: %.4f, want about %.3f", f, got, want)
		}
	}
}

func TestDropRate(t *testing.T) {
	opts := Options{DropRate: 1, FaultSeed: 11}
	s, c := start(t, conformanceSeed, opts)
	// Which requests get processed is what the seed draws.
	expect := newFaultSource(0, 1, 11)
	processed := int64(0)
	for i := range 20 {
		if expect.draw() == faultDropAfter {
			processed++
		}
		req, _ := http.NewRequest("POST", c.base+"/push-notifications/send", strings.NewReader(oneDelivery))
		req.Header.Set("x-api-key", "k-test")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("request %d: got %d, want a dropped connection", i, resp.StatusCode)
		}
		if got := c.device("kiosk-1").Received; got != processed {
			t.Fatalf("request %d: received %d, want %d", i, got, processed)
		}
	}
	if processed == 0 || processed == 20 {
		t.Errorf("processed %d of 20: both halves expected", processed)
	}
	if st := s.Stats(); st.Faults != 20 || st.SendRequests != processed {
		t.Errorf("stats %+v", st)
	}
	// Recipients are not subject to faults.
	if r := c.recipients("k-test", ""); r.status != 200 {
		t.Errorf("recipients: %d", r.status)
	}
}

func TestRateLimit(t *testing.T) {
	// A frozen clock the test moves: the bucket refills only when told.
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, c := start(t, conformanceSeed, Options{RateLimit: 3, Now: clock})
	for i := range 3 { // the burst
		if r := c.recipients("k-test", ""); r.status != http.StatusOK {
			t.Fatalf("request %d of the burst: %d", i+1, r.status)
		}
	}
	limited := c.recipients("k-test", "")
	checkRequestID(t, limited)
	if limited.status != http.StatusTooManyRequests {
		t.Fatalf("fourth request at the same instant: %d, want 429", limited.status)
	}
	if ra := limited.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q", ra)
	}
	if !strings.Contains(string(limited.body), "rate limit") {
		t.Errorf("body %s", limited.body)
	}
	// A token takes 1/3 s to come back: not yet at 333 ms, there at 334.
	advance(333 * time.Millisecond)
	if r := c.send("k-test", oneDelivery); r.status != http.StatusTooManyRequests {
		t.Errorf("after 333ms: %d, want 429", r.status)
	}
	advance(time.Millisecond)
	if r := c.send("k-test", oneDelivery); r.status != http.StatusOK {
		t.Errorf("after 334ms: %d, want 200", r.status)
	}
	if st := s.Stats(); st.RateLimited != 2 || st.SendRequests != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestLimiterRetryAfter(t *testing.T) {
	l := newLimiter(1)
	now := time.Unix(1000, 0)
	if ok, _ := l.allow(now); !ok {
		t.Fatal("first request refused")
	}
	if ok, after := l.allow(now); ok || after != 1 {
		t.Errorf("second: %v %d", ok, after)
	}
	if ok, _ := l.allow(now.Add(time.Second)); !ok {
		t.Error("refused after a second")
	}
	if ok, _ := (*limiter)(nil).allow(now); !ok {
		t.Error("nil limiter refuses")
	}
}

func TestLatency(t *testing.T) {
	// The real timer: an answer never comes before the latency.
	_, c := start(t, conformanceSeed, Options{Latency: 20 * time.Millisecond})
	t0 := time.Now()
	if r := c.send("k-test", oneDelivery); r.status != 200 {
		t.Fatal(r.status)
	}
	if d := time.Since(t0); d < 20*time.Millisecond {
		t.Errorf("answered in %v", d)
	}
}

// heldServer runs a sandbox whose latency wait is held by the test: each
// API request signals waiting and stays until release is closed or its
// client gives up; abandoned gets a value when the server has noticed
// that a client gave up.
func heldServer(t *testing.T) (s *Server, c *client, waiting chan struct{}, release chan struct{}, abandoned chan string) {
	waiting, release, abandoned = make(chan struct{}, 8), make(chan struct{}), make(chan string, 8)
	s = New(mustSeed(t, conformanceSeed), Options{Latency: time.Hour, Logf: func(format string, args ...any) {
		if line := fmt.Sprintf(format, args...); strings.Contains(line, " abandoned ") {
			abandoned <- line
		}
	}})
	s.wait = func(ctx context.Context, d time.Duration) bool {
		if d != time.Hour {
			t.Errorf("waited %v, want the configured latency", d)
		}
		waiting <- struct{}{}
		select {
		case <-release:
			return true
		case <-ctx.Done():
			return false
		}
	}
	return s, serve(t, s), waiting, release, abandoned
}

// sendAsync posts oneDelivery with ctx from another goroutine.
func sendAsync(ctx context.Context, c *client) chan error {
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", c.base+"/push-notifications/send", strings.NewReader(oneDelivery))
		req.Header.Set("x-api-key", "k-test")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		done <- err
	}()
	return done
}

func TestLatencyHoldsOnlyAPIRequests(t *testing.T) {
	_, c, waiting, release, _ := heldServer(t)
	done := sendAsync(context.Background(), c)
	<-waiting
	// Inspection answers while the send is held: it is not delayed.
	if got := c.device("kiosk-1").Received; got != 0 {
		t.Errorf("received %d before the latency passed", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := c.device("kiosk-1").Received; got != 1 {
		t.Errorf("received %d after the latency, want 1", got)
	}
}

func TestLatencyAbandonedRequestIsNotProcessed(t *testing.T) {
	s, c, waiting, _, abandoned := heldServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := sendAsync(ctx, c)
	<-waiting
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	line := <-abandoned // the server noticed and returned
	if !strings.HasPrefix(line, "POST /v1/push-notifications/send abandoned req-") {
		t.Errorf("log line %q", line)
	}
	if got := c.device("kiosk-1").Received; got != 0 {
		t.Errorf("received %d: a request given up during the wait was processed", got)
	}
	if st := s.Stats(); st.Abandoned != 1 || st.SendRequests != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestEmpty200(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{Empty200: true})
	r := c.send("k-test", oneDelivery)
	if r.status != 200 || len(r.body) != 0 {
		t.Errorf("fully delivered: %d %q", r.status, r.body)
	}
	checkRequestID(t, r)
	if c.device("kiosk-1").Received != 1 {
		t.Error("not delivered")
	}
	r = c.send("k-test", `[{"userIds":["alice","gina"],"title":"t","body":"b"}]`)
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"skipped"`)) {
		t.Errorf("with a skipped target: %d %s", r.status, r.body)
	}
	r = c.send("k-test", `[{"userIds":["frank"],"title":"t","body":"b"}]`)
	if r.status != 207 || len(r.results(t)) != 1 {
		t.Errorf("with a failed target: %d %s", r.status, r.body)
	}
}

func TestMaxLength(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{MaxLength: 5})
	tests := []struct {
		name, body string
		status     int
		field      string
	}{
		{"within the bound", `[{"userIds":["alice"],"title":"Héllo","body":"short"}]`, 200, ""},
		{"title too long", `[{"userIds":["alice"],"title":"Hello!","body":"b"}]`, 400, "title"},
		{"tag too long", `[{"userIds":["alice"],"title":"t","body":"b"},{"deviceIds":["kiosk-1"],"badgeCount":1,"tag":"longtag"}]`, 400, "tag"},
	}
	for _, tt := range tests {
		r := c.send("k-test", tt.body)
		if r.status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.body)
			continue
		}
		if tt.field != "" && !bytes.Contains(r.body, []byte(`"`+tt.field+`"],"message":"is `)) {
			t.Errorf("%s: issues %s do not name %s", tt.name, r.body, tt.field)
		}
	}
}

// TestFailTargets: a fraction of targets is answered failed with a 207
// and a message each, the rest delivered; the same ids fail again.
func TestFailTargets(t *testing.T) {
	const seed = `
api_key "k-test" { environment = "test" }
user_range "r%04d" {
  count       = 400
  device      = "rd%04d"
  environment = "test"
}
`
	_, c := start(t, seed, Options{FailTargets: 0.25, FaultSeed: 5})
	var users, devices []string
	for i := range 400 {
		users = append(users, fmt.Sprintf("%q", fmt.Sprintf("r%04d", i)))
		devices = append(devices, fmt.Sprintf("%q", fmt.Sprintf("rd%04d", i)))
	}
	body := `[{"userIds":[` + strings.Join(users, ",") + `],"title":"t","body":"b"}]`
	failedOnce := map[string]bool{}
	for round := range 2 {
		r := c.send("k-test", body)
		if r.status != http.StatusMultiStatus {
			t.Fatalf("status %d, want 207", r.status)
		}
		failed := 0
		for _, res := range r.results(t) {
			switch res.Status {
			case "failed":
				failed++
				if !strings.Contains(res.Message, "--fail-targets") {
					t.Errorf("message %q", res.Message)
				}
				if round == 1 && !failedOnce[res.UserID] {
					t.Errorf("%s failed only the second time", res.UserID)
				}
				failedOnce[res.UserID] = true
			case "delivered":
				if failedOnce[res.UserID] {
					t.Errorf("%s failed, then was delivered", res.UserID)
				}
			default:
				t.Errorf("%s: %s", res.UserID, res.Status)
			}
		}
		if failed < 70 || failed > 130 {
			t.Errorf("%d of 400 failed, want about 100", failed)
		}
	}
	r := c.send("k-test", `[{"deviceIds":[`+strings.Join(devices, ",")+`],"title":"t","body":"b"}]`)
	if r.status != http.StatusMultiStatus {
		t.Fatalf("devices: status %d, want 207", r.status)
	}
	if v := c.device("rd0000"); v.Received > 2 {
		t.Errorf("rd0000 received %d", v.Received)
	}
}
