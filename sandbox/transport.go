package sandbox

import (
	"errors"
	"net/http"
	"net/http/httptest"
)

// InProcessBaseURL is the base URL of a Server reached through Transport.
// Its host can never resolve (RFC 2606), so a request that somehow went
// to the network instead would reach nothing.
const InProcessBaseURL = "https://sandbox.invalid/v1"

// Transport returns an http.RoundTripper that has s answer every request
// itself, in-process: no listener and no socket, so nothing but s is ever
// contacted (pushform test's simulated service). A request's context
// ends its Latency as a client that gave up would; a dropped connection
// (DropRate) is an error.
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Server }

// errDropped is the error of a request whose connection DropRate closed.
var errDropped = errors.New("sandbox: the connection was closed without an answer")

func (t transport) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	rec := httptest.NewRecorder()
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler { // the sentinel itself is what is panicked
				panic(p)
			}
			resp, err = nil, errDropped
		}
	}()
	t.s.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err // the client gave up: as over a network, no answer
	}
	resp = rec.Result()
	resp.Request = r
	return resp, nil
}
