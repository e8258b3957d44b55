package pushapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/secret"
)

// TestTimestampForms: unreachableSince in every form the issue names (RFC
// 3339 with or without T, offsets Z, +00, +0000, +00:00, fractional
// seconds, epoch seconds and milliseconds as numbers or strings) is read
// as the same instant, on the fast path and the general one.
func TestTimestampForms(t *testing.T) {
	at := time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)
	frac := at.Add(250 * time.Millisecond)
	cases := []struct {
		raw  string
		want time.Time
	}{
		{`"2026-11-01T11:00:00Z"`, at},
		{`"2026-11-01 11:00:00Z"`, at},
		{`"2026-11-01 11:00:00+00"`, at},
		{`"2026-11-01 11:00:00+0000"`, at},
		{`"2026-11-01 11:00:00+00:00"`, at},
		{`"2026-11-01T11:00:00.250+00:00"`, frac},
		{`"2026-11-01 11:00:00.25+00"`, frac},
		{`"2026-11-01 12:30:00+0130"`, at},
		{`"2026-11-01 09:00:00-02"`, at},
		{`"2026-11-01t11:00:00z"`, at},
		{`"2026-11-01 11:00:00.123456789+00"`, at.Add(123456789)},
		{`1793530800`, at},
		{`1793530800000`, at},
		{`"1793530800"`, at},
		{`"1793530800000"`, at},
		{`1793530800.25`, frac},
	}
	for _, tc := range cases {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fast=%v", tc.raw, fast), func(t *testing.T) {
				body := `{"results":[{"userId":"u1","status":"skipped","reason":"no_active_device","unreachableSince":` + tc.raw + `}]}`
				rs, err := decodeResults(nil, nil, []byte(body), 200, []Notification{{UserIDs: []string{"u1"}}}, secret.NewRedactor(), fast)
				if err != nil {
					t.Fatal(err)
				}
				r := rs[0][0]
				if r.UnreachableSince == nil || !r.UnreachableSince.Equal(tc.want) || r.Unreadable != "" {
					t.Fatalf("got %v (unreadable %q), want %s", r.UnreachableSince, r.Unreadable, tc.want)
				}
			})
		}
	}
}

// TestUnreadableOptionalFields: an optional field that cannot be read is
// kept as served, and the entry's outcome stands; the answer is never
// unreadable for it.
func TestUnreadableOptionalFields(t *testing.T) {
	cases := []struct {
		name, entry string
		want        Result
	}{
		{"time no time", `"status":"skipped","reason":"no_active_device","unreachableSince":"yesterday"`,
			Result{Outcome: OutcomeSkipped, Reason: ReasonNoActiveDevice, Unreadable: `unreachableSince: "yesterday"`}},
		{"time without zone", `"status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01 11:00:00"`,
			Result{Outcome: OutcomeSkipped, Reason: ReasonNoActiveDevice, Unreadable: `unreachableSince: "2026-11-01 11:00:00"`}},
		{"time an object", `"status":"skipped","reason":"no_active_device","unreachableSince":{"at":1}`,
			Result{Outcome: OutcomeSkipped, Reason: ReasonNoActiveDevice, Unreadable: `unreachableSince: {"at":1}`}},
		{"time a boolean", `"status":"skipped","reason":"no_active_device","unreachableSince":true`,
			Result{Outcome: OutcomeSkipped, Reason: ReasonNoActiveDevice, Unreadable: `unreachableSince: true`}},
		{"count negative", `"status":"delivered","deviceCount":-1`,
			Result{Outcome: OutcomeDelivered, Unreadable: `deviceCount: -1`}},
		{"count fractional", `"status":"delivered","deviceCount":1.5`,
			Result{Outcome: OutcomeDelivered, Unreadable: `deviceCount: 1.5`}},
		{"count words", `"status":"delivered","deviceCount":"several"`,
			Result{Outcome: OutcomeDelivered, Unreadable: `deviceCount: "several"`}},
		{"count an array", `"status":"delivered","deviceCount":[1,2]`,
			Result{Outcome: OutcomeDelivered, Unreadable: `deviceCount: [1,2]`}},
		{"count alone, unreadable: still delivered", `"deviceCount":"n/a"`,
			Result{Outcome: OutcomeDelivered, Unreadable: `deviceCount: "n/a"`}},
		{"two fields", `"status":"failed","message":"APNs: BadDeviceToken","deviceCount":"x","unreachableSince":"soon"`,
			Result{Outcome: OutcomeFailed, Message: "APNs: BadDeviceToken", Unreadable: `deviceCount: "x"; unreachableSince: "soon"`}},
		{"message an object", `"status":"failed","message":{"code":7}`,
			Result{Outcome: OutcomeFailed, Message: `{"code":7}`}},
		{"reason a number", `"status":"skipped","reason":3`,
			Result{Outcome: OutcomeSkipped, Reason: `3`}},
		{"a later field", `"status":"delivered","deviceCount":2,"platform":{"ios":1}`,
			Result{Outcome: OutcomeDelivered, DeviceCount: intp(2)}},
	}
	for _, tc := range cases {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fast=%v", tc.name, fast), func(t *testing.T) {
				// Two entries: the second is the common one, so the fast
				// path meets the odd entry amid its own.
				body := `{"results":[{"userId":"u1",` + tc.entry + `},{"userId":"u2","status":"delivered","deviceCount":1}]}`
				rs, err := decodeResults(nil, nil, []byte(body), 207, []Notification{{UserIDs: []string{"u1", "u2"}}}, secret.NewRedactor(canary), fast)
				if err != nil {
					t.Fatalf("the answer is unreadable: %v", err)
				}
				got, want := rs[0][0], tc.want
				want.UserID = "u1"
				if !sameOutcome(&got, &want) || got.Outcome != want.Outcome {
					t.Fatalf("got %+v (count %v), want %+v", got, got.DeviceCount, want)
				}
				if r := rs[0][1]; r.Outcome != OutcomeDelivered || *r.DeviceCount != 1 || r.Unreadable != "" {
					t.Fatalf("the other entry: %+v", r)
				}
			})
		}
	}
}

// TestUnreadableRedactedAndBounded: the key in an unreadable field is
// redacted like a message; a long one is cut.
func TestUnreadableRedactedAndBounded(t *testing.T) {
	body := `[{"userId":"u1","status":"skipped","reason":"no_active_device","unreachableSince":"key ` + canary + `"},` +
		`{"userId":"u2","status":"delivered","deviceCount":"` + strings.Repeat("x", 4000) + `"}]`
	rs, err := decodeResults(nil, nil, []byte(body), 200, []Notification{{UserIDs: []string{"u1", "u2"}}}, secret.NewRedactor(canary), true)
	if err != nil {
		t.Fatal(err)
	}
	if u := rs[0][0].Unreadable; strings.Contains(u, canary) || !strings.HasPrefix(u, `unreachableSince: "key `) {
		t.Errorf("unreadable field: %q", u)
	}
	if u := rs[0][1].Unreadable; len(u) > MaxUnreadableBytes || !strings.HasSuffix(u, "…") {
		t.Errorf("a long unreadable field is %d bytes: %q…", len(u), u[:40])
	}
}

// TestIssue38UnreadableSinceAnswer: the answer of the issue, 1,217
// targets of which 56 skipped with unreachableSince in PostgreSQL's text
// form and one failed, is read target by target.
func TestIssue38UnreadableSinceAnswer(t *testing.T) {
	var ids []string
	var b strings.Builder
	b.WriteString(`{"results":[`)
	for i := range 1217 {
		id := fmt.Sprintf("u%04d", i)
		ids = append(ids, id)
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case i == 100:
			fmt.Fprintf(&b, `{"userId":%q,"status":"failed","message":"APNs: BadDeviceToken"}`, id)
		case i%22 == 1 && i < 1232:
			fmt.Fprintf(&b, `{"userId":%q,"status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01 11:00:00+00"}`, id)
		default:
			fmt.Fprintf(&b, `{"userId":%q,"status":"delivered","deviceCount":1}`, id)
		}
	}
	b.WriteString(`]}`)
	var batch []Notification
	for i := 0; i < len(ids); i += 500 {
		batch = append(batch, Notification{UserIDs: ids[i:min(i+500, len(ids))], Title: "T", Body: "B"})
	}
	rs, err := decodeResults(nil, nil, []byte(b.String()), 207, batch, secret.NewRedactor(), true)
	if err != nil {
		t.Fatal(err)
	}
	n := map[Outcome]int{}
	for _, part := range rs {
		for _, r := range part {
			n[r.Outcome]++
			if r.Outcome == OutcomeSkipped && (r.UnreachableSince == nil || r.UnreachableSince.Hour() != 11) {
				t.Fatalf("%+v", r)
			}
		}
	}
	if n[OutcomeDelivered] != 1160 || n[OutcomeSkipped] != 56 || n[OutcomeFailed] != 1 {
		t.Fatalf("outcomes %v, want 1,160 delivered, 56 skipped, 1 failed", n)
	}
}
