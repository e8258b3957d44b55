package pushapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"pushform/pushapi"
	"pushform/sandbox"
)

// The shapes of the "where the spec is silent" table, each served by the
// sandbox and read by the client.

func TestSandboxRecipientsPagingSchemes(t *testing.T) {
	for _, paging := range []string{sandbox.PagingCursor, sandbox.PagingLink, sandbox.PagingLinksNext} {
		t.Run(paging, func(t *testing.T) {
			c, _ := start(t, sandbox.Options{RecipientsPaging: paging}, testKey)
			res, err := c.Recipients(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.UserIDs) != 2+2500 || len(res.RequestIDs) != 3 || res.UserIDs[2501] != "u2499" {
				t.Errorf("%d ids in %d pages", len(res.UserIDs), len(res.RequestIDs))
			}
		})
	}
}

func TestSandboxRecipientsFaultsRetried(t *testing.T) {
	c, _ := start(t, sandbox.Options{RecipientsPaging: sandbox.PagingLink,
		RecipientsFaults: []sandbox.RecipientsFault{{Page: 2, Status: 429}, {Page: 3, Status: 503}}}, testKey)
	start := time.Now()
	res, err := c.Recipients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.UserIDs) != 2502 || len(res.RequestIDs) != 5 {
		t.Errorf("%d ids, %d requests; want 2502 in 3 pages and 2 retries", len(res.UserIDs), len(res.RequestIDs))
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("done in %s: the two Retry-After: 1 were not honoured", d)
	}
}

func TestSandboxResultsReversed(t *testing.T) {
	c, _ := start(t, sandbox.Options{ResultsOrder: sandbox.OrderReverse}, testKey)
	res, err := c.Send(context.Background(), []pushapi.Notification{
		{UserIDs: []string{"alice", "carol"}, Title: "a", Body: "b"},
		{DeviceIDs: []string{"kiosk-1"}, BadgeCount: new(int)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results
	if r[0][0].UserID != "alice" || r[0][0].Outcome != pushapi.OutcomeDelivered || r[0][1].Outcome != pushapi.OutcomeFailed ||
		r[0][1].Message != "token expired" || r[1][0].DeviceID != "kiosk-1" || r[1][0].Outcome != pushapi.OutcomeDelivered {
		t.Errorf("%+v", r)
	}
}

func TestSandboxOKBodies(t *testing.T) {
	for _, body := range []string{sandbox.OKBodyEmpty, sandbox.OKBodyObject, sandbox.OKBodyResults} {
		c, _ := start(t, sandbox.Options{OKBody: body}, testKey)
		res, err := c.Send(context.Background(), []pushapi.Notification{{UserIDs: []string{"alice", "u0001"}, Title: "a", Body: "b"}})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for _, r := range res.Results[0] {
			if r.Outcome != pushapi.OutcomeDelivered || r.DeviceCount != nil {
				t.Errorf("%s: %+v", body, r)
			}
		}
	}
}

func TestSandboxSinceFormats(t *testing.T) {
	want := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, f := range []string{sandbox.SinceRFC3339, sandbox.SinceEpochS, sandbox.SinceEpochMS} {
		c, _ := start(t, sandbox.Options{SinceFormat: f}, testKey)
		res, err := c.Send(context.Background(), []pushapi.Notification{{UserIDs: []string{"bob"}, Title: "a", Body: "b"}})
		if err != nil {
			t.Fatal(err)
		}
		if u := res.Results[0][0].UnreachableSince; u == nil || !u.Equal(want) {
			t.Errorf("%s: unreachableSince %v, want %v", f, u, want)
		}
	}
}

func TestSandboxIssuesPointerDetail(t *testing.T) {
	c, _ := start(t, sandbox.Options{IssuesShape: sandbox.IssuesPointerDetail, MaxLength: 5}, testKey)
	_, err := c.Send(context.Background(), []pushapi.Notification{
		{UserIDs: []string{"alice"}, Title: "a", Body: "b"},
		{UserIDs: []string{"alice"}, Title: "a", Body: "b"},
		{UserIDs: []string{"carol"}, Title: "far too long", Body: "b"},
	})
	var ve *pushapi.ValidationError
	if !errors.As(err, &ve) || len(ve.Issues) != 1 {
		t.Fatalf("%v", err)
	}
	if is := ve.Issues[0]; is.Index != 2 || is.Field != "title" || is.Message != "is 12 characters long; at most 5 are allowed" {
		t.Errorf("%+v", is)
	}
}

// TestSandboxSameUserTwiceReversed: a request that addresses one user in
// two notifications, answered in reverse order with different outcomes,
// cannot be told apart: an unreadable answer, never a guess.
func TestSandboxSameUserTwiceReversed(t *testing.T) {
	c, _ := start(t, sandbox.Options{ResultsOrder: sandbox.OrderReverse, MaxLength: 10, MaxLengthAnswer: "207"}, testKey)
	_, err := c.Send(context.Background(), []pushapi.Notification{
		{UserIDs: []string{"alice", "u0001"}, Title: "good", Body: "b"},
		{UserIDs: []string{"alice", "u0001"}, Title: "far too long", Body: "b"},
	})
	var de *pushapi.DecodeError
	if !errors.As(err, &de) || de.StatusCode != 207 || !strings.Contains(err.Error(), "which is whose cannot be told") {
		t.Fatalf("%v", err)
	}
	if class, _ := pushapi.Classify(err); class != pushapi.Ambiguous {
		t.Errorf("class %v", class)
	}
}
