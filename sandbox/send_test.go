package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	for _, tc := range []struct {
		name, key, path string
		want            string
	}{
		{"send without key", "", "send", "missing API key"},
		{"send with unknown key", "k-nope", "send", "invalid API key"},
		{"recipients without key", "", "recipients", "missing API key"},
		{"recipients with unknown key", "k-nope", "recipients", "invalid API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			if tc.path == "send" {
				r = c.send(tc.key, `[{"userIds":["alice"],"title":"t","body":"b"}]`)
			} else {
				r = c.recipients(tc.key, "")
			}
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.status)
			}
			checkRequestID(t, r)
			var body struct{ Message string }
			r.json(t, &body)
			if !strings.Contains(body.Message, tc.want) {
				t.Errorf("message %q, want %q", body.Message, tc.want)
			}
			if strings.Contains(string(r.body), "k-nope") {
				t.Errorf("the answer echoes the key: %s", r.body)
			}
		})
	}
	if got := c.device("alice-phone").Received; got != 0 {
		t.Errorf("an unauthorized send delivered: received %d", got)
	}
}

func TestRequestIDOnEveryAnswer(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	seen := map[string]bool{}
	for _, tc := range []struct {
		name   string
		do     func() response
		status int
	}{
		{"200", func() response { return c.send("k-test", `[{"userIds":["u0001"],"title":"t","body":"b"}]`) }, 200},
		{"207", func() response { return c.send("k-test", `[{"userIds":["frank"],"title":"t","body":"b"}]`) }, 207},
		{"400", func() response { return c.send("k-test", `{}`) }, 400},
		{"401", func() response { return c.send("", `[]`) }, 401},
		{"404", func() response { return c.do("GET", c.base+"/nothing", "k-test", "", nil) }, 404},
		{"405", func() response { return c.do("GET", c.base+"/push-notifications/send", "k-test", "", nil) }, 405},
		{"415", func() response {
			return c.do("POST", c.base+"/push-notifications/send", "k-test", "text/plain", []byte(`[]`))
		}, 415},
		{"recipients", func() response { return c.recipients("k-test", "") }, 200},
		{"inspection", func() response { return c.do("GET", c.root+"/_sandbox/stats", "", "", nil) }, 200},
		{"inspection 404", func() response { return c.do("GET", c.root+"/_sandbox/devices/none", "", "", nil) }, 404},
		{"outside", func() response { return c.do("GET", c.root+"/", "", "", nil) }, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do()
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			checkRequestID(t, r)
			id := r.header.Get("x-request-id")
			if seen[id] {
				t.Errorf("request id %s given twice", id)
			}
			seen[id] = true
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// issuesOf decodes a 400 answer's issues, paths rendered as JSON.
func issuesOf(t *testing.T, r response) map[string]string {
	t.Helper()
	if r.status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: %s", r.status, r.body)
	}
	var body struct {
		Issues []struct {
			Path    json.RawMessage `json:"path"`
			Message string          `json:"message"`
		} `json:"issues"`
	}
	r.json(t, &body)
	out := map[string]string{}
	for _, is := range body.Issues {
		out[string(is.Path)] = is.Message
	}
	return out
}

func TestValidation(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	ids := func(n int, prefix string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%q", fmt.Sprintf("%s%d", prefix, i))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	for _, tc := range []struct {
		name string
		body string
		want map[string]string // JSON path -> part of the message
	}{
		{"not JSON", `[{"userIds":`, map[string]string{`[]`: "invalid JSON"}},
		{"empty body", ``, map[string]string{`[]`: "empty"}},
		{"object, not array", `{"userIds":["alice"]}`, map[string]string{`[]`: "JSON array"}},
		{"null", `null`, map[string]string{`[]`: "JSON array"}},
		{"empty array", `[]`, map[string]string{`[]`: "empty"}},
		{"element not object", `[3, "x"]`, map[string]string{`[0]`: "object", `[1]`: "object"}},
		{"no target", `[{"title":"t","body":"b"}]`, map[string]string{`[0]`: "exactly one of userIds, deviceIds and topics"}},
		{"two targets", `[{"userIds":["a"],"topics":["deals"],"title":"t","body":"b"}]`,
			map[string]string{`[0,"topics"]`: "cannot be combined with userIds"}},
		{"three targets", `[{"userIds":["a"],"deviceIds":["d"],"topics":["deals"],"title":"t","body":"b"}]`,
			map[string]string{`[0,"deviceIds"]`: "cannot be combined", `[0,"topics"]`: "cannot be combined"}},
		{"ids not an array", `[{"userIds":"alice","title":"t","body":"b"}]`, map[string]string{`[0,"userIds"]`: "array of strings"}},
		{"ids null", `[{"deviceIds":null,"title":"t","body":"b"}]`, map[string]string{`[0,"deviceIds"]`: "array of strings, not null"}},
		{"ids empty", `[{"topics":[],"title":"t","body":"b"}]`, map[string]string{`[0,"topics"]`: "must not be empty"}},
		{"id empty string", `[{"userIds":["a",""],"title":"t","body":"b"}]`, map[string]string{`[0,"userIds",1]`: "non-empty string"}},
		{"id not a string", `[{"userIds":["a",7,{"x":1}],"title":"t","body":"b"}]`,
			map[string]string{`[0,"userIds",1]`: "string, not a number", `[0,"userIds",2]`: "string, not an object"}},
		{"title without body", `[{"userIds":["a"],"title":"t"}]`, map[string]string{`[0,"body"]`: "required with title"}},
		{"body without title", `[{"userIds":["a"],"body":"b"}]`, map[string]string{`[0,"title"]`: "required with body"}},
		{"nothing to show", `[{"userIds":["a"]}]`, map[string]string{`[0]`: "badgeCount"}},
		{"nothing to show, other fields", `[{"userIds":["a"],"tag":"x","openToUrl":"https://a.example"}]`, map[string]string{`[0]`: "badgeCount"}},
		{"title not a string", `[{"userIds":["a"],"title":1,"body":"b"}]`, map[string]string{`[0,"title"]`: "string, not a number"}},
		{"body null", `[{"userIds":["a"],"title":"t","body":null}]`, map[string]string{`[0,"body"]`: "string, not null"}},
		{"badge fraction", `[{"userIds":["a"],"badgeCount":1.5}]`, map[string]string{`[0,"badgeCount"]`: "non-negative integer, not 1.5"}},
		{"badge string", `[{"userIds":["a"],"badgeCount":"3"}]`, map[string]string{`[0,"badgeCount"]`: `non-negative integer, not "3"`}},
		{"badge negative", `[{"userIds":["a"],"badgeCount":-1}]`, map[string]string{`[0,"badgeCount"]`: "non-negative integer"}},
		{"badge huge", `[{"userIds":["a"],"badgeCount":1e12}]`, map[string]string{`[0,"badgeCount"]`: "non-negative integer"}},
		{"badge bool", `[{"userIds":["a"],"badgeCount":true}]`, map[string]string{`[0,"badgeCount"]`: "non-negative integer"}},
		{"url relative", `[{"userIds":["a"],"title":"t","body":"b","openToUrl":"/sale"}]`, map[string]string{`[0,"openToUrl"]`: "absolute URL"}},
		{"url no host", `[{"userIds":["a"],"title":"t","body":"b","openToUrl":"https://"}]`, map[string]string{`[0,"openToUrl"]`: "absolute URL"}},
		{"url not a string", `[{"userIds":["a"],"title":"t","body":"b","openToUrl":5}]`, map[string]string{`[0,"openToUrl"]`: "string"}},
		{"silent not bool", `[{"userIds":["a"],"title":"t","body":"b","silentInForeground":"yes"}]`,
			map[string]string{`[0,"silentInForeground"]`: "boolean, not a string"}},
		{"tag not a string", `[{"userIds":["a"],"title":"t","body":"b","tag":["x"]}]`, map[string]string{`[0,"tag"]`: "string, not an array"}},
		{"unknown field", `[{"userIds":["a"],"title":"t","body":"b","priority":"high","userids":["b"]}]`,
			map[string]string{`[0,"priority"]`: "unknown field", `[0,"userids"]`: "did you mean userIds?"}},
		{"every issue of every element",
			`[{"userIds":["a"],"title":"t","body":"b"},{"deviceIds":[""],"title":"t"},{"topics":["x"],"badgeCount":"1"}]`,
			map[string]string{`[1,"deviceIds",0]`: "non-empty", `[1,"body"]`: "required", `[2,"badgeCount"]`: "integer"}},
		{"501 userIds in one object", `[{"userIds":` + ids(501, "u") + `,"title":"t","body":"b"}]`,
			map[string]string{`[]`: "at most 500"}},
		{"501 userIds in all", `[{"userIds":` + ids(300, "u") + `,"title":"t","body":"b"},{"userIds":` + ids(201, "v") + `,"badgeCount":1}]`,
			map[string]string{`[]`: "this one has 501"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.send("k-test", tc.body)
			checkRequestID(t, r)
			got := issuesOf(t, r)
			for path, want := range tc.want {
				if msg, ok := got[path]; !ok || !strings.Contains(msg, want) {
					t.Errorf("issue at %s: got %q, want it to contain %q (all: %v)", path, msg, want, got)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d issues, want %d: %v", len(got), len(tc.want), got)
			}
		})
	}
	var st Stats
	c.do("GET", c.root+"/_sandbox/stats", "", "", nil).json(t, &st)
	if st.SendRequests != 0 || st.Deliveries != 0 {
		t.Errorf("a rejected request was processed: %+v", st)
	}
}

func TestValidRequestsAccepted(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"u%04d"`, i)
	}
	for _, tc := range []struct{ name, body string }{
		{"500 userIds", `[{"userIds":[` + strings.Join(ids, ",") + `],"title":"t","body":"b"}]`},
		{"500 userIds over two objects, plus devices and topics",
			`[{"userIds":[` + strings.Join(ids[:250], ",") + `],"title":"t","body":"b"},` +
				`{"userIds":[` + strings.Join(ids[250:], ",") + `],"badgeCount":0},` +
				`{"deviceIds":["kiosk-1"],"title":"t","body":"b"},{"topics":["deals"],"title":"t","body":"b"}]`},
		{"every field", `[{"userIds":["alice"],"title":"t","body":"b","openToUrl":"myapp://orders/1","badgeCount":3.0,"silentInForeground":true,"tag":"order-1"}]`},
		{"badge only, zero", `[{"deviceIds":["kiosk-1"],"badgeCount":0}]`},
		{"mailto URL", `[{"userIds":["alice"],"title":"t","body":"b","openToUrl":"mailto:help@example.com"}]`},
		{"escapes and unicode", `[{"userIds":["al\u0069ce"],"title":"caf\u00e9 \"x\"","body":"línea\nnueva"}]`},
		{"whitespace around", " \n[ {\"userIds\" : [ \"alice\" ] , \"badgeCount\" : 1 } ]\n "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.send("k-test", tc.body)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
		})
	}
}

func TestBodyCap(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	big := `[{"userIds":["a"],"title":"` + strings.Repeat("x", MaxBodyBytes) + `","body":"b"}]`
	r := c.send("k-test", big)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", r.status)
	}
	checkRequestID(t, r)
	if !strings.Contains(string(r.body), `"issues"`) {
		t.Errorf("body %s", r.body)
	}
}

func TestOutcomes(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	for _, tc := range []struct {
		name   string
		key    string
		body   string
		status int
		want   []result
	}{
		{"users, production key", "k-prod",
			`[{"userIds":["alice","bob","carol","gina","nobody","u0001"],"title":"t","body":"b"}]`, 200, []result{
				{UserID: "alice", Status: "delivered", DeviceCount: intp(1)},
				{UserID: "bob", Status: "skipped", Reason: "no_active_device", UnreachableSince: "2026-09-15T12:30:00Z"},
				{UserID: "carol", Status: "skipped", Reason: "no_active_device"},
				{UserID: "gina", Status: "skipped", Reason: "no_active_device"},
				{UserID: "nobody", Status: "skipped", Reason: "no_active_device"},
				{UserID: "u0001", Status: "skipped", Reason: "no_active_device"},
			}},
		{"users, test key", "k-test",
			`[{"userIds":["alice","bob","carol","dave","u0001","u2499","u2500","u01"],"title":"t","body":"b"}]`, 200, []result{
				{UserID: "alice", Status: "delivered", DeviceCount: intp(1)},
				// bob's only device runs the production app; his last contact is still known.
				{UserID: "bob", Status: "skipped", Reason: "no_active_device", UnreachableSince: "2026-09-15T12:30:00Z"},
				{UserID: "carol", Status: "delivered", DeviceCount: intp(1)}, // permission does not matter for sending
				{UserID: "dave", Status: "delivered", DeviceCount: intp(1)},  // offline: held, still delivered
				{UserID: "u0001", Status: "delivered", DeviceCount: intp(1)},
				{UserID: "u2499", Status: "delivered", DeviceCount: intp(1)},
				{UserID: "u2500", Status: "skipped", Reason: "no_active_device"},
				{UserID: "u01", Status: "skipped", Reason: "no_active_device"},
			}},
		{"legacy key is production", "k-legacy",
			`[{"userIds":["alice"],"title":"t","body":"b"},{"deviceIds":["kiosk-1","kiosk-prod"],"badgeCount":1}]`, 200, []result{
				{UserID: "alice", Status: "delivered", DeviceCount: intp(1)},
				{DeviceID: "kiosk-1", Status: "skipped", Reason: "no_active_device"},
				{DeviceID: "kiosk-prod", Status: "delivered", DeviceCount: intp(1)},
			}},
		{"devices, test key", "k-test",
			`[{"deviceIds":["kiosk-1","alice-phone","alice-test-phone","bob-phone","d0007","nope"],"title":"t","body":"b"}]`, 200, []result{
				{DeviceID: "kiosk-1", Status: "delivered", DeviceCount: intp(1)},
				{DeviceID: "alice-phone", Status: "skipped", Reason: "no_active_device", UnreachableSince: "2026-11-01T10:00:00Z"},
				{DeviceID: "alice-test-phone", Status: "delivered", DeviceCount: intp(1)},
				{DeviceID: "bob-phone", Status: "skipped", Reason: "no_active_device", UnreachableSince: "2026-09-15T12:30:00Z"},
				{DeviceID: "d0007", Status: "delivered", DeviceCount: intp(1)},
				{DeviceID: "nope", Status: "skipped", Reason: "no_active_device"},
			}},
		{"topics, test key", "k-test",
			`[{"topics":["deals"],"title":"t","body":"b"},{"topics":["deals","news"],"title":"t","body":"b"},{"topics":["nothing"],"title":"t","body":"b"}]`, 200, []result{
				{Topics: []string{"deals"}, Status: "delivered", DeviceCount: intp(2)},
				{Topics: []string{"deals", "news"}, Status: "delivered", DeviceCount: intp(3)}, // kiosk-1 once
				{Topics: []string{"nothing"}, Status: "skipped", Reason: "no_active_device"},
			}},
		{"topics, production key", "k-prod",
			`[{"topics":["deals"],"title":"t","body":"b"},{"topics":["news"],"title":"t","body":"b"}]`, 200, []result{
				{Topics: []string{"deals"}, Status: "delivered", DeviceCount: intp(2)},
				{Topics: []string{"news"}, Status: "skipped", Reason: "no_active_device"},
			}},
		{"one device of two fails: delivered", "k-test",
			`[{"userIds":["erin"],"title":"t","body":"b"}]`, 200, []result{
				{UserID: "erin", Status: "delivered", DeviceCount: intp(1)},
			}},
		{"every device fails: 207", "k-test",
			`[{"userIds":["alice","frank"],"title":"t","body":"b"},{"deviceIds":["erin-broken"],"badgeCount":2},{"topics":["broken"],"title":"t","body":"b"}]`, 207, []result{
				{UserID: "alice", Status: "delivered", DeviceCount: intp(1)},
				{UserID: "frank", Status: "failed", Message: "DeviceTokenNotForTopic"},
				{DeviceID: "erin-broken", Status: "failed", Message: "InvalidRegistration"},
				{Topics: []string{"broken"}, Status: "failed", Message: "DeviceTokenNotForTopic"},
			}},
		{"failing device of the other environment: skipped, not failed", "k-prod",
			`[{"userIds":["frank"],"title":"t","body":"b"}]`, 200, []result{
				{UserID: "frank", Status: "skipped", Reason: "no_active_device"},
			}},
		{"skipped only: 200", "k-test",
			`[{"userIds":["gina","nobody"],"title":"t","body":"b"}]`, 200, []result{
				{UserID: "gina", Status: "skipped", Reason: "no_active_device"},
				{UserID: "nobody", Status: "skipped", Reason: "no_active_device"},
			}},
		{"a listed id twice: two entries", "k-test",
			`[{"userIds":["u0003","u0003"],"badgeCount":1}]`, 200, []result{
				{UserID: "u0003", Status: "delivered", DeviceCount: intp(1)},
				{UserID: "u0003", Status: "delivered", DeviceCount: intp(1)},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.send(tc.key, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			checkRequestID(t, r)
			if got := r.results(t); !reflect.DeepEqual(got, tc.want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(tc.want)
				t.Errorf("results\n got %s\nwant %s", gb, wb)
			}
		})
	}
}

func TestPermissionOnlyMattersForRecipients(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	var ids []string
	c.recipients("k-test", "").json(t, &ids)
	for _, id := range ids {
		if id == "carol" {
			t.Fatal("carol has not granted the permission but is a recipient")
		}
	}
	r := c.send("k-test", `[{"userIds":["carol"],"title":"t","body":"b"}]`)
	if got := r.results(t)[0].Status; got != "delivered" {
		t.Errorf("carol: %s", got)
	}
}

func TestDevicesKeepWhatTheyShow(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	send := func(body string) string {
		t.Helper()
		r := c.send("k-test", body)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		return r.header.Get("x-request-id")
	}
	titles := func(es []InboxEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Title)
		}
		return out
	}

	// Online: shown at once, a tag replaces, received counts every one.
	first := send(`[{"deviceIds":["kiosk-1"],"title":"Order A-1 packed","body":"b","tag":"order-A-1"}]`)
	send(`[{"deviceIds":["kiosk-1"],"title":"Hello","body":"b"}]`)
	second := send(`[{"deviceIds":["kiosk-1"],"title":"Order A-1 shipped","body":"b","tag":"order-A-1","badgeCount":4,"openToUrl":"https://shop.example/A-1","silentInForeground":true}]`)
	v := c.device("kiosk-1")
	if got, want := titles(v.Inbox), []string{"Hello", "Order A-1 shipped"}; !reflect.DeepEqual(got, want) {
		t.Errorf("inbox %v, want %v", got, want)
	}
	if v.Received != 3 || v.Badge != 4 {
		t.Errorf("received %d badge %d, want 3 and 4", v.Received, v.Badge)
	}
	e := v.Inbox[1]
	if e.RequestID != second || e.Tag != "order-A-1" || e.OpenToURL != "https://shop.example/A-1" || e.BadgeCount == nil || *e.BadgeCount != 4 || !e.SilentInForeground {
		t.Errorf("entry %+v (first request %s)", e, first)
	}

	// A badge-only update sets the badge, shows nothing.
	send(`[{"deviceIds":["kiosk-1"],"badgeCount":0}]`)
	v = c.device("kiosk-1")
	if v.Badge != 0 || v.Received != 3 || len(v.Inbox) != 2 {
		t.Errorf("after badge reset: badge %d received %d inbox %d", v.Badge, v.Received, len(v.Inbox))
	}

	// Offline: only the newest per tag is held, untagged all, then shown
	// when the device comes online.
	send(`[{"userIds":["dave"],"title":"Sale 1","body":"b","tag":"sale"}]`)
	send(`[{"userIds":["dave"],"title":"Note 1","body":"b"}]`)
	send(`[{"userIds":["dave"],"title":"Sale 2","body":"b","tag":"sale"}]`)
	send(`[{"userIds":["dave"],"title":"Note 2","body":"b","badgeCount":7}]`)
	send(`[{"userIds":["dave"],"badgeCount":9}]`)
	send(`[{"userIds":["dave"],"badgeCount":2}]`)
	v = c.device("dave-phone")
	if v.Online || v.Received != 0 || len(v.Inbox) != 0 {
		t.Errorf("offline device shows something: %+v", v)
	}
	if got, want := titles(v.Pending), []string{"Note 1", "Sale 2", "Note 2", ""}; !reflect.DeepEqual(got, want) {
		t.Errorf("pending %q, want %q", got, want)
	}
	r := c.patch("dave-phone", `{"online":true}`)
	if r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	checkRequestID(t, r)
	v = c.device("dave-phone")
	if got, want := titles(v.Inbox), []string{"Note 1", "Sale 2", "Note 2"}; !reflect.DeepEqual(got, want) || v.Received != 3 || v.Badge != 2 || len(v.Pending) != 0 {
		t.Errorf("after coming online: inbox %q received %d badge %d pending %d", got, v.Received, v.Badge, len(v.Pending))
	}
	send(`[{"userIds":["dave"],"title":"Sale 3","body":"b","tag":"sale"}]`)
	if got, want := titles(c.device("dave-phone").Inbox), []string{"Note 1", "Note 2", "Sale 3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("online replacement: %q, want %q", got, want)
	}
}

func TestInboxCap(t *testing.T) {
	s := New(mustSeed(t, conformanceSeed), Options{})
	for i := range maxInbox + 5 {
		ns, issues := decodeSendRequest(fmt.Appendf(nil, `[{"deviceIds":["kiosk-1"],"title":"n%d","body":"b"}]`, i))
		if issues != nil {
			t.Fatal(issues)
		}
		s.process(ns, envTest, "r")
	}
	v, _ := s.Device("kiosk-1")
	if len(v.Inbox) != maxInbox || v.Received != maxInbox+5 || v.Inbox[0].Title != "n5" {
		t.Errorf("inbox %d, received %d, oldest %q", len(v.Inbox), v.Received, v.Inbox[0].Title)
	}
}

func TestPatch(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	has := func(key, user string) bool {
		var ids []string
		c.recipients(key, "").json(t, &ids)
		for _, id := range ids {
			if id == user {
				return true
			}
		}
		return false
	}
	outcome := func(user string) string {
		return c.send("k-prod", `[{"userIds":["`+user+`"],"title":"t","body":"b"}]`).results(t)[0].Status
	}
	// bob lost his token: skipped, not a recipient. Re-registration brings him back.
	if outcome("bob") != "skipped" || has("k-prod", "bob") {
		t.Fatal("bob should start unreachable")
	}
	r := c.patch("bob-phone", `{"push_token":true}`)
	var v DeviceView
	r.json(t, &v)
	if !v.PushToken || !v.Permission || !v.Online {
		t.Errorf("after patch: %+v", v)
	}
	if outcome("bob") != "delivered" || !has("k-prod", "bob") {
		t.Error("bob should be reachable after re-registering")
	}
	// Losing the token again; permission off keeps sending but not the list.
	c.patch("alice-phone", `{"permission":false}`)
	if outcome("alice") != "delivered" || has("k-prod", "alice") {
		t.Error("alice without permission: delivered, not a recipient")
	}
	c.patch("alice-phone", `{"push_token":false}`)
	if outcome("alice") != "skipped" {
		t.Error("alice without token should be skipped")
	}
	// Range devices can be patched too.
	c.patch("d0042", `{"push_token":false}`)
	if has("k-test", "u0042") || !has("k-test", "u0043") {
		t.Error("u0042 should have left the recipients")
	}
	for _, tc := range []struct {
		id, body string
		status   int
	}{
		{"nope", `{"online":true}`, 404},
		{"kiosk-1", `{"online":"yes"}`, 400},
		{"kiosk-1", `{"colour":"red"}`, 400},
		{"kiosk-1", `[`, 400},
	} {
		if r := c.patch(tc.id, tc.body); r.status != tc.status {
			t.Errorf("patch %s %s: %d, want %d", tc.id, tc.body, r.status, tc.status)
		}
	}
}

func TestLogAndStats(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{})
	body := `[{"userIds":["alice","erin","gina"],"title":"t","body":"b"},{"topics":["deals"],"badgeCount":1}]`
	r := c.send("k-test", body)
	id := r.header.Get("x-request-id")
	lr := c.do("GET", c.root+"/_sandbox/log/"+id, "", "", nil)
	if lr.status != 200 {
		t.Fatalf("log: %d %s", lr.status, lr.body)
	}
	var entry struct {
		RequestID  string              `json:"requestId"`
		Status     int                 `json:"status"`
		Body       json.RawMessage     `json:"body"`
		Recipients map[string][]string `json:"recipients"`
		Results    []result            `json:"results"`
	}
	lr.json(t, &entry)
	if entry.RequestID != id || entry.Status != 200 || string(entry.Body) != body {
		t.Errorf("entry %+v", entry)
	}
	wantRecipients := map[string][]string{
		"0": {"alice-test-phone", "erin-broken", "erin-ok"},
		"1": {"alice-test-phone", "kiosk-1"},
	}
	if !reflect.DeepEqual(entry.Recipients, wantRecipients) {
		t.Errorf("recipients %v, want %v", entry.Recipients, wantRecipients)
	}
	if !reflect.DeepEqual(entry.Results, r.results(t)) {
		t.Errorf("logged results %+v differ from the answer", entry.Results)
	}

	bad := c.send("k-test", `[{"userIds":[]}]`)
	lr = c.do("GET", c.root+"/_sandbox/log/"+bad.header.Get("x-request-id"), "", "", nil)
	if !strings.Contains(string(lr.body), `"status":400`) || !strings.Contains(string(lr.body), `"issues"`) {
		t.Errorf("log of a 400: %s", lr.body)
	}
	if r := c.do("GET", c.root+"/_sandbox/log/req-nope", "", "", nil); r.status != 404 {
		t.Errorf("unknown log: %d", r.status)
	}

	var st Stats
	c.do("GET", c.root+"/_sandbox/stats", "", "", nil).json(t, &st)
	if st.SendRequests != 1 || st.Targets != 4 || st.Deliveries != 4 || st.BadRequests != 1 {
		t.Errorf("stats %+v", st)
	}
	var list struct {
		DeviceIDs []string `json:"deviceIds"`
	}
	c.do("GET", c.root+"/_sandbox/devices", "", "", nil).json(t, &list)
	if want := []string{"alice-test-phone", "erin-ok", "kiosk-1"}; !reflect.DeepEqual(list.DeviceIDs, want) {
		t.Errorf("devices %v, want %v", list.DeviceIDs, want)
	}
}

func TestLogEviction(t *testing.T) {
	var l requestLog
	l.maxBytes = 10_000
	for i := range 5000 {
		l.add(&logEntry{id: fmt.Sprint(i), body: make([]byte, 1000)})
	}
	if l.get("0") != nil || l.get("4999") == nil || l.bytes > l.maxBytes || len(l.byID) > 10 {
		t.Errorf("bytes %d, entries %d", l.bytes, len(l.byID))
	}
}

// TestConcurrentUse drives sends, patches, recipients, inspection and saves
// at once, for the race detector, and checks the counts add up.
func TestConcurrentUse(t *testing.T) {
	s, c := start(t, conformanceSeed, Options{})
	path := t.TempDir() + "/devices.json"
	const workers, rounds = 6, 25
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range rounds {
				switch (w + i) % 4 {
				case 0, 1:
					body := fmt.Sprintf(`[{"userIds":["u%04d","u%04d","dave"],"title":"t","body":"b","tag":"x%d"},{"topics":["deals"],"badgeCount":%d}]`, i, 2499-i, i%3, i)
					if r := c.send("k-test", body); r.status != http.StatusOK {
						t.Errorf("send: %d %s", r.status, r.body)
					}
				case 2:
					online := i%2 == 0
					s.Patch("dave-phone", DevicePatch{Online: &online})
					c.recipients("k-test", "")
				case 3:
					c.device("kiosk-1")
					if err := s.SaveDevices(path); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	st := s.Stats()
	if st.Targets != st.SendRequests*4 || st.Deliveries != st.SendRequests*(3+2) {
		t.Errorf("stats %+v", st)
	}
	var total int64
	for _, id := range s.ReceivedDevices() {
		v, _ := s.Device(id)
		total += v.Received + int64(len(v.Pending))
	}
	if total == 0 {
		t.Error("nothing received")
	}
}

func TestIssuesShapes(t *testing.T) {
	body := `[{"userIds":["alice"],"title":"t","body":"b"},{"userIds":["alice",""],"title":"t","body":"b","tag":"a/b"}]`
	for _, tc := range []struct{ shape, want string }{
		{IssuesPath, `{"issues":[{"path":[1,"userIds",1],"message":"must be a non-empty string"}]}`},
		{IssuesIndex, `{"issues":[{"index":1,"field":"userIds[1]","message":"must be a non-empty string"}]}`},
		{IssuesPointer, `{"issues":[{"pointer":"/1/userIds/1","message":"must be a non-empty string"}]}`},
		{IssuesMessage, `{"issues":[{"message":"[1] userIds[1]: must be a non-empty string"}]}`},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			_, c := start(t, conformanceSeed, Options{IssuesShape: tc.shape})
			if r := c.send("k-test", body); r.status != 400 || string(r.body) != tc.want {
				t.Errorf("%d %s\nwant %s", r.status, r.body, tc.want)
			}
			// A request-level issue names no notification in any shape.
			r := c.send("k-test", `[]`)
			want := map[string]string{
				IssuesPath:    `{"issues":[{"path":[],"message":"the array is empty: send at least one notification object"}]}`,
				IssuesPointer: `{"issues":[{"pointer":"","message":"the array is empty: send at least one notification object"}]}`,
			}[tc.shape]
			if want == "" {
				want = `{"issues":[{"message":"the array is empty: send at least one notification object"}]}`
			}
			if r.status != 400 || string(r.body) != want {
				t.Errorf("request-level: %d %s\nwant %s", r.status, r.body, want)
			}
		})
	}
}

func TestTopicResultsPerTopic(t *testing.T) {
	_, c := start(t, conformanceSeed, Options{TopicResults: TopicResultsPerTopic})
	r := c.send("k-test", `[{"topics":["deals","news","broken"],"title":"t","body":"b"}]`)
	// deals reaches alice-test-phone and kiosk-1 (the production devices
	// are not attempted); news reaches kiosk-1 again (once is enough) and
	// carol-phone; broken fails.
	want := `{"results":[{"topics":["deals"],"status":"delivered","deviceCount":2},` +
		`{"topics":["news"],"status":"delivered","deviceCount":1},` +
		`{"topics":["broken"],"status":"failed","message":"DeviceTokenNotForTopic"}]}`
	if r.status != 207 || string(r.body) != want {
		t.Errorf("%d %s\nwant %s", r.status, r.body, want)
	}
	if got := c.device("kiosk-1").Received; got != 1 {
		t.Errorf("kiosk-1 received %d, want 1", got)
	}
}
