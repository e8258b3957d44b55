package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTransport serves requests in-process: the answers of the server,
// x-request-id and all, with FailIDs failing the targets they name
// (a range user's too) whatever their devices.
func TestTransport(t *testing.T) {
	srv := New(mustSeed(t, conformanceSeed), Options{FailIDs: []string{"u0003", "kiosk-1"}})
	c := &http.Client{Transport: srv.Transport()}
	body := `[{"userIds":["u0002","u0003"],"title":"t","body":"b"},{"deviceIds":["kiosk-1"],"badgeCount":1}]`
	req, _ := http.NewRequest(http.MethodPost, InProcessBaseURL+"/push-notifications/send", strings.NewReader(body))
	req.Header.Set("x-api-key", "k-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Results []struct {
			UserID, DeviceID, Status, Message string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMultiStatus || !strings.HasPrefix(resp.Header.Get("x-request-id"), "req-") {
		t.Fatalf("status %d, x-request-id %q", resp.StatusCode, resp.Header.Get("x-request-id"))
	}
	want := []string{"u0002 delivered", "u0003 failed", "kiosk-1 failed"}
	for i, r := range got.Results {
		if s := r.UserID + r.DeviceID + " " + r.Status; i >= len(want) || s != want[i] {
			t.Fatalf("results %+v; want %q", got.Results, want)
		}
	}
	if !strings.Contains(got.Results[1].Message, "fail_ids") {
		t.Errorf("message %q", got.Results[1].Message)
	}
	if v, _ := srv.Device("d0002"); len(v.Inbox) != 1 {
		t.Errorf("d0002 inbox %+v", v.Inbox)
	}
}

// TestTransportLatency: a client that gives up during the latency gets no
// answer, and nothing was processed.
func TestTransportLatency(t *testing.T) {
	srv := New(mustSeed(t, conformanceSeed), Options{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, InProcessBaseURL+"/push-notifications/send", strings.NewReader(`[]`))
	req.Header.Set("x-api-key", "k-test")
	srv.wait = func(ctx context.Context, d time.Duration) bool {
		cancel()
		<-ctx.Done()
		return false
	}
	_, err := (&http.Client{Transport: srv.Transport()}).Do(req)
	if !errors.Is(err, context.Canceled) || srv.Stats().Abandoned != 1 {
		t.Fatalf("err %v, stats %+v", err, srv.Stats())
	}
}
