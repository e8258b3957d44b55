package pushapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// canary is the test API key; no error string may contain it.
const canary = "CANARY-k3y-0123456789abcdef"

// canned is one answer of a canned server.
type canned struct {
	status  int
	headers map[string]string
	body    string
}

// recorded is what a canned server saw.
type recorded struct {
	method, path, query string
	header              http.Header
	body                []byte
}

type cannedServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

// serve starts a server that gives the answers in turn (the last one
// repeats) and records every request.
func serve(t *testing.T, answers ...canned) *cannedServer {
	t.Helper()
	cs := &cannedServer{}
	n := 0
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cs.mu.Lock()
		cs.requests = append(cs.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		a := answers[min(n, len(answers)-1)]
		n++
		cs.mu.Unlock()
		for k, v := range a.headers {
			w.Header().Set(k, strings.ReplaceAll(v, "{KEY}", r.Header.Get("x-api-key")))
		}
		if _, ok := a.headers["x-request-id"]; !ok {
			w.Header().Set("x-request-id", "req-1")
		}
		w.WriteHeader(a.status)
		// {KEY} stands for the key the request carried: a hostile echo.
		io.WriteString(w, strings.ReplaceAll(a.body, "{KEY}", r.Header.Get("x-api-key")))
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *cannedServer) recorded() []recorded {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]recorded(nil), cs.requests...)
}

func newClient(t *testing.T, baseURL string, mod ...func(*Options)) *Client {
	t.Helper()
	o := Options{BaseURL: baseURL + "/v1", APIKey: canary, APIKeyEnv: "PUSHFORM_API_KEY", Timeout: 10 * time.Second}
	for _, m := range mod {
		m(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() } // retries of a page do not wait
	t.Cleanup(c.Close)
	return c
}

func intp(n int) *int { return &n }
