package pushapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pushform/pushapi"
	"pushform/sandbox"
)

// The shapes of issue 38, each served by the sandbox and read by the
// client.

// TestSandboxSpecPaging: header, offset, page and has-more paging are
// followed to the end of the list; total-only hands over nothing and says
// why.
func TestSandboxSpecPaging(t *testing.T) {
	for _, paging := range []string{sandbox.PagingHeader, sandbox.PagingOffset, sandbox.PagingPage, sandbox.PagingHasMore} {
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
	t.Run(sandbox.PagingTotalOnly, func(t *testing.T) {
		c, _ := start(t, sandbox.Options{RecipientsPaging: sandbox.PagingTotalOnly}, testKey)
		handed := 0
		ids, err := c.RecipientsFunc(context.Background(), func(chunk []string) error { handed += len(chunk); return nil })
		var de *pushapi.DecodeError
		if !errors.As(err, &de) || de.RequestID != ids[0] || handed != 0 ||
			!strings.Contains(err.Error(), "the list holds 2,502 user ids (header X-Total-Count) and 1,000 were served") {
			t.Fatalf("handed %d; err %v", handed, err)
		}
	})
}

// TestSandboxUnreadableFields: unreachableSince in PostgreSQL's form is
// read; in words, and a deviceCount in words, are kept as served while
// the outcomes stand.
func TestSandboxUnreadableFields(t *testing.T) {
	for _, tc := range []struct{ since, count, unreadable string }{
		{sandbox.SincePG, sandbox.CountNumber, ""},
		{sandbox.SinceSpaceZ, sandbox.CountNumber, ""},
		{sandbox.SinceWords, sandbox.CountWords, `unreachableSince: "`},
	} {
		c, _ := start(t, sandbox.Options{SinceFormat: tc.since, SpecShapes: sandbox.SpecShapes{DeviceCountFormat: tc.count}}, testKey)
		res, err := c.Send(context.Background(), []pushapi.Notification{{UserIDs: []string{"alice", "bob"}, Title: "T", Body: "B"}})
		if err != nil {
			t.Fatalf("%s: %v", tc.since, err)
		}
		alice, bob := res.Results[0][0], res.Results[0][1]
		if alice.Outcome != pushapi.OutcomeDelivered || bob.Outcome != pushapi.OutcomeSkipped {
			t.Fatalf("%s: %+v %+v", tc.since, alice, bob)
		}
		if tc.unreadable == "" {
			if bob.UnreachableSince == nil || bob.Unreadable != "" || alice.DeviceCount == nil {
				t.Errorf("%s: %+v %+v", tc.since, alice, bob)
			}
			continue
		}
		if !strings.HasPrefix(bob.Unreadable, tc.unreadable) || alice.DeviceCount != nil || !strings.HasPrefix(alice.Unreadable, `deviceCount: "`) {
			t.Errorf("%s: %+v %+v", tc.since, alice, bob)
		}
	}
}
