package pushapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/pushapi"
	"pushform/sandbox"
)

const seedSrc = `
user "alice" {
  device "alice-phone" { environment = "test" }
  device "alice-tablet" { environment = "test" }
}
user "bob" {
  device "bob-phone" {
    push_token  = false
    last_seen   = "2026-11-01T10:00:00Z"
    environment = "test"
  }
}
user "carol" {
  device "carol-phone" {
    environment = "test"
    fail        = "token expired"
  }
}
user "dave" {
  device "dave-phone" { environment = "production" }
}
device "kiosk-1" { environment = "test" }
topic "deals" { devices = ["alice-phone", "kiosk-1"] }
topic "news" { devices = ["kiosk-1", "alice-tablet"] }
topic "broken" { devices = ["carol-phone"] }
topic "prod" { devices = ["dave-phone"] }
user_range "u%04d" {
  count       = 2500
  device      = "d%04d"
  environment = "test"
}
api_key "k-test-canary-0001" { environment = "test" }
api_key "k-prod-canary-0002" { environment = "production" }
`

const testKey = "k-test-canary-0001"

// start runs a sandbox on loopback and returns a client for it.
func start(t *testing.T, opts sandbox.Options, key string) (*pushapi.Client, *sandbox.Server) {
	t.Helper()
	seed, diags := sandbox.ParseSeed("seed.hcl", []byte(seedSrc))
	if diags.HasErrors() {
		t.Fatalf("seed: %v", diags)
	}
	srv := sandbox.New(seed, opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := pushapi.New(pushapi.Options{BaseURL: hs.URL + "/v1", APIKey: key, APIKeyEnv: "PUSHFORM_API_KEY", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, srv
}

func TestSandboxSend(t *testing.T) {
	c, srv := start(t, sandbox.Options{}, testKey)
	batch := []pushapi.Notification{
		{UserIDs: []string{"alice", "bob", "carol", "dave", "nobody"}, Title: "Sale", Body: "20% off", Tag: "sale"},
		{DeviceIDs: []string{"kiosk-1"}, BadgeCount: new(3)},
		{Topics: []string{"deals"}, Title: "Deal", Body: "Today only"},
	}
	res, err := c.Send(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 207 || !strings.HasPrefix(res.RequestID, "req-") {
		t.Errorf("status %d request id %q", res.StatusCode, res.RequestID)
	}
	got := res.Results
	check := func(i, j int, id string, o pushapi.Outcome, count int) {
		t.Helper()
		r := got[i][j]
		if r.UserID+r.DeviceID+strings.Join(r.Topics, ",") != id || r.Outcome != o {
			t.Errorf("[%d][%d] = %+v, want %s %s", i, j, r, id, o)
		}
		if count >= 0 && (r.DeviceCount == nil || *r.DeviceCount != count) {
			t.Errorf("[%d][%d] deviceCount %v, want %d", i, j, r.DeviceCount, count)
		}
	}
	check(0, 0, "alice", pushapi.OutcomeDelivered, 2)
	check(0, 1, "bob", pushapi.OutcomeSkipped, -1)
	check(0, 2, "carol", pushapi.OutcomeFailed, -1)
	check(0, 3, "dave", pushapi.OutcomeSkipped, -1) // other environment
	check(0, 4, "nobody", pushapi.OutcomeSkipped, -1)
	check(1, 0, "kiosk-1", pushapi.OutcomeDelivered, 1)
	check(2, 0, "deals", pushapi.OutcomeDelivered, 2)
	if r := got[0][1]; r.Reason != pushapi.ReasonNoActiveDevice || r.UnreachableSince == nil ||
		!r.UnreachableSince.Equal(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("bob: %+v", r)
	}
	if r := got[0][2]; r.Message != "token expired" {
		t.Errorf("carol: %+v", r)
	}
	if d, _ := srv.Device("alice-phone"); d.Received != 2 {
		t.Errorf("alice-phone received %d, want 2", d.Received)
	}
}

func TestSandboxEmpty200(t *testing.T) {
	c, _ := start(t, sandbox.Options{Empty200: true}, testKey)
	res, err := c.Send(context.Background(), []pushapi.Notification{{UserIDs: []string{"alice", "u0001"}, Title: "a", Body: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || len(res.Results[0]) != 2 {
		t.Fatalf("got %+v", res)
	}
	for _, r := range res.Results[0] {
		if r.Outcome != pushapi.OutcomeDelivered || r.DeviceCount != nil {
			t.Errorf("empty 200: %+v", r)
		}
	}
}

func TestSandboxValidation(t *testing.T) {
	c, _ := start(t, sandbox.Options{}, testKey)
	_, err := c.Send(context.Background(), []pushapi.Notification{
		{UserIDs: []string{"alice"}, Title: "a", Body: "b"},
		{UserIDs: []string{"alice"}, Title: "only a title"},
	})
	var ve *pushapi.ValidationError
	if !errors.As(err, &ve) || len(ve.Issues) == 0 || !strings.HasPrefix(ve.RequestID, "req-") {
		t.Fatalf("want ValidationError, got %v", err)
	}
	if ve.Issues[0].Index != 1 || len(ve.Issues[0].Raw) == 0 || ve.Issues[0].Message == "" {
		t.Errorf("issue: %+v", ve.Issues[0])
	}
	if strings.Contains(err.Error(), testKey) {
		t.Error("error contains the key")
	}
}

func TestSandboxIssueShapes(t *testing.T) {
	// A packed request with one bad notification: every shape of 400 the
	// sandbox can give names it. A request-level issue names none.
	packed := []pushapi.Notification{
		{UserIDs: []string{"alice"}, Title: "ok", Body: "fine"},
		{UserIDs: []string{"carol"}, Title: "far too long", Body: "b"},
		{DeviceIDs: []string{"kiosk-1"}, BadgeCount: new(1)},
	}
	tooMany := make([]string, 501)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("u%04d", i)
	}
	whole := []pushapi.Notification{
		{UserIDs: tooMany[:300], Title: "a", Body: "b"},
		{UserIDs: tooMany[300:], Title: "a", Body: "b"},
	}
	for _, shape := range []string{sandbox.IssuesPath, sandbox.IssuesIndex, sandbox.IssuesPointer, sandbox.IssuesMessage} {
		t.Run(shape, func(t *testing.T) {
			c, srv := start(t, sandbox.Options{IssuesShape: shape, MaxLength: 5}, testKey)
			_, err := c.Send(context.Background(), packed)
			var ve *pushapi.ValidationError
			if !errors.As(err, &ve) || len(ve.Issues) != 1 {
				t.Fatalf("want one issue, got %v", err)
			}
			if is := ve.Issues[0]; is.Index != 1 || is.Field != "title" || !strings.Contains(is.Message, "is 12 characters long") {
				t.Errorf("issue %+v", is)
			}
			if !strings.Contains(err.Error(), "notification 1, title: ") || strings.Contains(err.Error(), "did not say") {
				t.Errorf("message: %v", err)
			}
			_, err = c.Send(context.Background(), whole)
			if !errors.As(err, &ve) || len(ve.Issues) != 1 || ve.Issues[0].Index != -1 {
				t.Fatalf("request-level issue: %v", err)
			}
			if !strings.Contains(err.Error(), "the service did not say which of the 2 notifications") {
				t.Errorf("message: %v", err)
			}
			if st := srv.Stats(); st.SendRequests != 0 || st.BadRequests != 2 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestSandboxTopicResults(t *testing.T) {
	batch := []pushapi.Notification{
		{Topics: []string{"deals", "news"}, Title: "a", Body: "b"},   // 3 devices, kiosk-1 once
		{Topics: []string{"broken", "deals"}, Title: "a", Body: "b"}, // fails on one topic
		{Topics: []string{"broken"}, Title: "a", Body: "b"},
		{Topics: []string{"prod", "broken"}, Title: "a", Body: "b"}, // skipped and failed
		{UserIDs: []string{"alice"}, Title: "a", Body: "b"},
	}
	for _, shape := range []string{sandbox.TopicResultsEcho, sandbox.TopicResultsPerTopic} {
		t.Run(shape, func(t *testing.T) {
			c, srv := start(t, sandbox.Options{TopicResults: shape}, testKey)
			res, err := c.Send(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			want := []struct {
				o     pushapi.Outcome
				count int
				msg   string
			}{{pushapi.OutcomeDelivered, 3, ""}, {pushapi.OutcomeDelivered, 2, ""}, {pushapi.OutcomeFailed, -1, "token expired"},
				{pushapi.OutcomeFailed, -1, "token expired"}, {pushapi.OutcomeDelivered, 2, ""}}
			for i, w := range want {
				if len(res.Results[i]) != 1 {
					t.Fatalf("notification %d: %d results, want one per topics object", i, len(res.Results[i]))
				}
				r := res.Results[i][0]
				if r.Outcome != w.o || r.Message != w.msg || (w.count >= 0 && (r.DeviceCount == nil || *r.DeviceCount != w.count)) {
					t.Errorf("notification %d: %+v (count %v), want %+v", i, r, r.DeviceCount, w)
				}
				if i < 4 && !slices.Equal(r.Topics, batch[i].Topics) {
					t.Errorf("notification %d echoes %v", i, r.Topics)
				}
			}
			targets := int64(5)
			if shape == sandbox.TopicResultsPerTopic {
				targets = 8
			}
			if st := srv.Stats(); st.Targets != targets {
				t.Errorf("the sandbox gave %d result entries, want %d", st.Targets, targets)
			}
		})
	}
}

func TestSandboxAuth(t *testing.T) {
	c, _ := start(t, sandbox.Options{}, "k-unknown-canary")
	_, err := c.Send(context.Background(), []pushapi.Notification{{UserIDs: []string{"alice"}, Title: "a", Body: "b"}})
	var ae *pushapi.AuthError
	if !errors.As(err, &ae) || !strings.HasPrefix(ae.RequestID, "req-") {
		t.Fatalf("want AuthError, got %v", err)
	}
	// The id of the refused request is in the error, for apply to record.
	if id := pushapi.RequestID(err); id != ae.RequestID || !strings.Contains(err.Error(), "request id "+id) {
		t.Errorf("request id %q in %v", id, err)
	}
	if _, err := c.Recipients(context.Background()); !errors.As(err, &ae) {
		t.Fatalf("recipients: want AuthError, got %v", err)
	}
	if strings.Contains(err.Error(), "k-unknown-canary") || !strings.Contains(err.Error(), "PUSHFORM_API_KEY") {
		t.Errorf("message: %v", err)
	}
}

func TestSandboxRecipients(t *testing.T) {
	want := []string{"alice", "carol"} // bob has no token, dave runs production
	for _, shape := range []string{"array", "object"} {
		t.Run(shape, func(t *testing.T) {
			c, _ := start(t, sandbox.Options{RecipientsShape: shape}, testKey)
			res, err := c.Recipients(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.UserIDs) != 2+2500 || !slices.Equal(res.UserIDs[:2], want) || res.UserIDs[2] != "u0000" {
				t.Errorf("%d ids, first %v", len(res.UserIDs), res.UserIDs[:min(3, len(res.UserIDs))])
			}
			pages := 1
			if shape == "object" {
				pages = 3 // 2502 ids at 1000 a page
			}
			if len(res.RequestIDs) != pages {
				t.Errorf("%d pages, want %d", len(res.RequestIDs), pages)
			}
		})
	}
}

func TestSandboxFaults(t *testing.T) {
	batch := []pushapi.Notification{{UserIDs: []string{"alice"}, Title: "a", Body: "b"}}
	t.Run("rate limit", func(t *testing.T) {
		frozen := time.Unix(1000, 0) // no token comes back
		c, _ := start(t, sandbox.Options{RateLimit: 1, Now: func() time.Time { return frozen }}, testKey)
		if _, err := c.Send(context.Background(), batch); err != nil {
			t.Fatalf("the first request is within the burst: %v", err)
		}
		_, err := c.Send(context.Background(), batch)
		var se *pushapi.StatusError
		if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter < time.Second {
			t.Fatalf("want 429 with Retry-After, got %v", err)
		}
		if safe, _, after := pushapi.Retryable(err); !safe || after < time.Second {
			t.Errorf("429: safe %v after %v", safe, after)
		}
	})
	t.Run("fail rate", func(t *testing.T) {
		c, _ := start(t, sandbox.Options{FailRate: 1, FaultSeed: 1}, testKey)
		seen := map[pushapi.Class]bool{}
		for range 20 {
			_, err := c.Send(context.Background(), batch)
			var se *pushapi.StatusError
			if !errors.As(err, &se) || (se.StatusCode != 500 && se.StatusCode != 503) {
				t.Fatalf("want 500 or 503, got %v", err)
			}
			class, _ := pushapi.Classify(err)
			if (se.StatusCode == 503) != (class == pushapi.Safe) {
				t.Errorf("%d classified %v", se.StatusCode, class)
			}
			seen[class] = true
		}
		if !seen[pushapi.Safe] || !seen[pushapi.Ambiguous] {
			t.Errorf("20 faults gave only %v", seen)
		}
	})
	t.Run("drop rate", func(t *testing.T) {
		c, _ := start(t, sandbox.Options{DropRate: 1, FaultSeed: 1}, testKey)
		_, err := c.Send(context.Background(), batch)
		var te *pushapi.TransportError
		if !errors.As(err, &te) || !te.Sent {
			t.Fatalf("want a sent TransportError, got %v", err)
		}
		if _, ambiguous, _ := pushapi.Retryable(err); !ambiguous {
			t.Error("a dropped send must be ambiguous")
		}
	})
}

// BenchmarkSandboxSend is the client against the sandbox on loopback:
// requests of 500 userIds from 10 senders, as apply will run them.
func BenchmarkSandboxSend(b *testing.B) {
	seed, diags := sandbox.ParseSeed("seed.hcl", []byte(seedSrc))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	base, stop, err := sandbox.New(seed, sandbox.Options{}).Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	c, err := pushapi.New(pushapi.Options{BaseURL: base, APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%04d", i)
	}
	batch := []pushapi.Notification{{UserIDs: ids, Title: "Sale", Body: "20% off", Tag: "sale"}}
	b.SetParallelism(5) // x GOMAXPROCS(2) = 10 senders
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "targets/s")
}
