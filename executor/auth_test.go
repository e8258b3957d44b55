package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pushform/pushapi"
	"pushform/state"
)

// ctxSender answers the first request 401 once every request of the
// plan is in flight; the others wait for that 401 to be recorded and then
// answer 401 too, unless their context was cancelled first: then, as the
// real client does, with a connection failure after the request was
// written.
type ctxSender struct {
	inFlight    int
	mu          sync.Mutex
	calls       int
	all         chan struct{} // closed when inFlight requests are in
	release     chan struct{} // closed once the first 401 is recorded
	releaseOnce sync.Once
}

func (s *ctxSender) Send(ctx context.Context, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
	s.mu.Lock()
	s.calls++
	call := s.calls
	if call == s.inFlight {
		close(s.all)
	}
	s.mu.Unlock()
	<-s.all
	if call > 1 {
		<-s.release
		if err := ctx.Err(); err != nil {
			return nil, &pushapi.TransportError{Op: "POST /push-notifications/send", Err: err, Sent: true}
		}
	}
	return nil, &pushapi.AuthError{RequestID: fmt.Sprintf("req-401-%d", call), KeyEnv: "PUSHFORM_API_KEY"}
}

// TestAuthErrorInFlight: a wrong key with requests in flight. A 401
// processes nothing (spec part 7): the requests in flight get their 401
// and are recorded not sent, none is left unknown, nothing new starts,
// and the next plan sends every target again.
func TestAuthErrorInFlight(t *testing.T) {
	st := state.New("test")
	m := note("notification.a", "", users(2400, "u")...)
	p := plan(t, st, m)
	if len(p.Batches) != 5 {
		t.Fatalf("%d requests, want 5", len(p.Batches))
	}
	s := &ctxSender{inFlight: 5, all: make(chan struct{}), release: make(chan struct{})}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 10,
		Events: func(e Event) {
			if e.Type == EventError && e.Status == 401 {
				s.releaseOnce.Do(func() { close(s.release) })
			}
		}})
	var ae *pushapi.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want the 401", err)
	}
	if res.Counts.Unknown != 0 || res.Counts.Failed != 2400 || s.calls != 5 {
		t.Fatalf("counts %+v after %d calls: want all 2,400 failed (not sent), none unknown", res.Counts, s.calls)
	}
	for _, tg := range st.Messages["notification.a"].AllTargets() {
		if tg.Outcome != state.Failed || !strings.Contains(tg.Message, "not sent: the service rejected the API key (401") {
			t.Fatalf("target %+v: want failed, not sent, with its 401", tg)
		}
	}
	if next := plan(t, st, m); next.Changes[0].Targets.Retry != 2400 || len(next.Changes[0].Send) != 2400 {
		t.Errorf("the next plan: %+v, want all 2,400 retried", next.Changes[0].Targets)
	}
}
