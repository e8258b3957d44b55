package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/config"
	"pushform/pushapi"
	"pushform/state"
)

// sizedService refuses a request whose size (100 a notification and 10 an
// id) is over limit, with refuse; it counts what it delivered to whom.
type sizedService struct {
	mu        sync.Mutex
	limit     int
	refuse    func(call int) error
	delivered map[string]int
	refusals  int
}

func (s *sizedService) reply(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
	size := 0
	for _, n := range batch {
		size += 100 + 10*(len(n.UserIDs)+len(n.DeviceIDs))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.limit {
		s.refusals++
		return nil, s.refuse(call)
	}
	for _, n := range batch {
		for _, u := range n.UserIDs {
			s.delivered[u]++
		}
	}
	return deliverAll(nil, nil)(call, batch)
}

func tooLarge413(call int) error {
	return &pushapi.StatusError{Method: http.MethodPost, StatusCode: http.StatusRequestEntityTooLarge, RequestID: fmt.Sprintf("req-%d", call),
		Excerpt: "the request body exceeds 64 KiB"}
}

func tooMany400(call int) error {
	return &pushapi.ValidationError{RequestID: fmt.Sprintf("req-%d", call),
		Issues: []pushapi.Issue{{Index: -1, Message: "too many userIds: a request may carry at most 40"}}}
}

// TestTooLarge: a request the service finds too large (413, or a 400
// saying so about the request) is sent again in halves, notifications
// first, then a lone notification's ids, until each part fits: every
// target is delivered exactly once, nothing is failed, and the sizes that
// fitted are used at once for the requests after.
func TestTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refuse  func(int) error
		limit   int
		msgs    []*config.Message
		maxRefs int // refusals at most: later requests are sent at the size that fitted
	}{
		{"413, sixty small notifications", tooLarge413, 1700, manyNotes(60, 1), 4},
		{"413, one notification of 500 ids", tooLarge413, 1400, []*config.Message{note("notification.big", "", users(500, "u")...)}, 4},
		{"400 too many userIds, 500 ids", tooMany400, 500, []*config.Message{note("notification.big", "", users(500, "u")...)}, 5},
		{"413, three plan batches of 500 ids", tooLarge413, 2600, []*config.Message{note("notification.big", "", users(1500, "u")...)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New("test")
			p := plan(t, st, tc.msgs...)
			svc := &sizedService{limit: tc.limit, refuse: tc.refuse, delivered: map[string]int{}}
			s := &fakeSender{reply: svc.reply}
			j := &memJournal{}
			var splits int
			res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Sleep: noSleep, Now: func() time.Time { return now },
				Events: func(e Event) {
					if e.Type == EventSplit {
						splits++
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, m := range tc.msgs {
				want += len(m.Targets.IDs)
				for _, id := range m.Targets.IDs {
					if svc.delivered[id] != 1 {
						t.Fatalf("%s delivered %d times", id, svc.delivered[id])
					}
					if tg := st.Messages[m.Address].Targets[id]; tg.Outcome != state.Delivered {
						t.Fatalf("%s: %+v", id, tg)
					}
				}
			}
			if res.Counts.Delivered != want || res.Counts.Failed != 0 || len(res.Errors) != 0 || splits == 0 {
				t.Fatalf("counts %+v, errors %v, %d splits", res.Counts, res.Errors, splits)
			}
			if svc.refusals > tc.maxRefs {
				t.Errorf("%d refusals: the sizes that fitted are not kept", svc.refusals)
			}
			// The journal replays to the state: nothing lost in the splits.
			replayed := state.New("test")
			replayed.Lineage = st.Lineage
			for _, e := range j.entries {
				replayed.ApplyEntry(e)
			}
			for _, m := range tc.msgs {
				for _, id := range m.Targets.IDs {
					if replayed.Messages[m.Address].Targets[id].Outcome != state.Delivered {
						t.Fatalf("replayed %s: %+v", id, replayed.Messages[m.Address].Targets[id])
					}
				}
			}
		})
	}
}

// TestTooLargeAlone: a notification to one target still too large alone
// fails with the service's words; the others of its request are
// delivered.
func TestTooLargeAlone(t *testing.T) {
	st := state.New("test")
	msgs := manyNotes(4, 1)
	huge := note("notification.huge", "", "hx")
	huge.Content.Body = strings.Repeat("x", 100)
	msgs = append(msgs, huge)
	p := plan(t, st, msgs...)
	reply := func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		for _, n := range batch {
			if len(n.Body) > 50 {
				return nil, tooLarge413(call)
			}
		}
		return deliverAll(nil, nil)(call, batch)
	}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), &fakeSender{reply: reply}, Options{Parallelism: 1, Sleep: noSleep, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tg := st.Messages["notification.huge"].Targets["hx"]
	if tg.Outcome != state.Failed || !strings.Contains(tg.Message, "too large") || !strings.Contains(tg.Message, "the request body exceeds 64 KiB") {
		t.Fatalf("the huge one: %+v", tg)
	}
	if res.Counts.Delivered != 4 || res.Counts.Failed != 1 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "notification.huge") {
		t.Fatalf("counts %+v, errors %v", res.Counts, res.Errors)
	}
}

// manyNotes is n notifications of ids users each, u<i>-<j>.
func manyNotes(n, ids int) []*config.Message {
	var ms []*config.Message
	for i := range n {
		ms = append(ms, note(fmt.Sprintf("notification.n%02d", i), "", users(ids, fmt.Sprintf("u%02d-", i))...))
	}
	return ms
}

// TestRateLimitIsAWait: a burst of 429s (five in a row), then two 503s,
// with three tries allowed: the 429s are waits, not tries, so the target
// is delivered; each wait is the Retry-After.
func TestRateLimitIsAWait(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", "u1"))
	reply := func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		switch {
		case call <= 5:
			return nil, &pushapi.StatusError{Method: "POST", StatusCode: 429, RequestID: fmt.Sprintf("req-%d", call), RetryAfter: 7 * time.Second}
		case call <= 7:
			return nil, &pushapi.StatusError{Method: "POST", StatusCode: 503, RequestID: fmt.Sprintf("req-%d", call), RetryAfter: time.Second}
		}
		return deliverAll(nil, nil)(call, batch)
	}
	clock := &fakeClock{now: now}
	var waits []time.Duration
	s := &fakeSender{reply: reply}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 1, MaxAttempts: 3,
		Now: clock.Now, Sleep: clock.Sleep, RateLimit: pushapi.NewRateLimit(time.Minute, clock.Now),
		Events: func(e Event) {
			if e.Type == EventWait {
				waits = append(waits, e.Delay)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if tg := st.Messages["notification.a"].Targets["u1"]; tg.Outcome != state.Delivered || res.Counts.Delivered != 1 || s.calls != 8 {
		t.Fatalf("target %+v, counts %+v, %d calls", tg, res.Counts, s.calls)
	}
	if len(waits) != 5 || waits[0] != 7*time.Second {
		t.Fatalf("waits %v, want five of the Retry-After", waits)
	}
}

// TestRateLimitBudgetSpent: a service that answers 429 for longer than
// the run's budget: the request meeting the end of the budget and every
// one not started are recorded not sent (never failed), the run stops
// with a *RateLimitedError counting them, and a second run sends them.
func TestRateLimitBudgetSpent(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "", users(1500, "u")...))
	var mu sync.Mutex
	limited := true
	reply := func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if limited {
			return nil, &pushapi.StatusError{Method: "POST", StatusCode: 429, RequestID: fmt.Sprintf("req-%d", call), RetryAfter: 20 * time.Second}
		}
		return deliverAll(nil, nil)(call, batch)
	}
	clock := &fakeClock{now: now}
	j := &memJournal{}
	res, err := Apply(context.Background(), p, state.NewRecorder(j, st), &fakeSender{reply: reply}, Options{Parallelism: 1,
		Now: clock.Now, Sleep: clock.Sleep, RateLimit: pushapi.NewRateLimit(time.Minute, clock.Now)})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.NotSent != 1500 || !strings.Contains(err.Error(), "1500 targets were not sent") || !strings.Contains(err.Error(), "--rate-limit-wait") {
		t.Fatalf("err = %v", err)
	}
	if res.Counts.Failed != 0 || res.Counts.Unknown != 0 || res.NotStarted != 1500 || len(res.Errors) != 0 {
		t.Fatalf("counts %+v, not started %d, errors %v: a 429 fails nothing", res.Counts, res.NotStarted, res.Errors)
	}
	for _, tg := range st.Messages["notification.a"].AllTargets() {
		if tg.Outcome != state.Failed || !strings.HasPrefix(tg.Message, "not sent: ") {
			t.Fatalf("target %+v; want recorded not sent", tg)
		}
	}
	limited = false
	p = plan(t, st, note("notification.a", "", users(1500, "u")...))
	res, err = Apply(context.Background(), p, state.NewRecorder(j, st), &fakeSender{reply: reply}, Options{Parallelism: 1, Sleep: noSleep, Now: clock.Now})
	if err != nil || res.Counts.Delivered != 1500 {
		t.Fatalf("the next run: %v, %+v", err, res.Counts)
	}
}

// TestRateLimitAfterAmbiguousTry: a tagged request whose first try may
// have been processed (a 500), then answered 429 beyond the budget, is
// unknown, never recorded not sent: the first try may have delivered it.
func TestRateLimitAfterAmbiguousTry(t *testing.T) {
	st := state.New("test")
	p := plan(t, st, note("notification.a", "tag-a", "u1"))
	reply := func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		if call == 1 {
			return nil, &pushapi.StatusError{Method: "POST", StatusCode: 500, RequestID: "req-500"}
		}
		return nil, &pushapi.StatusError{Method: "POST", StatusCode: 429, RequestID: fmt.Sprintf("req-%d", call), RetryAfter: 40 * time.Second}
	}
	clock := &fakeClock{now: now}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), &fakeSender{reply: reply}, Options{Parallelism: 1,
		Now: clock.Now, Sleep: clock.Sleep, RateLimit: pushapi.NewRateLimit(time.Minute, clock.Now)})
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v", err)
	}
	if tg := st.Messages["notification.a"].Targets["u1"]; tg.Outcome != state.Unknown || tg.RequestID != "req-500" || res.Counts.Unknown != 1 {
		t.Fatalf("target %+v, counts %+v: want unknown, asking about the 500", tg, res.Counts)
	}
}
