package pushapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"pushform/internal/testutil/cpubench"
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
	b.SetBytes(int64(len(appendBatch(nil, batch))))
	cpubench.PerTarget(b, 500, func() {
		buf := pool.get()
		*buf = appendBatch(*buf, batch)
		pool.put(buf)
	})
}

func BenchmarkDecodeResults(b *testing.B) {
	batch := batch500()
	body := results500(batch)
	b.SetBytes(int64(len(body)))
	cpubench.PerTarget(b, 500, func() {
		if _, err := decodeSendResults(nil, body, 207, batch, nil); err != nil {
			b.Fatal(err)
		}
	})
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

// idsReader writes a bare JSON array of n user ids "u0000000"... as it is
// read, so a list of any length costs the server no memory.
type idsReader struct {
	n, next int
	buf     []byte
	done    bool
}

func (r *idsReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && !r.done {
		switch {
		case r.next == 0 && r.n > 0:
			r.buf = append(r.buf, '[')
		case r.next == r.n:
			r.buf = append(r.buf, ']')
			r.done = true
			continue
		default:
			r.buf = append(r.buf, ',')
		}
		if r.n == 0 {
			r.buf = append(r.buf, "[]"...)
			r.done = true
			continue
		}
		r.buf = append(r.buf, '"', 'u')
		for d := 1_000_000; d > 0; d /= 10 { // u%07d without fmt
			r.buf = append(r.buf, byte('0'+r.next/d%10))
		}
		r.buf = append(r.buf, '"')
		r.next++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}

// BenchmarkRecipients fetches lists of user ids from a server generating
// them (a bare array), as apply's data source does: RecipientsFunc streams
// them in chunks (the memory it holds is the duplicate filter, about 22
// bytes an id), Recipients collects them all. The CPU per id is the
// client's and the server's.
func BenchmarkRecipients(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-request-id", "r")
			io.Copy(w, &idsReader{n: n})
		}))
		c, err := New(Options{BaseURL: srv.URL + "/v1", APIKey: canary})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ids=%d/stream", n), func(b *testing.B) {
			cpu0 := cpubench.CPUTime()
			b.ReportAllocs()
			for b.Loop() {
				got := 0
				if _, err := c.RecipientsFunc(context.Background(), func(ids []string) error { got += len(ids); return nil }); err != nil || got != n {
					b.Fatal(got, err)
				}
			}
			perID(b, n, cpu0)
		})
		b.Run(fmt.Sprintf("ids=%d/all", n), func(b *testing.B) {
			cpu0 := cpubench.CPUTime()
			b.ReportAllocs()
			for b.Loop() {
				if res, err := c.Recipients(context.Background()); err != nil || len(res.UserIDs) != n {
					b.Fatal(err)
				}
			}
			perID(b, n, cpu0)
		})
		c.Close()
		srv.Close()
	}
}

// perID reports the wall time and CPU per id of b's loop over lists of n
// ids, the CPU counted from cpu0.
func perID(b *testing.B, n int, cpu0 int64) {
	ids := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ids, "ns/id")
	b.ReportMetric(float64(cpubench.CPUTime()-cpu0)/ids, "cpu-ns/id")
}

// sandboxBatch500 is one notification to 500 users with the sandbox's ids.
func sandboxBatch500() []Notification {
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i+1)
	}
	return []Notification{{UserIDs: ids, Title: "t"}}
}

// sandboxAnswer500 is the sandbox's answer to sandboxBatch500: all
// delivered, or (mixed) every tenth skipped, half of those with a contact
// time, and one failed.
func sandboxAnswer500(batch []Notification, mixed bool) []byte {
	b := []byte(`{"results":[`)
	for i, id := range batch[0].UserIDs {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case mixed && i == 250:
			b = fmt.Appendf(b, `{"userId":%q,"status":"failed","message":"apns: BadDeviceToken (410)"}`, id)
		case mixed && i%20 == 9:
			b = fmt.Appendf(b, `{"userId":%q,"status":"skipped","reason":"no_active_device","unreachableSince":"2026-11-01T10:00:00Z"}`, id)
		case mixed && i%20 == 19:
			b = fmt.Appendf(b, `{"userId":%q,"status":"skipped","reason":"no_active_device"}`, id)
		default:
			b = fmt.Appendf(b, `{"userId":%q,"status":"delivered","deviceCount":%d}`, id, 1+i%3/2)
		}
	}
	return append(b, "]}"...)
}

// BenchmarkDecodeSendResults500 decodes the sandbox's answer to a request
// of 500 users, as apply does 2,000 times for a million targets.
func BenchmarkDecodeSendResults500(b *testing.B) {
	batch := sandboxBatch500()
	for _, name := range []string{"delivered", "mixed", "other-spelling"} {
		body := sandboxAnswer500(batch, name == "mixed")
		if name == "other-spelling" { // read by the general decoder
			body = bytes.ReplaceAll(body, []byte(`"status"`), []byte(`"outcome"`))
		}
		b.Run(name, func(b *testing.B) {
			var pool scratchPool // as a client decodes
			b.SetBytes(int64(len(body)))
			cpubench.PerTarget(b, 500, func() {
				if _, err := decodeSendResults(&pool, body, 207, batch, nil); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
