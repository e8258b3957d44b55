package pushapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRecipientsStreamBeyondTheBodyCap(t *testing.T) {
	// 200,000 ids are 2.2 MB of JSON: more than the cap of a send answer,
	// which the list is not held to; the ids come in chunks, in order.
	const n = 200_000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", "big")
		io.Copy(w, &idsReader{n: n})
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, func(o *Options) { o.MaxResponseBytes = 1 << 20 })
	var chunks []int
	next := 0
	ids, err := c.RecipientsFunc(context.Background(), func(chunk []string) error {
		chunks = append(chunks, len(chunk))
		for _, id := range chunk {
			if want := fmt.Sprintf("u%07d", next); id != want {
				return fmt.Errorf("id %d is %q, want %q", next, id, want)
			}
			next++
		}
		return nil
	})
	if err != nil || next != n || !slices.Equal(ids, []string{"big"}) {
		t.Fatalf("%d ids, request ids %v: %v", next, ids, err)
	}
	if slices.Max(chunks) != recipientsChunk || len(chunks) != (n+recipientsChunk-1)/recipientsChunk {
		t.Errorf("chunks %v", chunks[:3])
	}
}

func TestRecipientsDuplicatesDropped(t *testing.T) {
	srv := serve(t,
		canned{status: 200, body: `{"userIds":["a","b","a","c"],"next":"2"}`},
		canned{status: 200, body: `{"userIds":["c","d","b"],"next":"3"}`},
		canned{status: 200, body: `{"userIds":["e","a"]}`})
	res, err := newClient(t, srv.URL).Recipients(context.Background())
	if err != nil || !slices.Equal(res.UserIDs, []string{"a", "b", "c", "d", "e"}) || len(res.RequestIDs) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestRecipientsDuplicatesAcrossChunks drops repeats however far back the
// first one was: in a chunk handed over while the list was in order, in
// the chunk being gathered, or after the set was built.
func TestRecipientsDuplicatesAcrossChunks(t *testing.T) {
	sorted := make([]string, 2*recipientsChunk+100)
	for i := range sorted {
		sorted[i] = fmt.Sprintf("u%06d", i)
	}
	last := sorted[len(sorted)-1]
	for _, c := range []struct {
		name  string
		after []string // served after the sorted ids
		want  []string // added to them
	}{
		{"in order", nil, nil},
		{"repeat of a handed chunk's first", []string{sorted[0], "zz"}, []string{"zz"}},
		{"repeat in the gathered chunk", []string{last, "a"}, []string{"a"}},
		{"repeat of the last", []string{last}, nil},
		{"repeats after the set is built", []string{"a", sorted[recipientsChunk], "a", "b", sorted[7]}, []string{"a", "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			served := append(slices.Clone(sorted), c.after...)
			body, _ := json.Marshal(served)
			res, err := newClient(t, serve(t, canned{status: 200, body: string(body)}).URL).Recipients(context.Background())
			if want := append(slices.Clone(sorted), c.want...); err != nil || !slices.Equal(res.UserIDs, want) {
				t.Fatalf("got %d ids (last %q), want %d: %v", len(res.UserIDs), res.UserIDs[len(res.UserIDs)-1], len(want), err)
			}
		})
	}
}

func TestRecipientsFuncStopsOnError(t *testing.T) {
	many := "["
	for i := range 2 * recipientsChunk {
		many += fmt.Sprintf(`"u%d",`, i)
	}
	many += `"last"]`
	for name, answers := range map[string][]canned{
		"at the end of a page": {{status: 200, body: `{"userIds":["a"],"next":"2"}`}, {status: 200, body: `["b"]`}},
		"in a page":            {{status: 200, body: many}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, answers...)
			stop := errors.New("enough")
			calls := 0
			_, err := newClient(t, srv.URL).RecipientsFunc(context.Background(), func([]string) error { calls++; return stop })
			if err != stop || calls != 1 || len(srv.recorded()) != 1 {
				t.Fatalf("err %v after %d calls and %d requests", err, calls, len(srv.recorded()))
			}
		})
	}
}

func TestRecipientsConnectionDroppedMidList(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", "cut")
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `["a","b",`+strings.Repeat(`"x",`, 10))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL).Recipients(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || te.RequestID != "cut" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("want a TransportError for the cut answer, got %T %v", err, err)
	}
	if safe, _, _ := Retryable(err); !safe {
		t.Error("reading the recipients again is safe")
	}
}

func TestRecipientsIdleTimeout(t *testing.T) {
	// A list that stops coming: the timeout counts from the last data.
	srv, _ := hang(t, func(w http.ResponseWriter) {
		w.Header().Set("x-request-id", "stalled")
		io.WriteString(w, `["a","b",`)
		w.(http.Flusher).Flush()
	})
	c := newClient(t, srv.URL, func(o *Options) { o.Timeout = 50 * time.Millisecond })
	_, err := c.Recipients(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a timeout, got %T %v", err, err)
	}
	if te.RequestID == "stalled" && !strings.Contains(err.Error(), "no data from the service for 50ms") {
		t.Errorf("message: %v", err)
	}
}

// TestGreaterAndASCII compares the eight-bytes-at-a-time helpers of the
// recipients fetch with bytes.Compare and a plain loop, on ids that share
// prefixes of every length and differ in high and low bytes.
func TestGreaterAndASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'0', '1', 'a', 'u', 0x7f, 0x80, 0xff, 0}
	id := func() []byte {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for range 200_000 {
		a, b := id(), id()
		if rng.IntN(2) == 0 { // a shared prefix
			a = append(slices.Clip(b[:rng.IntN(len(b)+1)]), a...)
		}
		if got, want := greater(a, b), bytes.Compare(a, b) > 0; got != want {
			t.Fatalf("greater(%q, %q) = %v", a, b, got)
		}
		if got, want := isASCII(a), !bytes.ContainsFunc(a, func(r rune) bool { return r >= utf8.RuneSelf }); got != want {
			t.Fatalf("isASCII(%q) = %v", a, got)
		}
	}
}
