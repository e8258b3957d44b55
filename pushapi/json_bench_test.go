package pushapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"

	"pushform/internal/testutil/cpubench"
)

// The client's JSON is read and written with jsontext (encode.go, scan.go,
// decode.go). These benchmarks compare it with the same work done by
// encoding/json, on the
// shapes apply sends and receives: a request of 500 user ids, its
// 500-entry answer, and a recipients list. TestStdDecoderAgrees checks
// both decoders give the same results, so the comparison is like for like.

// stdEntry is a result entry as encoding/json would take it, tolerant the
// same way: any of the outcome field names, counts as numbers or strings,
// messages as any JSON, times as RFC 3339 or epoch milliseconds.
type stdEntry struct {
	UserID           *string         `json:"userId"`
	DeviceID         *string         `json:"deviceId"`
	Topics           []string        `json:"topics"`
	Status           *string         `json:"status"`
	Outcome          *string         `json:"outcome"`
	Result           *string         `json:"result"`
	DeviceCount      json.RawMessage `json:"deviceCount"`
	Reason           json.RawMessage `json:"reason"`
	Message          json.RawMessage `json:"message"`
	UnreachableSince json.RawMessage `json:"unreachableSince"`
}

// stdDecodeSendResults is decodeSendResults written with encoding/json.
func stdDecodeSendResults(body []byte, batch []Notification) ([][]Result, error) {
	ts := targetsOf(batch)
	var entries []stdEntry
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &entries); err != nil {
			return nil, err
		}
	} else {
		var obj struct {
			Results []stdEntry `json:"results"`
		}
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, err
		}
		entries = obj.Results
	}
	es := make([]entry, len(entries))
	rs := make([]Result, len(entries))
	for k := range entries {
		e, out := &entries[k], &es[k]
		out.Result = &rs[k]
		r := out.Result
		if e.UserID != nil {
			r.UserID, out.echo = *e.UserID, out.echo|echoUser
		}
		if e.DeviceID != nil {
			r.DeviceID, out.echo = *e.DeviceID, out.echo|echoDevice
		}
		if e.Topics != nil {
			r.Topics, out.echo = e.Topics, out.echo|echoTopics
		}
		for _, o := range []*string{e.Status, e.Outcome, e.Result} {
			if o != nil {
				out, ok := parseOutcome([]byte(*o))
				if !ok {
					return nil, fmt.Errorf("unknown outcome %q", *o)
				}
				r.Outcome = out
			}
		}
		if len(e.DeviceCount) > 0 && string(e.DeviceCount) != "null" {
			v := e.DeviceCount
			var s string
			if json.Unmarshal(v, &s) == nil {
				v = []byte(s)
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil || f != math.Trunc(f) || f < 0 {
				return nil, errors.New("bad deviceCount")
			}
			n := int(f)
			r.DeviceCount = &n
		}
		r.Reason = stdText(e.Reason)
		r.Message = stdText(e.Message)
		if len(e.UnreachableSince) > 0 && string(e.UnreachableSince) != "null" {
			var s string
			if json.Unmarshal(e.UnreachableSince, &s) == nil {
				t, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					return nil, err
				}
				r.UnreachableSince = &t
			}
		}
		if r.Outcome == "" {
			switch {
			case r.Message != "":
				r.Outcome = OutcomeFailed
			case r.Reason != "":
				r.Outcome = OutcomeSkipped
			case r.DeviceCount != nil:
				r.Outcome = OutcomeDelivered
			default:
				return nil, errors.New("no outcome")
			}
		}
	}
	flat, err := match(es, rs, len(es), ts)
	if err != nil {
		return nil, err
	}
	return split(flat, ts, len(batch)), nil
}

// decodeRecipientsBody decodes a whole recipients page.
func decodeRecipientsBody(body []byte) ([]string, error) {
	var ids []string
	s := newScanner(body)
	_, err := s.recipientsPage(func(id []byte) error {
		ids = append(ids, string(id))
		return nil
	}, nil)
	return ids, err
}

func stdText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func TestStdDecoderAgrees(t *testing.T) {
	batch := batch500()
	body := results500(batch)
	want, err := decodeSendResults(nil, body, 207, batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := stdDecodeSendResults(body, batch)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Fatal("encoding/json decoder disagrees with the jsontext one")
	}
	var std []string
	if err := json.Unmarshal(recipientsBody(1000), &std); err != nil {
		t.Fatal(err)
	}
	ids, err := decodeRecipientsBody(recipientsBody(1000))
	if err != nil || !reflect.DeepEqual(ids, std) {
		t.Fatalf("recipients disagree: %v", err)
	}
}

// recipientsBody is a bare array of n user ids like the sandbox's.
func recipientsBody(n int) []byte {
	b := []byte{'['}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"u%07d"`, i)
	}
	return append(b, ']')
}

// BenchmarkJSON compares the client's JSON (on jsontext) with encoding/json
// on one 500-target request, its answer, and a list of 100,000 recipients.
func BenchmarkJSON(b *testing.B) {
	batch := batch500()
	answer := results500(batch)
	recips := recipientsBody(100_000)
	b.Run("request=500/jsontext", func(b *testing.B) {
		var pool bufPool
		cpubench.PerTarget(b, 500, func() {
			buf := pool.get()
			*buf = appendBatch(*buf, batch)
			pool.put(buf)
		})
	})
	b.Run("request=500/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, 500, func() {
			if _, err := json.Marshal(batch); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("response=500/jsontext", func(b *testing.B) {
		cpubench.PerTarget(b, 500, func() {
			if _, err := decodeSendResults(nil, answer, 207, batch, nil); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("response=500/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, 500, func() {
			if _, err := stdDecodeSendResults(answer, batch); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("recipients=100k/jsontext", func(b *testing.B) {
		cpubench.PerTarget(b, 100_000, func() {
			if _, err := decodeRecipientsBody(recips); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("recipients=100k/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, 100_000, func() {
			var ids []string
			if err := json.Unmarshal(recips, &ids); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("recipients=100k/encoding-json-stream", func(b *testing.B) {
		cpubench.PerTarget(b, 100_000, func() {
			dec := json.NewDecoder(bytes.NewReader(recips))
			if _, err := dec.Token(); err != nil {
				b.Fatal(err)
			}
			for dec.More() {
				var id string
				if err := dec.Decode(&id); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
