package sandbox

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"pushform/internal/testutil/cpubench"
)

// The sandbox's JSON is read and written with jsontext (scan.go, decode.go,
// json.go). These benchmarks compare it with encoding/json on the shapes
// of the send path: a request of 500 user ids, its 500-entry answer, and a
// recipients list.

// stdSplit splits a send request with encoding/json instead of
// splitRequest, target arrays decoded too: a lower bound of what an
// encoding/json sandbox would do (decodeNotification validates afterwards).
func stdSplit(body []byte) ([]element, error) {
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(body, &objs); err != nil {
		return nil, err
	}
	elems := make([]element, len(objs))
	for i, o := range objs {
		e := element{object: true, fields: make(fieldMap, 0, len(o))}
		for k, v := range o {
			f := field{name: k, raw: v}
			if len(v) > 0 && v[0] == '[' { // an array of strings, as splitRequest decodes it
				var strs []string
				if json.Unmarshal(v, &strs) == nil && strs != nil {
					f.strs = strs
				}
			}
			e.fields = append(e.fields, f)
		}
		elems[i] = e
	}
	return elems, nil
}

// stdResult is a result entry as encoding/json would write it.
type stdResult struct {
	UserID      string `json:"userId,omitempty"`
	Status      string `json:"status"`
	DeviceCount *int   `json:"deviceCount,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
}

func benchAttempts() ([]string, []attempt) {
	ids := make([]string, MaxUserIDs)
	as := make([]attempt, MaxUserIDs)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
		switch i % 10 {
		case 9:
		case 8:
			as[i] = attempt{attempted: 1, failMsg: "device token expired"}
		default:
			as[i] = attempt{attempted: 2, delivered: 2}
		}
	}
	return ids, as
}

func sandboxResults(b []byte, ids []string, as []attempt) []byte {
	b = append(b, `{"results":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"userId":`...)
		b = appendJSONString(b, id)
		b = appendOutcome(b, &as[i], "", "")
	}
	return append(b, "]}"...)
}

func stdResults(ids []string, as []attempt) ([]byte, error) {
	rs := make([]stdResult, len(ids))
	for i, id := range ids {
		a := &as[i]
		r := stdResult{UserID: id}
		switch {
		case a.delivered > 0:
			r.Status, r.DeviceCount = "delivered", &a.delivered
		case a.attempted > 0:
			r.Status, r.Message = "failed", a.failMsg
		default:
			r.Status, r.Reason = "skipped", "no_active_device"
		}
		rs[i] = r
	}
	return json.Marshal(struct {
		Results []stdResult `json:"results"`
	}{rs})
}

func TestStdResultsAgree(t *testing.T) {
	ids, as := benchAttempts()
	std, err := stdResults(ids, as)
	if err != nil {
		t.Fatal(err)
	}
	if hand := sandboxResults(nil, ids, as); string(hand) != string(std) {
		t.Fatalf("the sandbox's answer differs:\n%s\n%s", hand[:200], std[:200])
	}
	elems, err := stdSplit(benchBodies()[0])
	if err != nil {
		t.Fatal(err)
	}
	n, _, issues := decodeNotification(0, elems[0])
	want, _ := decodeSendRequest(benchBodies()[0])
	if issues != nil || !reflect.DeepEqual(n, want[0]) {
		t.Fatalf("encoding/json split decodes differently: %v", issues)
	}
}

// BenchmarkJSON compares the sandbox's JSON (on jsontext) with
// encoding/json.
func BenchmarkJSON(b *testing.B) {
	body := benchBodies()[0]
	ids, as := benchAttempts()
	b.Run("request=500/jsontext", func(b *testing.B) {
		cpubench.PerTarget(b, MaxUserIDs, func() {
			if _, issues := decodeSendRequest(body); issues != nil {
				b.Fatal(issues)
			}
		})
	})
	b.Run("request=500/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, MaxUserIDs, func() {
			elems, err := stdSplit(body)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, issues := decodeNotification(0, elems[0]); issues != nil {
				b.Fatal(issues)
			}
		})
	})
	b.Run("response=500/jsontext", func(b *testing.B) {
		var buf []byte
		cpubench.PerTarget(b, MaxUserIDs, func() { buf = sandboxResults(buf[:0], ids, as) })
	})
	b.Run("response=500/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, MaxUserIDs, func() {
			if _, err := stdResults(ids, as); err != nil {
				b.Fatal(err)
			}
		})
	})
	many := make([]string, 100_000)
	for i := range many {
		many[i] = fmt.Sprintf("u%07d", i)
	}
	b.Run("recipients=100k/jsontext", func(b *testing.B) {
		var buf []byte
		cpubench.PerTarget(b, len(many), func() {
			buf = append(buf[:0], '[')
			for i, id := range many {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendJSONString(buf, id)
			}
			buf = append(buf, ']')
		})
	})
	b.Run("recipients=100k/encoding-json", func(b *testing.B) {
		cpubench.PerTarget(b, len(many), func() {
			if _, err := json.Marshal(many); err != nil {
				b.Fatal(err)
			}
		})
	})
}
