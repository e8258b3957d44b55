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
	"pushform/secret"
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
// recipients fetch with their references (checkGreaterAndASCII) on ids
// that share prefixes of every length and differ in high and low bytes;
// FuzzGreaterAndASCII on any.
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
		checkGreaterAndASCII(t, a, b)
	}
}

func FuzzGreaterAndASCII(f *testing.F) {
	f.Add([]byte("u0000001"), []byte("u0000002"))
	f.Add([]byte("u00000010"), []byte("u0000001"))
	f.Add([]byte("abcdefgh\x80"), []byte("abcdefgh\x7f"))
	f.Add([]byte("\xffabcdefghijk"), []byte(""))
	f.Fuzz(checkGreaterAndASCII)
}

// checkGreaterAndASCII holds greater to bytes.Compare and isASCII to a
// plain loop.
func checkGreaterAndASCII(t *testing.T, a, b []byte) {
	if got, want := greater(a, b), bytes.Compare(a, b) > 0; got != want {
		t.Fatalf("greater(%q, %q) = %v", a, b, got)
	}
	if got, want := isASCII(a), !bytes.ContainsFunc(a, func(r rune) bool { return r >= utf8.RuneSelf }); got != want {
		t.Fatalf("isASCII(%q) = %v", a, got)
	}
}

// FuzzRecipientsFetch holds the recipients fetch's gathering to a map. Its
// script is one id a line, or "!h" (hold: a page is being read), "!r"
// (release the chunks held) and "!f" (flush: a page ends). The ids come out
// once each, in the order first served (made valid UTF-8, the key
// redacted), in chunks of at most the size asked, whether they came in
// order (compared with the one before, no set kept) or not (the set built
// at the first out of order, from the chunks handed over and the one being
// gathered); and a chunk handed over never changes after.
func FuzzRecipientsFetch(f *testing.F) {
	f.Add("a\nb\nc\nd\ne", uint8(2))
	f.Add("a\nb\nc\n!h\nb\nd\n!f\n!r\na\ne\nf", uint8(1))
	f.Add("u1\nu2\nu3\nu4\nu2\n!f\nu5\nu1\nu6", uint8(3))
	f.Add("a\nb\nc\nd\ne\nf\ng\n!h\nh\ni\nj\nk\nl\nm\nn\n!r\na\nz", uint8(2))
	f.Add("b\na\nb\na\nc", uint8(0))
	f.Add("x"+canary+"y\nxy\n\xff\xfe\n\xff\n\xef\xbf\xbd", uint8(4))
	f.Fuzz(func(t *testing.T, script string, size uint8) {
		c := &Client{red: secret.NewRedactor(canary)}
		var got [][]string
		var kept []string // each chunk's ids as handed over
		fetch := &recipientsFetch{c: c, size: 1 + int(size%8), fn: func(chunk []string) error {
			got = append(got, chunk)
			kept = append(kept, strings.Join(chunk, "\n"))
			return nil
		}}
		var want []string
		seen := map[string]bool{}
		for _, line := range strings.Split(script, "\n") {
			var err error
			switch line {
			case "": // no decoder passes an empty id
			case "!h":
				fetch.hold = true
			case "!r":
				err = fetch.release()
			case "!f":
				err = fetch.flush()
			default:
				if err = fetch.add([]byte(line)); err == nil {
					if id := c.red.String(validUTF8([]byte(line))); !seen[id] {
						seen[id] = true
						want = append(want, id)
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := fetch.flush(); err != nil {
			t.Fatal(err)
		}
		if err := fetch.release(); err != nil {
			t.Fatal(err)
		}
		for _, chunk := range got {
			if len(chunk) == 0 || len(chunk) > fetch.size {
				t.Fatalf("a chunk of %d ids, size %d", len(chunk), fetch.size)
			}
		}
		if all := slices.Concat(got...); !slices.Equal(all, want) || fetch.total != len(want) {
			t.Fatalf("handed over %q (total %d), want %q", all, fetch.total, want)
		}
		for i := range got {
			if strings.Join(got[i], "\n") != kept[i] {
				t.Fatalf("chunk %d changed after it was handed over: %q, was %q", i, got[i], kept[i])
			}
		}
	})
}
