package views

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pushform/executor"
	"pushform/internal/testutil"
)

// eventLines returns the lines apply --json writes for events, the version
// line first.
func eventLines(events ...executor.Event) []byte {
	var out bytes.Buffer
	v := NewApplyJSON(&out)
	for _, e := range events {
		v.Event(e)
	}
	v.Flush()
	return out.Bytes()
}

// TestApplyJSONEventsGolden pins the event lines of apply --json: which
// keys each type writes, and which it leaves out when empty, in order;
// strings that need escaping (quotes, HTML, control characters, invalid
// UTF-8) escaped as encoding/json escapes them.
func TestApplyJSONEventsGolden(t *testing.T) {
	got := eventLines(
		executor.Event{},
		executor.Event{Type: executor.EventRequest, Batch: 3, Addresses: []string{"notification.announce"}, Targets: 500},
		executor.Event{Type: executor.EventRetry, Batch: 3, Addresses: []string{"notification.announce"}, Targets: 500,
			Attempt: 2, Delay: 1500 * time.Millisecond, Status: 503, Error: "service unavailable"},
		executor.Event{Type: executor.EventResponse, Batch: 63, Addresses: []string{"notification.announce", "badge.b"}, Targets: 500,
			RequestID: "req-df5df85755d622a118f28dab", Status: 200, Counts: executor.Counts{Delivered: 497, Skipped: 1, Failed: 1, Unknown: 1}},
		executor.Event{Type: executor.EventResponse, Batch: 64, Targets: 10, Status: 200, Counts: executor.Counts{Unknown: 10}, Unrecorded: true},
		executor.Event{Type: executor.EventError, Batch: 5, Addresses: []string{"notification.a"}, Targets: 2,
			Status: 400, Error: "status 400: \"title\" <b>&</b> \x1b[31m \u2028 bad \xff byte", Counts: executor.Counts{Failed: 2}},
		executor.Event{Type: executor.EventSplit, Batch: 7, Targets: 500, Status: 400, Parts: []int{12, 13}},
		executor.Event{Type: executor.EventPacing, Batch: 8, Targets: 500, Delay: 250 * time.Millisecond, Group: "campaign.black_friday", Rate: "600/minute"},
		executor.Event{Type: executor.EventForget, Addresses: []string{"notification.old"}},
		executor.Event{Type: executor.EventMove, Addresses: []string{"notification.new", "notification.café"}, MovedFrom: []string{"notification.old", "notification.cafe"}},
		executor.Event{Type: executor.EventRequest, Addresses: []string{}, Parts: []int{}, MovedFrom: []string{}},
		executor.Event{Type: executor.EventQuiet, Batch: 9, Addresses: []string{"notification.night"}, Targets: 40, At: "2026-12-01T20:00:00Z"},
	)
	testutil.Golden(t, filepath.Join("testdata", "apply-events.jsonl"), got)
}

// TestApplyJSONEveryEventField: each field of executor.Event, set alone,
// changes what apply --json writes under its JSON name. A field added to
// the event reaches the output with no other change, or this fails.
func TestApplyJSONEveryEventField(t *testing.T) {
	decode := func(line []byte) map[string]any {
		t.Helper()
		lines := bytes.Split(bytes.TrimSuffix(line, []byte("\n")), []byte("\n"))
		var m map[string]any
		if err := json.Unmarshal(lines[len(lines)-1], &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return m
	}
	zero := decode(eventLines(executor.Event{}))
	typ := reflect.TypeFor[executor.Event]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		t.Run(f.Name, func(t *testing.T) {
			var e executor.Event
			reflect.ValueOf(&e).Elem().Field(i).Set(nonZero(t, f.Type))
			got := decode(eventLines(e))
			if _, ok := got[name]; !ok || reflect.DeepEqual(got[name], zero[name]) {
				t.Fatalf("with executor.Event.%s set to %#v, apply --json writes %v under %q, as for the zero event",
					f.Name, reflect.ValueOf(e).Field(i), got[name], name)
			}
		})
	}
}

// nonZero returns a value of type typ that is not its zero value, and
// none of whose fields or elements is.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(7.5)
	case reflect.Slice:
		v = reflect.Append(reflect.MakeSlice(typ, 0, 1), nonZero(t, typ.Elem()))
	case reflect.Map:
		v = reflect.MakeMap(typ)
		v.SetMapIndex(nonZero(t, typ.Key()), nonZero(t, typ.Elem()))
	case reflect.Pointer:
		v = reflect.New(typ.Elem())
		v.Elem().Set(nonZero(t, typ.Elem()))
	case reflect.Struct:
		for i := range typ.NumField() {
			if typ.Field(i).IsExported() {
				v.Field(i).Set(nonZero(t, typ.Field(i).Type))
			}
		}
	default:
		t.Fatalf("no non-zero value of %s to test with: teach nonZero its kind", typ)
	}
	return v
}

// BenchmarkApplyJSONEvent: one response event of a 500-target request,
// as a million-target apply writes 2,000 of them.
func BenchmarkApplyJSONEvent(b *testing.B) {
	v := NewApplyJSON(discard{})
	v.after = time.Hour
	e := executor.Event{Type: executor.EventResponse, Batch: 1234, Addresses: []string{"notification.announce"}, Targets: 500,
		RequestID: "req-df5df85755d622a118f28dab", Status: 200, Counts: executor.Counts{Delivered: 500}}
	b.ReportAllocs()
	for b.Loop() {
		v.Event(e)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
