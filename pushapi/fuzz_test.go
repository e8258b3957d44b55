package pushapi

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func FuzzDecodeSendResponse(f *testing.F) {
	seeds := []string{
		``,
		`{"results":[{"userId":"alice","status":"delivered","deviceCount":2},{"userId":"bob","status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"},{"deviceId":"kiosk-1","outcome":"FAILED","message":"x"},{"topics":["deals","news"],"deviceCount":"3"}]}`,
		`[{"topics":["deals","news"],"result":"delivered"},{"deviceId":"kiosk-1","deviceCount":1},{"userId":"bob","reason":"r","unreachableSince":1793527200000},{"userId":"alice","message":{"a":[1]}}]`,
		`{"results":[{"userId":"al\u0069ce\ud83d\ude00","status":"delivered"}]}`,
		`{"x":[[[[{}]]]],"results":[]}`,
		`[1e5, -0.5, true, null]`,
		`[{"topic":"news","status":"failed","message":"m2"},{"userId":"bob","reason":"no_active_device"},{"topics":["deals"],"status":"delivered"},{"deviceId":"kiosk-1","deviceCount":1},{"userId":"alice","deviceCount":2}]`,
		`[{"status":"delivered"},{"status":"delivered"},{"status":"delivered"},{"topics":"deals","status":"delivered"},{"status":"skipped","reason":"x"}]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), 200)
		f.Add([]byte(s), 207)
	}
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		res, err := decodeSendResults(nil, body, status, mixed, nil)
		sameAsGeneral(t, body, status, mixed, res, err)
		if err != nil {
			return
		}
		if len(res) != len(mixed) {
			t.Fatalf("%d rows for %d notifications", len(res), len(mixed))
		}
		for i := range mixed {
			if len(res[i]) != mixed[i].Targets() {
				t.Fatalf("notification %d: %d results for %d targets", i, len(res[i]), mixed[i].Targets())
			}
			for _, r := range res[i] {
				switch r.Outcome {
				case OutcomeDelivered, OutcomeSkipped, OutcomeFailed:
				default:
					t.Fatalf("outcome %q", r.Outcome)
				}
				if r.DeviceCount != nil && *r.DeviceCount < 0 {
					t.Fatalf("negative count")
				}
			}
		}
		if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
	})
}

func FuzzDecodeRecipients(f *testing.F) {
	for _, s := range []string{
		`["alice","bob"]`,
		`{"userIds":["a"],"next":"c2"}`,
		`{"data":[{"userId":"a"},{"id":"b"}],"cursor":12}`,
		`{"recipients":[],"nextCursor":null,"meta":{"x":[1,2,3]}}`,
		`["\u00e9\ud800"]`,
		`{"meta":{"a":[1,{"b":"\"c"}],"n":-1.5e3},"userIds":["x\ny",{"id":"z"}],"cursor":"next page"}`,
		`[` + strings.Repeat(`"abcdefghij",`, 50) + `"k"]`,
		`{"data":["a"],"links":{"self":"/v1/r","next":"/v1/r?p=2"},"meta":{"total":"3","hasMore":true}}`,
		`{"_links":{"next":{"href":"./r?p=2","title":"x"}},"data":[],"paging":{"page":1,"totalPages":4}}`,
		`{"userIds":["a"],"nextPageUri":"x","pagination":{"meta":{"next":"deep"}},"next":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var whole []string
		s := newScanner(body)
		cursor, err := s.recipientsPage(func(id []byte) error {
			if len(id) == 0 {
				t.Fatal("empty user id accepted")
			}
			whole = append(whole, string(id))
			return nil
		}, nil)
		// Read as a stream, a byte at a time through the smallest window,
		// the body decodes the same.
		var streamed []string
		ss := newStreamScanner(iotest.OneByteReader(bytes.NewReader(body)), 1)
		cursor2, err2 := ss.recipientsPage(func(id []byte) error {
			streamed = append(streamed, string(id))
			return nil
		}, nil)
		if (err == nil) != (err2 == nil) || cursor != cursor2 || !slices.Equal(whole, streamed) {
			t.Fatalf("whole: %q %+v %v\nstream: %q %+v %v", whole, cursor, err, streamed, cursor2, err2)
		}
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
	})
}

func FuzzErrorBodies(f *testing.F) {
	f.Add([]byte(`{"issues":[{"path":[0,"title"],"message":"m"},"s",{"path":[1e99,{"a":1}],"message":[1]}]}`))
	f.Add([]byte(`<html><title>502</title></html>`))
	f.Add([]byte(`[{"index":"1","field":["a",2]},{"pointer":"/2/a~1b"},{"source":{"pointer":"/0"}},{"message":"[1].title x"},"[0] body: y",{"path":"[1].x"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		issues, _ := decodeIssues(body, 3, nil)
		for _, is := range issues {
			if is.Index < -1 || is.Index >= 3 {
				t.Fatalf("index %d out of range", is.Index)
			}
			_ = is.String()
		}
		if e := excerpt(body, ""); len(e) > excerptMax+len("HTML page: …") {
			t.Fatalf("excerpt of %d bytes", len(e))
		}
	})
}

// FuzzRecipientsFastPath holds readRecipientsPage, whose fast path reads
// a bare array's plain ids straight from the bytes, to the general scanner
// alone: the same ids, paging and error (byte offsets included), read
// whole or a byte at a time; the start of the answer it shows is the
// answer's.
func FuzzRecipientsFastPath(f *testing.F) {
	long := strings.Repeat("x", MaxUserIDBytes+1)
	for _, s := range []string{
		`["alice","bob","carol"]`,
		` [ "a" , "b" ,` + "\n\t" + `"c" ] `,
		`["a","b",]`,
		`["a","b"`,
		`["a","b",`,
		`["a","b" "c"]`,
		`["a","b","c"] x`,
		`["a","b","c"]]`,
		`["a","","c"]`,
		`["a","b\u0063","d"]`,
		`["a","b","é","d"]`,
		`["a","b",{"userId":"c"},"d"]`,
		`["a","b",1,"d"]`,
		`["a","b","` + long + `","d"]`,
		`["a","a","b","a"]`,
		`["b","a","c"]`,
		"[\"a\",\"b\",\"c\x01\"]",
		`{"userIds":["a","b"],"next":"x"}`,
		`[` + strings.Repeat(`"abcdefghij",`, 30) + `"k"]`,
		`[]`,
		``,
		`[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		type result struct {
			ids  []string
			info pageInfo
			err  string
			head string
		}
		general := func(r io.Reader, head int) result {
			var res result
			s := newStreamScanner(r, head)
			info, err := s.recipientsPage(func(id []byte) error { res.ids = append(res.ids, string(id)); return nil }, nil)
			res.info, res.head = info, string(s.start())
			if err != nil {
				res.err = err.Error()
			}
			return res
		}
		fast := func(r io.Reader, head int) result {
			var res result
			s, info, err := readRecipientsPage(r, head, func(id []byte) error { res.ids = append(res.ids, string(id)); return nil }, nil)
			res.info, res.head = info, string(s.start())
			if err != nil {
				res.err = err.Error()
			}
			return res
		}
		for _, head := range []int{1, 64 << 10} {
			for _, reader := range []func() io.Reader{
				func() io.Reader { return bytes.NewReader(body) },
				func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
			} {
				want, got := general(reader(), head), fast(reader(), head)
				// The start of the answer an error shows is as much as
				// each had read by then, up to head bytes.
				if !strings.HasPrefix(string(body), got.head) || len(got.head) > head || want.err != "" && got.head == "" && len(body) > 0 {
					t.Fatalf("%q (head %d): the start shown is %q", body, head, got.head)
				}
				want.head, got.head = "", ""
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%q (head %d):\nfast:    %+v\ngeneral: %+v", body, head, got, want)
				}
			}
		}
	})
}
