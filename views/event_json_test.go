package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pushform/executor"
)

// jsonEvent is the line encoding/json writes for l.
func jsonEvent(t testing.TB, l eventLine) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(l); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestAppendEventSameBytes: the hand-written line is encoding/json's, byte
// for byte, for every field set or left out; a string encoding/json would
// escape is left to it.
func TestAppendEventSameBytes(t *testing.T) {
	full := executor.Event{Type: executor.EventRetry, Batch: 7, Addresses: []string{"notification.a", "badge.b"}, Targets: 500,
		Attempt: 2, Delay: 1500 * time.Millisecond, RequestID: "req-1", Status: 503,
		Counts: executor.Counts{Delivered: 1, Skipped: 2, Failed: 3, Unknown: 4}, Error: "service unavailable",
		Parts: []int{12, 13}, TooLarge: true, Group: "campaign.black_friday", Rate: "600/minute", MovedFrom: []string{"notification.old"}, Unrecorded: true}
	for _, tc := range []struct {
		name  string
		e     executor.Event
		plain bool
	}{
		{"request", executor.Event{Type: executor.EventRequest, Batch: 3, Addresses: []string{"notification.announce"}, Targets: 500}, true},
		{"response", executor.Event{Type: executor.EventResponse, Batch: 63, Addresses: []string{"notification.announce"}, Targets: 500,
			RequestID: "req-df5df85755d622a118f28dab", Status: 200, Counts: executor.Counts{Delivered: 500}}, true},
		{"every field", full, true},
		{"empty lists", executor.Event{Type: executor.EventRequest, Addresses: []string{}, Parts: []int{}, MovedFrom: []string{}}, true},
		{"zero", executor.Event{}, true},
		{"negative numbers", executor.Event{Type: executor.EventResponse, Batch: -1, Targets: -2, Status: -3}, true},
		{"quote in an error", executor.Event{Type: executor.EventError, Error: `status 400: "title" is required`}, false},
		{"html in a request id", executor.Event{Type: executor.EventResponse, RequestID: "<script>&"}, false},
		{"control character in an address", executor.Event{Type: executor.EventRequest, Addresses: []string{"notification.a\x1b[31m"}}, false},
		{"non-ASCII in a moved address", executor.Event{Type: executor.EventMove, MovedFrom: []string{"notification.café"}}, false},
		{"backslash in a rate", executor.Event{Type: executor.EventPacing, Rate: `1\2`}, false},
		{"invalid UTF-8 in an error", executor.Event{Type: executor.EventError, Error: "bad \xff byte"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := eventLine{tc.e, durationString(tc.e.Delay)}
			got, ok := appendEvent([]byte("kept"), &l)
			if ok != tc.plain {
				t.Fatalf("appendEvent reported %v, want %v", ok, tc.plain)
			}
			if !ok {
				if string(got) != "kept" {
					t.Fatalf("appendEvent appended %q to a line it left to encoding/json", got)
				}
				return
			}
			if want := "kept" + jsonEvent(t, l); string(got) != want {
				t.Fatalf("appendEvent wrote\n%s\nencoding/json writes\n%s", got, want)
			}
		})
	}
}

// FuzzAppendEvent: whatever the strings and numbers, the line is either
// encoding/json's or left to it.
func FuzzAppendEvent(f *testing.F) {
	f.Add("response", 1, "notification.a", 500, 0, int64(0), "req-1", 200, 500, "", "", "")
	f.Add("retry", 2, "badge.b", 10, 3, int64(time.Second), "", 503, 0, "unavailable", "campaign.x", "60/minute")
	f.Add("error", 0, "a<b", 0, 0, int64(0), "\x00", 0, 0, "\"quoted\"", "é", "\\")
	f.Fuzz(func(t *testing.T, typ string, batch int, addr string, targets, attempt int, delay int64, reqID string, status, delivered int, errText, group, rate string) {
		e := executor.Event{Type: executor.EventType(typ), Batch: batch, Targets: targets, Attempt: attempt,
			Delay: time.Duration(delay), RequestID: reqID, Status: status, Counts: executor.Counts{Delivered: delivered, Failed: -delivered},
			Error: errText, Group: group, Rate: rate, Parts: []int{batch, attempt}[:min(max(attempt, 0), 2)]}
		if addr != "" {
			e.Addresses, e.MovedFrom = []string{addr, strings.ToUpper(addr)}, []string{addr}
		}
		l := eventLine{e, durationString(e.Delay)}
		got, ok := appendEvent(nil, &l)
		if !ok {
			if len(got) != 0 {
				t.Fatalf("appendEvent appended %q to a line it left to encoding/json", got)
			}
			return
		}
		if want := jsonEvent(t, l); string(got) != want {
			t.Fatalf("appendEvent wrote\n%s\nencoding/json writes\n%s", got, want)
		}
	})
}
