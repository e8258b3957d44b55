package pushapi

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mixed is a request of three notifications: two users, one device, one
// topics array.
var mixed = []Notification{
	{UserIDs: []string{"alice", "bob"}, Title: "T", Body: "B"},
	{DeviceIDs: []string{"kiosk-1"}, BadgeCount: intp(2)},
	{Topics: []string{"deals", "news"}, Title: "T", Body: "B"},
}

func TestSendTolerantDecoding(t *testing.T) {
	since := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	delivered := func(n int) Result { return Result{Outcome: OutcomeDelivered, DeviceCount: intp(n)} }
	skipped := Result{Outcome: OutcomeSkipped, Reason: "no_active_device"}
	skippedSince := Result{Outcome: OutcomeSkipped, Reason: "no_active_device", UnreachableSince: &since}
	failed := Result{Outcome: OutcomeFailed, Message: "token expired"}
	unknownCount := Result{Outcome: OutcomeDelivered}

	cases := []struct {
		name   string
		status int
		body   string
		batch  []Notification
		want   [][]Result // echoes are filled in by the test
	}{
		{"status field object", 200,
			`{"results":[{"userId":"alice","status":"delivered","deviceCount":2},{"userId":"bob","status":"skipped","reason":"no_active_device"},{"deviceId":"kiosk-1","status":"delivered","deviceCount":1},{"topics":["deals","news"],"status":"delivered","deviceCount":5}]}`,
			mixed, [][]Result{{delivered(2), skipped}, {delivered(1)}, {delivered(5)}}},
		{"outcome field, upper case values", 207,
			`{"results":[{"userId":"alice","outcome":"FAILED","message":"token expired"},{"userId":"bob","outcome":"Skipped","reason":"no_active_device"},{"deviceId":"kiosk-1","outcome":" delivered ","deviceCount":1},{"topics":["deals","news"],"outcome":"delivered","deviceCount":0}]}`,
			mixed, [][]Result{{failed, skipped}, {delivered(1)}, {delivered(0)}}},
		{"result field", 200,
			`{"results":[{"userId":"alice","result":"delivered","deviceCount":1},{"userId":"bob","result":"delivered","deviceCount":3}]}`,
			mixed[:1], [][]Result{{delivered(1), delivered(3)}}},
		{"inferred outcomes", 207,
			`{"results":[{"userId":"alice","message":"token expired"},{"userId":"bob","reason":"no_active_device"},{"deviceId":"kiosk-1","deviceCount":1},{"topics":["deals","news"],"deviceCount":"4"}]}`,
			mixed, [][]Result{{failed, skipped}, {delivered(1)}, {delivered(4)}}},
		{"failure wins inference over a zero count", 207,
			`[{"userId":"alice","deviceCount":0,"message":"token expired"},{"userId":"bob","deviceCount":1}]`,
			mixed[:1], [][]Result{{{Outcome: OutcomeFailed, Message: "token expired", DeviceCount: intp(0)}, delivered(1)}}},
		{"bare array", 200,
			`[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"delivered","deviceCount":1}]`,
			mixed[:1], [][]Result{{delivered(1), delivered(1)}}},
		{"empty 200", 200, ``, mixed, [][]Result{{unknownCount, unknownCount}, {unknownCount}, {unknownCount}}},
		{"whitespace 200", 200, " \r\n\t ", mixed[:1], [][]Result{{unknownCount, unknownCount}}},
		{"unreachableSince RFC 3339", 200,
			`{"results":[{"userId":"alice","status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"},{"userId":"bob","status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T11:00:00+01:00"}]}`,
			mixed[:1], [][]Result{{skippedSince, skippedSince}}},
		{"unreachableSince epoch ms number and string", 200,
			`{"results":[{"userId":"alice","status":"skipped","reason":"no_active_device","unreachableSince":1793527200000},{"userId":"bob","status":"skipped","reason":"no_active_device","unreachableSince":"1793527200000"}]}`,
			mixed[:1], [][]Result{{skippedSince, skippedSince}}},
		{"unreachableSince epoch seconds number and string", 200,
			`{"results":[{"userId":"alice","status":"skipped","reason":"no_active_device","unreachableSince":1793527200},{"userId":"bob","status":"skipped","reason":"no_active_device","unreachableSince":"1793527200.0"}]}`,
			mixed[:1], [][]Result{{skippedSince, skippedSince}}},
		{"empty object 200", 200, `{}`, mixed, [][]Result{{unknownCount, unknownCount}, {unknownCount}, {unknownCount}}},
		{"empty results 200", 200, ` {"results": [ ]} `, mixed[:2], [][]Result{{unknownCount, unknownCount}, {unknownCount}}},
		{"unreachableSince null", 200,
			`{"results":[{"userId":"alice","status":"skipped","reason":"no_active_device","unreachableSince":null},{"userId":"bob","status":"skipped","reason":"no_active_device"}]}`,
			mixed[:1], [][]Result{{skipped, skipped}}},
		{"unknown fields and keys in other case", 200,
			`{"requestId":"x","meta":{"a":[1,2,{"b":null}]},"RESULTS":[{"UserId":"alice","Status":"delivered","deviceCount":1,"extra":[true,false]},{"userId":"bob","status":"delivered","deviceCount":1.0,"platform":"ios"}],"more":"stuff"}`,
			mixed[:1], [][]Result{{delivered(1), delivered(1)}}},
		{"out of order matched by echo", 200,
			`[{"topics":["deals","news"],"status":"delivered","deviceCount":5},{"deviceId":"kiosk-1","status":"delivered","deviceCount":1},{"userId":"bob","status":"skipped","reason":"no_active_device"},{"userId":"alice","status":"delivered","deviceCount":2}]`,
			mixed, [][]Result{{delivered(2), skipped}, {delivered(1)}, {delivered(5)}}},
		{"results without echo taken in order", 200,
			`[{"status":"delivered","deviceCount":2},{"status":"skipped","reason":"no_active_device"}]`,
			mixed[:1], [][]Result{{delivered(2), skipped}}},
		{"structured message kept as text", 207,
			`[{"userId":"alice","status":"failed","message":{"code":7}},{"userId":"bob","status":"failed","message":null,"reason":"x"}]`,
			mixed[:1], [][]Result{{{Outcome: OutcomeFailed, Message: `{"code":7}`}, {Outcome: OutcomeFailed, Reason: "x"}}}},
		{"escaped strings", 200,
			`[{"userId":"al\u0069ce","status":"delivered","deviceCount":1},{"userId":"bob","status":"failed","message":"\ud83d\ude00 \"quoted\"\n"}]`,
			mixed[:1], [][]Result{{delivered(1), {Outcome: OutcomeFailed, Message: "😀 \"quoted\"\n"}}}},
		{"one entry per topic, in order", 200,
			`[{"userId":"alice","status":"delivered","deviceCount":2},{"userId":"bob","status":"skipped","reason":"no_active_device"},{"deviceId":"kiosk-1","status":"delivered","deviceCount":1},{"topics":["deals"],"status":"delivered","deviceCount":2},{"topics":["news"],"status":"delivered","deviceCount":3}]`,
			mixed, [][]Result{{delivered(2), skipped}, {delivered(1)}, {delivered(5)}}},
		{"one entry per topic, named by topic, out of order", 207,
			`[{"topic":"news","status":"failed","message":"m2"},{"userId":"bob","status":"skipped","reason":"no_active_device"},{"topic":"deals","status":"failed","message":"m1"},{"deviceId":"kiosk-1","status":"delivered","deviceCount":1},{"userId":"alice","status":"delivered","deviceCount":2}]`,
			mixed, [][]Result{{delivered(2), skipped}, {delivered(1)}, {{Outcome: OutcomeFailed, Message: "m1"}}}},
		{"one entry per topic, no echoes", 200,
			`[{"status":"delivered","deviceCount":2},{"status":"skipped","reason":"no_active_device"},{"status":"delivered","deviceCount":1},{"status":"skipped","reason":"no_active_device"},{"status":"delivered","deviceCount":4}]`,
			mixed, [][]Result{{delivered(2), skipped}, {delivered(1)}, {delivered(4)}}},
		{"per topic: delivered wins, a count unknown", 207,
			`[{"topics":"deals","status":"failed","message":"m"},{"topics":"news","status":"delivered"}]`,
			mixed[2:], [][]Result{{unknownCount}}},
		{"per topic: failed over skipped", 207,
			`[{"topics":["deals"],"status":"skipped","reason":"no_active_device"},{"topics":["news"],"status":"failed","message":"gone"}]`,
			mixed[2:], [][]Result{{{Outcome: OutcomeFailed, Message: "gone"}}}},
		{"per topic: all skipped", 200,
			`[{"topics":["deals"],"status":"skipped","reason":"no_active_device"},{"topics":["news"],"reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"}]`,
			mixed[2:], [][]Result{{skippedSince}}},
		{"one topic echoed as a string", 200,
			`[{"topic":"deals","status":"delivered","deviceCount":2}]`,
			[]Notification{{Topics: []string{"deals"}, Title: "T", Body: "B"}}, [][]Result{{delivered(2)}}},
		{"same user in two notifications, results alike", 200,
			`[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"alice","status":"delivered","deviceCount":1}]`,
			[]Notification{{UserIDs: []string{"alice"}, Title: "a", Body: "b"}, {UserIDs: []string{"alice"}, BadgeCount: intp(1)}},
			[][]Result{{delivered(1)}, {delivered(1)}}},
		{"one topic in two topics arrays told apart by the arrays", 207,
			`[{"topics":["deals","news"],"status":"delivered","deviceCount":3},{"topics":["deals"],"status":"failed","message":"m"}]`,
			[]Notification{mixed[2], {Topics: []string{"deals"}, Title: "T", Body: "B"}}, [][]Result{{delivered(3)}, {{Outcome: OutcomeFailed, Message: "m"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, canned{status: tc.status, body: tc.body, headers: map[string]string{"x-request-id": "rid-42"}})
			c := newClient(t, srv.URL)
			got, err := c.Send(context.Background(), tc.batch)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got.RequestID != "rid-42" || got.StatusCode != tc.status {
				t.Errorf("request id %q status %d", got.RequestID, got.StatusCode)
			}
			want := withEchoes(tc.batch, tc.want)
			if !reflect.DeepEqual(normalize(got.Results), normalize(want)) {
				t.Errorf("results:\n got %+v\nwant %+v", show(got.Results), show(want))
			}
		})
	}
}

// withEchoes fills the echo of each expected result from the batch.
func withEchoes(batch []Notification, want [][]Result) [][]Result {
	out := make([][]Result, len(want))
	for i := range want {
		ts := targetsOf(batch[i : i+1])
		out[i] = make([]Result, len(want[i]))
		for j := range want[i] {
			out[i][j] = want[i][j]
			fillEcho(&out[i][j], &ts[j])
		}
	}
	return out
}

// normalize makes times comparable with DeepEqual.
func normalize(rs [][]Result) [][]Result {
	for i := range rs {
		for j := range rs[i] {
			if u := rs[i][j].UnreachableSince; u != nil {
				t := u.UTC()
				rs[i][j].UnreachableSince = &t
			}
		}
	}
	return rs
}

func show(rs [][]Result) string {
	var b strings.Builder
	for _, row := range rs {
		for _, r := range row {
			dc := "nil"
			if r.DeviceCount != nil {
				dc = string(rune('0' + *r.DeviceCount))
			}
			since := ""
			if r.UnreachableSince != nil {
				since = r.UnreachableSince.Format(time.RFC3339)
			}
			b.WriteString("{" + r.UserID + r.DeviceID + strings.Join(r.Topics, "+") + " " + string(r.Outcome) +
				" dc=" + dc + " reason=" + r.Reason + " msg=" + r.Message + " since=" + since + "} ")
		}
		b.WriteString("| ")
	}
	return b.String()
}

func TestSendDecodeErrors(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       string // in the error's Err
	}{
		{"not JSON", `<html>oops</html>`, 200, "the answer is not JSON (it looks like an HTML page)"},
		{"truncated", `{"results":[{"userId":"alice","status":"deliv`, 200, "the answer ended inside a string"},
		{"truncated after entry", `{"results":[{"userId":"alice","status":"delivered","deviceCount":1},`, 200, "the answer ended early"},
		{"too few results", `[{"userId":"alice","status":"delivered","deviceCount":1}]`, 200, "1 results for 2 targets"},
		{"too many results", `[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"delivered","deviceCount":1},{"userId":"carol","status":"delivered","deviceCount":1}]`, 200, "3 results for 2 targets"},
		{"target not sent", `[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"mallory","status":"delivered","deviceCount":1}]`, 200, `target not sent (or named twice): userId "mallory"`},
		{"target named twice", `[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"alice","status":"delivered","deviceCount":1}]`, 207, "named twice"},
		{"wrong echo kind", `[{"deviceId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"delivered","deviceCount":1}]`, 200, "not sent"},
		{"status wrong type", `[{"userId":"alice","status":1},{"userId":"bob","status":"delivered"}]`, 200, "status: at byte"},
		{"unknown outcome", `[{"userId":"alice","status":"exploded"},{"userId":"bob","status":"delivered"}]`, 200, `unknown outcome "exploded"`},
		{"no outcome", `[{"userId":"alice"},{"userId":"bob","status":"delivered"}]`, 200, "no outcome"},
		{"results not array", `{"results":{"userId":"alice"}}`, 200, "results is an object, want an array"},
		{"same user in two notifications, results differ", `[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"delivered","deviceCount":1},{"userId":"alice","status":"skipped","reason":"r"},{"userId":"bob","status":"delivered","deviceCount":1}]`, 200, `the request addressed userId "alice" in two notifications and their results differ`},
		{"same user in two notifications, in order yet told apart by nothing", `[{"userId":"alice","status":"delivered","deviceCount":1},{"userId":"bob","status":"delivered","deviceCount":1},{"userId":"alice","status":"failed","message":"too long"},{"userId":"bob","status":"failed","message":"too long"}]`, 207, "which is whose cannot be told"},
		{"the same topics array in two notifications, per topic", `[{"topics":["news"],"status":"delivered","deviceCount":1},{"topics":["deals"],"status":"delivered","deviceCount":1},{"topics":["deals"],"status":"skipped","reason":"no_active_device"},{"topics":["news"],"status":"delivered","deviceCount":2}]`, 200, `topic "deals" in two notifications`},
		{"empty object 207", `{}`, 207, "a 207 must list results"},
		{"empty results 207", `{"results":[]}`, 207, "a 207 must list results"},
		{"empty results with trailing data", `{"results":[]} x`, 200, "data after the results"},
		{"object without results", `{"ok":true}`, 200, `the answer is an object without a "results" array`},
		{"trailing data", `[{"userId":"alice","status":"delivered"},{"userId":"bob","status":"delivered"}] x`, 200, "data after the results"},
		{"per topic: a topic missing", `[{"userId":"alice","status":"delivered"},{"userId":"bob","status":"delivered"},{"topics":["news"],"status":"delivered"}]`, 200, `1 results for the 2 topics of topics ["deals", "news"]`},
		{"per topic: a topic not sent", `[{"userId":"alice","status":"delivered"},{"userId":"bob","status":"delivered"},{"topic":"news","status":"delivered"},{"topic":"sports","status":"delivered"}]`, 200, `names a target not sent (or named twice): topic "sports"`},
		{"per topic: counts fit neither shape", `[{"userId":"alice","status":"delivered"},{"userId":"bob","status":"delivered"},{"topic":"news","status":"delivered"},{"topic":"deals","status":"delivered"},{"topic":"deals","status":"delivered"}]`, 200, "5 results for 3 targets (4 counting one per topic)"},
		{"empty 207", ``, 207, "a 207 must list results"},
		{"entry not object", `["alice","bob"]`, 200, `want "{"`},
		{"deep nesting", `{"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `,"results":[]}`, 200, "nesting too deep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, canned{status: tc.status, body: tc.body, headers: map[string]string{"x-request-id": "rid-7"}})
			c := newClient(t, srv.URL)
			batch := mixed[:1]
			switch {
			case strings.HasPrefix(tc.name, "per topic"):
				batch = []Notification{mixed[0], mixed[2]}
			case strings.HasPrefix(tc.name, "same user in two"):
				batch = []Notification{mixed[0], {UserIDs: []string{"alice", "bob"}, Title: "T2", Body: "B2"}}
			case strings.HasPrefix(tc.name, "the same topics array"):
				batch = []Notification{mixed[2], mixed[2]}
			}
			_, err := c.Send(context.Background(), batch)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want *DecodeError, got %T %v", err, err)
			}
			if de.RequestID != "rid-7" || de.StatusCode != tc.status || !strings.Contains(de.Err.Error(), tc.want) {
				t.Errorf("got %v; want request id rid-7, status %d, %q", err, tc.status, tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, "request id rid-7") || !strings.Contains(msg, "may have been delivered") {
				t.Errorf("message lacks request id or ambiguity: %s", msg)
			}
			if len(de.Excerpt) > excerptMax+len("HTML page: …") {
				t.Errorf("excerpt not bounded: %d bytes", len(de.Excerpt))
			}
			if safe, ambiguous, _ := Retryable(err); safe || !ambiguous {
				t.Errorf("Retryable = safe %v ambiguous %v; a send decode error is ambiguous", safe, ambiguous)
			}
		})
	}
}

func TestSendHugeBody(t *testing.T) {
	big := `[{"userId":"alice","status":"delivered","message":"` + strings.Repeat("x", 3<<20) + `"},{"userId":"bob","status":"delivered"}]`
	srv := serve(t, canned{status: 200, body: big})
	c := newClient(t, srv.URL, func(o *Options) { o.MaxResponseBytes = 1 << 20 })
	_, err := c.Send(context.Background(), mixed[:1])
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("want DecodeError for a body over the cap, got %v", err)
	}
	if len(err.Error()) > 2000 {
		t.Errorf("error message is %d bytes; excerpts must be bounded", len(err.Error()))
	}
	// The same body within the cap decodes.
	c2 := newClient(t, srv.URL, func(o *Options) { o.MaxResponseBytes = 8 << 20 })
	if _, err := c2.Send(context.Background(), mixed[:1]); err != nil {
		t.Fatalf("within the cap: %v", err)
	}
}

func TestSendEmptyBatch(t *testing.T) {
	srv := serve(t, canned{status: 200})
	c := newClient(t, srv.URL)
	if _, err := c.Send(context.Background(), nil); err == nil {
		t.Fatal("empty batch: want error")
	}
	if n := len(srv.recorded()); n != 0 {
		t.Errorf("empty batch sent %d requests", n)
	}
}

// TestDecodeFastPaths checks the exact-spelling shortcuts of the result
// decoder agree with the case-folding and strconv paths they go around.
func TestDecodeFastPaths(t *testing.T) {
	for _, name := range []string{"userId", "deviceId", "topic", "topics", "status", "outcome", "result",
		"deviceCount", "reason", "message", "unreachableSince", "other"} {
		id, canon := entryKey([]byte(name))
		uid, ucanon := entryKey([]byte(strings.ToUpper(name)))
		if id != uid || canon != ucanon || (name != "other" && canon != name) {
			t.Errorf("entryKey(%q) = %d %q, upper case %d %q", name, id, canon, uid, ucanon)
		}
	}
	for _, v := range []string{"delivered", "skipped", "failed", "unknown"} {
		o, ok := parseOutcome([]byte(v))
		uo, uok := parseOutcome([]byte(" " + strings.ToUpper(v)))
		if o != uo || ok != uok || ok != (v != "unknown") {
			t.Errorf("parseOutcome(%q) = %q %v, upper case %q %v", v, o, ok, uo, uok)
		}
	}
	for _, v := range []string{"0", "7", "42", "999999999", "1000000000", "", "-1", "1.0", "1e3", "07", " 1", "x"} {
		n, ok := smallUint([]byte(v))
		want, err := strconv.ParseUint(v, 10, 64)
		if ok && (err != nil || uint64(n) != want) {
			t.Errorf("smallUint(%q) = %d, strconv says %d, %v", v, n, want, err)
		}
		if !ok && len(v) <= 9 && err == nil {
			t.Errorf("smallUint(%q) refused a count strconv reads", v)
		}
	}
}

// TestSendReleaseReuses checks an answer decoded into the memory another
// answer released carries nothing of it.
func TestSendReleaseReuses(t *testing.T) {
	srv := serve(t,
		canned{status: 207, body: `[{"userId":"alice","status":"delivered","deviceCount":3},{"userId":"bob","status":"skipped","reason":"no_active_device"}]`},
		canned{status: 207, body: `[{"userId":"alice","status":"failed","message":"gone"},{"userId":"bob","status":"delivered"}]`})
	c := newClient(t, srv.URL)
	batch := []Notification{{Title: "t", Body: "b", UserIDs: []string{"alice", "bob"}}}
	first, err := c.Send(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if got := show(first.Results); !strings.Contains(got, "dc=3") || !strings.Contains(got, "no_active_device") {
		t.Fatalf("first answer: %s", got)
	}
	first.Release()
	first.Release() // twice is harmless
	if first.Results != nil {
		t.Fatal("Release left the results readable")
	}
	second, err := c.Send(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	r := second.Results[0]
	if r[0].Outcome != OutcomeFailed || r[0].Message != "gone" || r[0].DeviceCount != nil ||
		r[1].Outcome != OutcomeDelivered || r[1].Reason != "" || r[1].DeviceCount != nil {
		t.Fatalf("second answer: %s", show(second.Results))
	}
}
