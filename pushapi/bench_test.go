package pushapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// batch500 is one notification to 500 users, the spec's per-request limit.
func batch500() []Notification {
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%06d", i)
	}
	return []Notification{{UserIDs: ids, Title: "Spring sale", Body: "Everything 20% off until Sunday",
		OpenToURL: "https://shop.example.com/sale", Tag: "spring-sale-2026"}}
}

// results500 is a sandbox-shaped answer for batch500, mixing outcomes.
func results500(batch []Notification) []byte {
	b := []byte(`{"results":[`)
	for i, id := range batch[0].UserIDs {
		if i > 0 {
			b = append(b, ',')
		}
		switch i % 10 {
		case 9:
			b = fmt.Appendf(b, `{"userId":%q,"status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"}`, id)
		case 8:
			b = fmt.Appendf(b, `{"userId":%q,"status":"failed","message":"device token expired"}`, id)
		default:
			b = fmt.Appendf(b, `{"userId":%q,"status":"delivered","deviceCount":2}`, id)
		}
	}
	return append(b, "]}"...)
}

func BenchmarkEncodeBatch(b *testing.B) {
	batch := batch500()
	var pool bufPool
	b.ReportAllocs()
	for b.Loop() {
		buf := pool.get()
		*buf = appendBatch(*buf, batch)
		b.SetBytes(int64(len(*buf)))
		pool.put(buf)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/500, "ns/target")
}

func BenchmarkDecodeResults(b *testing.B) {
	batch := batch500()
	body := results500(batch)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeSendResults(body, 207, batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/500, "ns/target")
}

// BenchmarkSendLoopback is the client's whole path (encode, HTTP on
// loopback, decode) against a server that answers from memory, with 10
// senders as apply will run.
func BenchmarkSendLoopback(b *testing.B) {
	batch := batch500()
	body := results500(batch)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("x-request-id", "r")
		w.WriteHeader(207)
		w.Write(body)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/v1", APIKey: canary})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetParallelism(5) // x GOMAXPROCS(2) = 10 senders
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "targets/s")
}
