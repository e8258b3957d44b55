package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const benchUsers = 100_000

func benchSeed(b *testing.B, opts Options) *Server {
	b.Helper()
	src := fmt.Sprintf(`
api_key "k" { environment = "test" }
user_range "u%%07d" {
  count       = %d
  device      = "d%%07d"
  environment = "test"
}`, benchUsers)
	seed, diags := ParseSeed("bench.hcl", []byte(src))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return New(seed, opts)
}

// benchBodies are send requests of 500 userIds each, covering the range.
func benchBodies() [][]byte {
	var out [][]byte
	for start := 0; start < benchUsers; start += MaxUserIDs {
		var sb strings.Builder
		sb.WriteString(`[{"userIds":[`)
		for i := start; i < start+MaxUserIDs; i++ {
			if i > start {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `"u%07d"`, i)
		}
		sb.WriteString(`],"title":"Spring sale","body":"Everything 20% off until Sunday","tag":"spring-sale","openToUrl":"https://shop.example.com/sale"}]`)
		out = append(out, []byte(sb.String()))
	}
	return out
}

// BenchmarkSend500 measures send requests of 500 userIds through the
// handler in-process, on every core: decode, validate, deliver, encode.
func BenchmarkSend500(b *testing.B) {
	s := benchSeed(b, Options{})
	bodies := benchBodies()
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := bodies[n.Add(1)%int64(len(bodies))]
			req := httptest.NewRequest(http.MethodPost, "/v1/push-notifications/send", bytes.NewReader(body))
			req.Header.Set("x-api-key", "k")
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(b.N)*MaxUserIDs/b.Elapsed().Seconds(), "targets/s")
}

// BenchmarkSend500Loopback is the same over HTTP on loopback with 10
// parallel clients, as apply drives it.
func BenchmarkSend500Loopback(b *testing.B) {
	s := benchSeed(b, Options{})
	base, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	bodies := benchBodies()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(max(1, 10/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := bodies[n.Add(1)%int64(len(bodies))]
			req, _ := http.NewRequest(http.MethodPost, base+"/push-notifications/send", bytes.NewReader(body))
			req.Header.Set("x-api-key", "k")
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
	elapsed := time.Since(start).Seconds()
	b.StopTimer()
	client.CloseIdleConnections()
	b.ReportMetric(float64(b.N)/elapsed, "requests/s")
	b.ReportMetric(float64(b.N)*MaxUserIDs/elapsed, "targets/s")
}

// BenchmarkDecode500 measures decoding and validating alone.
func BenchmarkDecode500(b *testing.B) {
	body := benchBodies()[0]
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, issues := decodeSendRequest(body); issues != nil {
			b.Fatal(issues)
		}
	}
}

// BenchmarkSeedMillion measures parsing and building a million-user range.
func BenchmarkSeedMillion(b *testing.B) {
	src := []byte(`api_key "k" { environment = "test" }
user_range "u%07d" {
  count       = 1000000
  device      = "d%07d"
  environment = "test"
}`)
	b.ReportAllocs()
	for b.Loop() {
		seed, diags := ParseSeed("m.hcl", src)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		New(seed, Options{})
	}
}

// discard is a ResponseWriter that counts what it is given.
type discard struct {
	h http.Header
	n int64
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { d.n += int64(len(p)); return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// heapMB is the live heap after a collection.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkTenMillion is the sandbox at the scale of issue 15: a
// user_range of 10,000,000 users seeded, their recipients list served,
// send requests of 500 spread over the range, and the list of devices that
// received something. It reports the live heap: the sandbox must not be
// what limits a 10M run.
func BenchmarkTenMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("10M users: not under -short")
	}
	const n = 10_000_000
	src := []byte(`api_key "k" { environment = "test" }
user_range "u%08d" {
  count       = 10000000
  device      = "d%08d"
  environment = "test"
}`)
	before := heapMB()
	var s *Server
	b.Run("seed", func(b *testing.B) {
		for b.Loop() {
			seed, diags := ParseSeed("m.hcl", src)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			s = New(seed, Options{})
		}
		b.ReportMetric(heapMB()-before, "MB-heap")
	})
	serve := func(method, target, body string) *discard {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("x-api-key", "k")
		req.Header.Set("Content-Type", "application/json")
		w := &discard{h: http.Header{}}
		s.ServeHTTP(w, req)
		return w
	}
	b.Run("recipients", func(b *testing.B) {
		for b.Loop() {
			if w := serve("GET", "/v1/push-notifications/recipients", ""); w.n != 12*n+1 {
				b.Fatalf("%d bytes", w.n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/id")
	})
	b.Run("send500", func(b *testing.B) {
		var k int
		b.ReportAllocs()
		for b.Loop() {
			var sb strings.Builder
			sb.WriteString(`[{"userIds":[`)
			for i := range MaxUserIDs {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `"u%08d"`, (k*MaxUserIDs+i)%n)
			}
			sb.WriteString(`],"title":"t","body":"b","tag":"x"}]`)
			k++
			if w := serve("POST", "/v1/push-notifications/send", sb.String()); w.n == 0 {
				b.Fatal("no answer")
			}
		}
		b.ReportMetric(heapMB()-before, "MB-heap")
	})
	b.Run("devices", func(b *testing.B) {
		for b.Loop() {
			serve("GET", "/_sandbox/devices", "")
		}
	})
}
