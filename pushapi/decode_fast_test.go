package pushapi

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// sameAsGeneral fails t unless res and err, decoded with the fast path,
// are what the general path alone makes of body.
func sameAsGeneral(t *testing.T, body []byte, status int, batch []Notification, res [][]Result, err error) {
	t.Helper()
	want, wantErr := decodeResults(nil, nil, body, status, batch, nil, false)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(res, want) {
		t.Fatalf("body %q\nfast:    %v %s\ngeneral: %v %s", body, err, showResults(res), wantErr, showResults(want))
	}
}

func showResults(res [][]Result) string {
	var b strings.Builder
	for _, rs := range res {
		for _, r := range rs {
			fmt.Fprintf(&b, "{%q %q %v %s", r.UserID, r.DeviceID, r.Topics, r.Outcome)
			if r.DeviceCount != nil {
				fmt.Fprintf(&b, " count %d", *r.DeviceCount)
			}
			if r.UnreachableSince != nil {
				fmt.Fprintf(&b, " since %s", r.UnreachableSince)
			}
			fmt.Fprintf(&b, " %q %q} ", r.Reason, r.Message)
		}
	}
	return b.String()
}

// users3 and users6 are requests of users, the fast path's usual request.
var (
	users3 = []Notification{{UserIDs: []string{"u1", "u2", "u3"}}}
	users6 = []Notification{{UserIDs: []string{"u1", "u2", "u3", "u4", "u5", "u6"}}}
)

func TestFastPathTaken(t *testing.T) {
	batch := sandboxBatch500()
	for _, mixed := range []bool{false, true} {
		body := sandboxAnswer500(batch, mixed)
		rd := newResultsReader(targetsOf(batch), &scratch{}, nil)
		if !rd.fast(body) || rd.sub != nil {
			t.Errorf("mixed %v: the sandbox's answer is not read by the fast path alone", mixed)
		}
	}
	// An answer of other shapes is handed to the general path early.
	other := bytes.ReplaceAll(sandboxAnswer500(batch, false), []byte(`"status"`), []byte(`"outcome"`))
	if rd := newResultsReader(targetsOf(batch), &scratch{}, nil); rd.fast(other) || rd.n > 8 {
		t.Errorf("an answer of other spellings: read by the fast path up to entry %d", rd.n)
	}
	res, err := decodeSendResults(nil, other, 207, batch, nil)
	sameAsGeneral(t, other, 207, batch, res, err)
	entries := func(es ...string) string { return `{"results":[` + strings.Join(es, ",") + `]}` }
	const d = `{"userId":"u1","status":"delivered","deviceCount":1}`
	cases := []struct {
		body string
		fast bool // read by the fast path (some entries maybe by the general decoder)
	}{
		{entries(d, d, d), true},
		{" [ " + d + " ,\n" + d + "\t," + d + " ] \r\n", true},
		{entries(d, `{ "userId" : "u2" , "status" : "skipped" , "reason" : "x" , "unreachableSince" : 1793527200 }`, d), true},
		{entries(d, `{"message":"m","reason":"r"}`, `{"deviceCount":0}`), true}, // outcomes inferred
		// Entries of other shapes, read by the general decoder.
		{entries(`{"userId":"u\u0031","status":"delivered","deviceCount":1}`, d, d), true},
		{entries(d, `{"USERID":"u2","status":"Delivered","deviceCount":"1","x":[1]}`, d), true},
		{entries(d, d, `{"userId":"u3","status":"failed","message":{"code":1}}`), true},
		{entries(d, `{"userId":"u2","userId":"u2","status":"delivered"}`, d), true},
		{entries(d, d, `{"userId":"ü","status":"delivered","deviceCount":1e0}`), true},
		// Answers of other shapes, and errors, read by the general path.
		{entries(), false},
		{entries(d, d, d, d), false},
		{entries(d, d, `{"userId":"u3"}`), false},
		{entries(d, d, `{"userId":"u3","status":"maybe"}`), false},
		{entries(d, d, d) + "x", false},
		{`{"results":[` + d + "," + d + "," + d + `],"next":null}`, false},
		{`{"Results":[` + d + "," + d + "," + d + `]}`, false},
		{`{"results":[` + d + "," + d + "," + d + `}`, false},
		{`[` + d + "," + d + "," + d + `,]`, false},
		{`[` + d + "," + d + "," + d, false},
	}
	for _, c := range cases {
		if got := newResultsReader(targetsOf(users3), &scratch{}, nil).fast([]byte(c.body)); got != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.body, got, c.fast)
		}
		res, err := decodeSendResults(nil, []byte(c.body), 207, users3, nil)
		sameAsGeneral(t, []byte(c.body), 207, users3, res, err)
	}
}

func FuzzFastEntry(f *testing.F) {
	for _, s := range []string{
		`{"userId":"u0000001","status":"delivered","deviceCount":1}`,
		`{"userId":"u0000001","status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"}`,
		`{"userId":"u0000001","status":"skipped","reason":"no_active_device","unreachableSince":1793527200000}`,
		`{"userId":"u0000001","status":"failed","message":"apns: BadDeviceToken (410)"}`,
		`{"deviceId":"kiosk-1","status":"delivered","deviceCount":0}`,
		`{ "userId" : "a" , "status":"DELIVERED" ,"deviceCount": 123456789 }`,
		`{"status":"delivered","deviceCount":01}`,
		`{"status":"delivered","deviceCount":1.0}`,
		`{"status":"delivered","deviceCount":1234567890}`,
		`{"status":"delivered","deviceCount":-1}`,
		`{"message":"m","reason":"r"}`,
		`{"reason":"r","message":"m","deviceCount":2}`,
		`{"userId":"a\"b","status":"delivered"}`,
		`{"userId":"a\\","status":"delivered"}`,
		"{\"userId\":\"a\x7f\x80\",\"status\":\"delivered\"}",
		`{"userId":"u0000001","status":"skipped","unreachableSince":" 1793527200 "}`,
		`{"userId":"u0000001","status":"skipped","unreachableSince":"yesterday"}`,
		`{"userId":"u0000001","status":"skipped","unreachableSince":""}`,
		`{"userId":"u1","status":"delivered","userId":"u2"}`,
		`{"userId":"u1","status":"delivered","topics":["a"]}`,
		`{}`,
	} {
		f.Add([]byte(s), "u0000001", byte('u'))
	}
	for _, s := range []string{
		`{"userId":"u0000001","status":"delivered","deviceCount":0}`,
		`{"userId":"u0000001","status":"delivered","deviceCount":123456789}`,
		`{"userId":"u0000001","status":"delivered","deviceCount":1234567890}`,
		`{"userId":"u0000001","status":"delivered","deviceCount":007}`,
		`{"userId":"u0000001","status":"delivered","deviceCount":1 }`,
		`{"userId":"u0000001","status":"delivered","deviceCount":1,"deviceCount":2}`,
		`{"userId":"u0000001","status":"delivered","deviceCount":1`,
		`{"userId":"u000000","status":"delivered","deviceCount":1}`,
		`{"userId":"u\u0030000001","status":"delivered","deviceCount":1}`,
	} {
		f.Add([]byte(s), "u0000001", byte('u'))
	}
	f.Add([]byte(`{"userId":"a\"b","status":"delivered","deviceCount":1}`), `a\"b`, byte('u'))
	f.Add([]byte(`{"userId":"a"b","status":"delivered","deviceCount":1}`), `a"b`, byte('u'))
	f.Fuzz(func(t *testing.T, b []byte, id string, kind byte) {
		if len(b) == 0 || b[0] != '{' {
			return
		}
		exp := &target{kind: kind, id: id}
		for name, fast := range map[string]func([]byte, int, *entry, *target, *int) (int, bool){"fastEntry": fastEntry, "fastDelivered": fastDelivered} {
			var r Result
			e, count := entry{Result: &r}, new(int)
			end, ok := fast(b, 0, &e, exp, count)
			if !ok {
				continue
			}
			var r2 Result
			e2, count2 := entry{Result: &r2}, new(int)
			s := newScanner(b)
			if err := s.entry(&e2, exp, count2); err != nil {
				t.Fatalf("%q: %s reads %+v, the general decoder fails: %v", b, name, r, err)
			}
			if int(s.dec.InputOffset()) != end {
				t.Fatalf("%q: %s ends at %d, the general decoder at %d", b, name, end, s.dec.InputOffset())
			}
			e.Result, e2.Result = nil, nil
			if !reflect.DeepEqual(r, r2) || e != e2 {
				t.Fatalf("%q:\n%s: %+v %+v\ngeneral: %+v %+v", b, name, r, e, r2, e2)
			}
		}
	})
}

func FuzzDecodeSendFast(f *testing.F) {
	const d = `{"userId":"u1","status":"delivered","deviceCount":1}`
	for _, s := range []string{
		`{"results":[` + d + `,{"userId":"u2","status":"skipped","reason":"no_active_device"},{"userId":"u3","status":"failed","message":"m"}]}`,
		`[` + d + `,{"userId":"u2","status":"skipped","reason":"no_active_device","unreachableSince":1793527200},{"userId":"u3","status":"delivered","deviceCount":2}]`,
		`{"results":[{"userId":"u3","status":"delivered","deviceCount":1},{"userId":"u2","status":"delivered","deviceCount":1},{"userId":"u1","status":"delivered","deviceCount":1}]}`,
		`{"results":[{"userId":"u\u0031","outcome":"delivered"},{"USERID":"u2","status":"delivered","x":{}},{"status":"failed","message":["m"]}]}`,
		` { "results" : [ ` + d + ` , ` + d + ` , ` + d + ` ] } `,
		`{"results":[` + d + `,` + d + `]}`,
		`{"results":[]}`,
		`[` + strings.Repeat(`{"userId":"u1","outcome":"delivered"},`, 5) + d + `]`,
		`[` + strings.Repeat(`{"userId":"u1","status":"delivered","deviceCount":"1"},`, 4) + d + `,` + d + `]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, batch := range [][]Notification{users3, users6} {
			res, err := decodeSendResults(nil, body, 207, batch, nil)
			sameAsGeneral(t, body, 207, batch, res, err)
		}
	})
}

// TestScratchReuse decodes answers one after another with one pool: the
// results of one are not changed by the next, and the pool keeps nothing
// of them.
func TestScratchReuse(t *testing.T) {
	var pool scratchPool
	answers := []struct {
		body  string
		batch []Notification
	}{
		{`{"results":[{"userId":"u1","status":"delivered","deviceCount":1},{"userId":"u2","status":"skipped","reason":"r"},{"userId":"u3","status":"failed","message":"m"}]}`, users3},
		{`[{"topic":"news","status":"failed","message":"m2"},{"userId":"bob","reason":"no_active_device"},{"topics":["deals"],"status":"delivered"},{"deviceId":"kiosk-1","deviceCount":1},{"userId":"alice","deviceCount":2}]`, mixed},
		{`{"results":[{"userId":"u3","status":"delivered","deviceCount":3},{"userId":"u2","status":"delivered","deviceCount":2},{"userId":"u1","status":"delivered","deviceCount":1}]}`, users3},
		{`{"results":[{"userId":"u1","status":"delivered"}]}`, users3}, // an error
	}
	var got, want [][][]Result
	for _, a := range answers {
		res, err := decodeSendResults(&pool, []byte(a.body), 207, a.batch, nil)
		sameAsGeneral(t, []byte(a.body), 207, a.batch, res, err)
		w, _ := decodeSendResults(nil, []byte(a.body), 207, a.batch, nil)
		got, want = append(got, res), append(want, w)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results changed by later answers:\n%v\n%v", got, want)
	}

	sc := pool.get()
	sc.ts = appendTargets(sc.ts, mixed)
	sc.es = append(sc.es, entry{Result: &Result{}, topic: "news"})
	pool.put(sc)
	for _, tg := range sc.ts[:cap(sc.ts)] {
		if tg.id != "" || tg.topics != nil {
			t.Fatalf("a pooled target keeps %+v", tg)
		}
	}
	for _, e := range sc.es[:cap(sc.es)] {
		if e.Result != nil || e.topic != "" {
			t.Fatalf("a pooled entry keeps %+v", e)
		}
	}
}

// TestFastDelivered: the commonest entry is matched whole; any other
// shape, spacing or id is left to fastEntry (FuzzFastEntry checks what is
// matched against the general decoder).
func TestFastDelivered(t *testing.T) {
	exp := &target{kind: 'u', id: "u0000001"}
	for _, tc := range []struct {
		entry string
		count int // -1: not matched
	}{
		{`{"userId":"u0000001","status":"delivered","deviceCount":1}`, 1},
		{`{"userId":"u0000001","status":"delivered","deviceCount":123456789},`, 123456789},
		{`{"userId":"u0000001","status":"delivered","deviceCount":1234567890}`, -1},
		{`{"userId":"u0000001","status":"delivered","deviceCount":01}`, -1},
		{`{"userId":"u0000001","status":"delivered","deviceCount":1 }`, -1},
		{`{"userId":"u0000002","status":"delivered","deviceCount":1}`, -1},
		{`{"userId":"u000000","status":"delivered","deviceCount":1}`, -1},
		{`{"userId":"u\u0030000001","status":"delivered","deviceCount":1}`, -1},
		{`{"userId":"u0000001","status":"skipped","deviceCount":1}`, -1},
		{`{"userId":"u0000001","status":"delivered","deviceCount":1`, -1},
		{`{"userId": "u0000001","status":"delivered","deviceCount":1}`, -1},
	} {
		var r Result
		e, count := entry{Result: &r}, new(int)
		end, ok := fastDelivered([]byte(tc.entry), 0, &e, exp, count)
		if ok != (tc.count >= 0) {
			t.Errorf("%s: matched %v", tc.entry, ok)
			continue
		}
		if ok && (*count != tc.count || r.DeviceCount != count || r.UserID != exp.id || r.Outcome != OutcomeDelivered || e.echo != echoUser || tc.entry[end-1] != '}') {
			t.Errorf("%s: read %+v, count %d, end %d", tc.entry, r, *count, end)
		}
	}
}
