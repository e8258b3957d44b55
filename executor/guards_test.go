package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/sandbox"
	"pushform/state"
)

// fakeClock is a clock that moves only when someone sleeps: Sleep(d) moves
// it to at least the time the sleeper wakes at. Nothing waits in real time.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

// sent is one request as the service saw it: when, and how many targets.
type sent struct {
	at      time.Time
	targets int
}

// timedSender records the clock's time and the targets of every request
// before passing it on.
type timedSender struct {
	mu    sync.Mutex
	clock func() time.Time
	next  Sender
	log   []sent
}

func (s *timedSender) Send(ctx context.Context, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
	n := 0
	for _, x := range batch {
		n += len(x.UserIDs) + len(x.DeviceIDs) + len(x.Topics)
	}
	s.mu.Lock()
	s.log = append(s.log, sent{s.clock(), n})
	s.mu.Unlock()
	return s.next.Send(ctx, batch)
}

// maxInWindow returns the most targets sent in any window of length w
// (every window that starts at a request is checked: that is where the
// maximum is).
func maxInWindow(log []sent, w time.Duration) int {
	sort.Slice(log, func(i, j int) bool { return log[i].at.Before(log[j].at) })
	most := 0
	for i := range log {
		n := 0
		for j := i; j < len(log) && log[j].at.Sub(log[i].at) < w; j++ {
			n += log[j].targets
		}
		most = max(most, n)
	}
	return most
}

// startSandbox serves an in-process sandbox with n users u0000.. and
// returns a client for it.
func startSandbox(t *testing.T, n int) (*sandbox.Server, *pushapi.Client) {
	t.Helper()
	seed := fmt.Sprintf(`
api_key "k-test-0123456789" { environment = "test" }
user_range "u%%04d" {
  count       = %d
  device      = "d%%04d"
  environment = "test"
}
`, n)
	base, sb := testutil.StartSandbox(t, seed, sandbox.Options{})
	c, err := pushapi.New(pushapi.Options{BaseURL: base, APIKey: "k-test-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return sb, c
}

func sandboxUsers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("u%04d", i)
	}
	return out
}

// pacedConfig is one campaign with send_rate rate and one notification to
// users.
func pacedConfig(rate config.Rate, users []string) *config.Config {
	m := note("campaign.bf.notification.doors", "bf", users...)
	m.Campaign = "bf"
	return &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{m},
		Campaigns: map[string]config.Campaign{"bf": {Name: "bf", SendRate: &rate}}}
}

// TestPacedSendRate: send_rate = "600/minute" on 1,500 targets, against
// the sandbox, on a fake clock: no 10-second window holds more than 100
// targets plus one request's worth, and the run takes at least 140 s of
// paced time. With several workers the rate holds too.
func TestPacedSendRate(t *testing.T) {
	for _, parallelism := range []int{1, 4} {
		t.Run(fmt.Sprintf("parallelism %d", parallelism), func(t *testing.T) {
			sb, client := startSandbox(t, 1500)
			cfg := pacedConfig(config.Rate{Count: 600, Per: time.Minute}, sandboxUsers(1500))
			st := state.New("test")
			p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Pacing) != 1 || p.Pacing[0].Duration != 150*time.Second || p.Summary.Requests != 150 {
				t.Fatalf("pacing %+v, %d requests", p.Pacing, p.Summary.Requests)
			}
			clock := &fakeClock{now: now}
			s := &timedSender{clock: clock.Now, next: client}
			var pacing int
			res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{
				Parallelism: parallelism, Now: clock.Now, Sleep: clock.Sleep,
				Events: func(e Event) {
					if e.Type == EventPacing {
						pacing++
						if e.Group != "campaign.bf" || e.Rate != "600/minute" || e.Delay <= 0 {
							t.Errorf("pacing event %+v", e)
						}
					}
				},
			})
			if err != nil || res.Counts.Delivered != 1500 {
				t.Fatalf("apply: %v %+v", err, res.Counts)
			}
			if got := sb.Stats(); got.Targets != 1500 || got.SendRequests != 150 {
				t.Errorf("the sandbox saw %+v", got)
			}
			// One request's worth of slack per worker: on the fake clock a
			// worker that claimed its start may see the clock moved on by
			// another worker's sleep before its request is logged.
			slack := 10 * parallelism
			if most := maxInWindow(s.log, 10*time.Second); most > 100+slack {
				t.Errorf("%d targets within 10 s, want at most %d", most, 100+slack)
			}
			span := s.log[len(s.log)-1].at.Sub(s.log[0].at)
			if span < 140*time.Second {
				t.Errorf("the paced run took %s, want at least 140s", span)
			}
			if pacing < 100 {
				t.Errorf("%d pacing events for 150 paced requests", pacing)
			}
		})
	}
}

// TestPacerClaims: goroutines claiming starts for requests of one group
// never exceed its rate, whatever the interleaving.
func TestPacerClaims(t *testing.T) {
	pace := planner.Pace{Group: "g", Count: 100, Per: time.Second}
	pc := newPacer(&planner.Plan{Pacing: []planner.Pace{pace}}, nil)
	var mu sync.Mutex
	clock := now
	var log []sent
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 50 {
				n := 5 + w*3 // requests of 5 to 26 targets
				for {
					mu.Lock()
					ok, at, by := pc.claim([]string{"g"}, n, clock)
					if ok {
						log = append(log, sent{clock, n})
						mu.Unlock()
						break
					}
					if by != "g" {
						t.Errorf("held back by %q", by)
					}
					clock = maxTime(clock, at) // sleep until at
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, w := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second, 3 * time.Second} {
		if most, limit := maxInWindow(log, w), int(100*w/time.Second)+26; most > limit {
			t.Errorf("%d targets within %s, want at most %d", most, w, limit)
		}
	}
	total := 0
	for _, s := range log {
		total += s.targets
	}
	if span, least := log[len(log)-1].at.Sub(log[0].at), time.Duration(total-26)*time.Second/100; span < least {
		t.Errorf("%d targets in %s, want at least %s", total, span, least)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// TestPacedInterruptResumes: an apply interrupted while pacing sends no
// more, records nothing for the requests it did not send, and the next
// plan sends exactly the rest.
func TestPacedInterruptResumes(t *testing.T) {
	sb, client := startSandbox(t, 300)
	cfg := pacedConfig(config.Rate{Count: 60, Per: time.Second}, sandboxUsers(300))
	st := state.New("test")
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil || p.Summary.Requests != 5 {
		t.Fatalf("plan: %v %+v", err, p.Summary)
	}
	clock := &fakeClock{now: now}
	ctx, cancel := context.WithCancel(context.Background())
	s := &fakeSender{}
	s.reply = func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
		if call == 2 {
			cancel() // interrupted: the third request is waiting for its start
		}
		return client.Send(context.Background(), b)
	}
	j := &memJournal{}
	res, err := Apply(ctx, p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Counts.Delivered != 120 || res.NotStarted != 180 || s.calls != 2 {
		t.Fatalf("interrupted %v, counts %+v, not started %d, calls %d", res.Interrupted, res.Counts, res.NotStarted, s.calls)
	}
	if got := len(st.Messages["campaign.bf.notification.doors"].Targets); got != 120 {
		t.Errorf("%d targets recorded; only the 120 sent may be", got)
	}
	// The journal holds the two requests sent, nothing of the others.
	intents := 0
	for _, e := range j.entries {
		if e.Type == state.EntryIntent {
			intents++
		}
	}
	if intents != 2 {
		t.Errorf("%d intents journaled, want 2", intents)
	}
	again, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	c := again.Changes[0]
	if c.Action != planner.ActionSendNew || c.Targets.Send != 180 || c.Targets.UpToDate != 120 {
		t.Fatalf("next plan: %s %+v", c.Action, c.Targets)
	}
	res, err = Apply(context.Background(), again, state.NewRecorder(&memJournal{}, st), client, Options{Parallelism: 2, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil || res.Counts.Delivered != 180 {
		t.Fatalf("resume: %v %+v", err, res.Counts)
	}
	if got := sb.Stats(); got.Targets != 300 || got.Deliveries != 300 {
		t.Errorf("sandbox %+v: every user once", got)
	}
}

// TestDeliveryWindowInApply: no request and no retry starts at or after a
// change's send_before; those targets are recorded failed, saying why.
func TestDeliveryWindowInApply(t *testing.T) {
	end := now.Add(3 * time.Second)
	windowed := func(addr string, ids ...string) *config.Message {
		m := note(addr, "t", ids...)
		m.SendBefore = &end
		return m
	}
	unavailable := func(call int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
		return nil, &pushapi.StatusError{Method: "POST", StatusCode: 503, RetryAfter: time.Second}
	}
	tests := []struct {
		name    string
		msgs    []*config.Message
		start   time.Time // the apply's clock
		reply   func(int, []pushapi.Notification) (*pushapi.SendResponse, error)
		calls   int
		want    Counts
		outcome map[string]string // address/target -> outcome: message prefix
	}{
		{"retries stop at the window's end", []*config.Message{windowed("notification.a", "u1", "u2")}, now, unavailable, 3,
			Counts{Failed: 2}, map[string]string{"notification.a/u1": "failed: not sent: the delivery window closed at 2026-11-22T12:00:03Z (the last try: "}},
		{"closed before the first try", []*config.Message{windowed("notification.a", "u1")}, end, deliverAll(nil, nil), 0,
			Counts{Failed: 1}, map[string]string{"notification.a/u1": "failed: not sent: the delivery window closed at 2026-11-22T12:00:03Z"}},
		{"only the closed part is held", []*config.Message{windowed("notification.a", "u1"), note("notification.b", "t", "u2")}, end.Add(time.Second),
			deliverAll(nil, nil), 1, Counts{Delivered: 1, Failed: 1},
			map[string]string{"notification.a/u1": "failed: not sent: the delivery window", "notification.b/u2": "delivered: "}},
		{"an ambiguous try stays unknown", []*config.Message{windowed("notification.a", "u1")}, now,
			func(int, []pushapi.Notification) (*pushapi.SendResponse, error) {
				return nil, &pushapi.StatusError{Method: "POST", StatusCode: 502, RequestID: "req-502", RetryAfter: time.Second}
			}, 3, Counts{Unknown: 1}, map[string]string{"notification.a/u1": "unknown: no usable answer: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := state.New("test")
			p := plan(t, st, tt.msgs...)
			clock := &fakeClock{now: tt.start}
			s := &fakeSender{reply: tt.reply}
			j := &memJournal{}
			res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, MaxAttempts: 10,
				BaseDelay: 100 * time.Millisecond, MaxDelay: 200 * time.Millisecond, Now: clock.Now, Sleep: clock.Sleep})
			if err != nil {
				t.Fatal(err)
			}
			if s.calls != tt.calls || res.Counts != tt.want {
				t.Errorf("calls %d counts %+v, want %d %+v", s.calls, res.Counts, tt.calls, tt.want)
			}
			if clock.Now().After(end.Add(2 * time.Second)) {
				t.Errorf("the run waited until %s, past the window's end", clock.Now())
			}
			for key, want := range tt.outcome {
				addr, id, _ := strings.Cut(key, "/")
				tg := st.Messages[addr].Targets[id]
				if got := string(tg.Outcome) + ": " + tg.Message; !strings.HasPrefix(got, want) {
					t.Errorf("%s: %q, want %q...", key, got, want)
				}
			}
			replayed := state.New("test")
			for _, e := range j.entries {
				if err := replayed.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
			}
			for addr, m := range st.Messages {
				for id, tg := range m.Targets {
					if got := replayed.Messages[addr].Targets[id]; got.Outcome != tg.Outcome {
						t.Errorf("replay %s/%s: %s, memory %s", addr, id, got.Outcome, tg.Outcome)
					}
				}
			}
		})
	}
}

// TestPacedPastTheWindow: a paced request whose start would come after its
// window closes is not waited for.
func TestPacedPastTheWindow(t *testing.T) {
	end := now.Add(2 * time.Second)
	cfg := pacedConfig(config.Rate{Count: 1, Per: time.Second}, []string{"u1", "u2", "u3", "u4", "u5"})
	cfg.Messages[0].SendBefore = &end
	st := state.New("test")
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: now}
	s := &fakeSender{reply: deliverAll(nil, nil)}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 1, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	// At 1/second, u1 at 0 s and u2 at 1 s; u3 would start at 2 s.
	if s.calls != 2 || res.Counts.Delivered != 2 || res.Counts.Failed != 3 || clock.Now().After(end) {
		t.Errorf("calls %d counts %+v clock %s", s.calls, res.Counts, clock.Now().Sub(now))
	}
}

// TestMovesRecordedFirst: the moves of a plan are journaled before
// anything else, as one entry, and the plan after sees no change.
func TestMovesRecordedFirst(t *testing.T) {
	st := state.New("test")
	old := note("notification.welcome", "", "u1", "u2")
	p := plan(t, st, old)
	if _, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), &fakeSender{reply: deliverAll(nil, nil)}, Options{}); err != nil {
		t.Fatal(err)
	}
	moved := note("campaign.onboarding.notification.welcome", "", "u1", "u2", "u3")
	moved.Campaign = "onboarding"
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{moved},
		Moved: []config.Moved{{From: "notification.welcome", To: moved.Address}}}
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	j := &memJournal{}
	s := &fakeSender{reply: deliverAll(nil, nil)}
	var events []Event
	if _, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Events: func(e Event) { events = append(events, e) }}); err != nil {
		t.Fatal(err)
	}
	if j.entries[0].Type != state.EntryMove || j.entries[0].Items[0].Address != "notification.welcome" || j.entries[0].Items[0].To != moved.Address {
		t.Errorf("first entry %+v", j.entries[0])
	}
	if events[0].Type != EventMove || events[0].MovedFrom[0] != "notification.welcome" || events[0].Addresses[0] != moved.Address {
		t.Errorf("first event %+v", events[0])
	}
	if s.calls != 1 || len(s.requests[0][0].UserIDs) != 1 || s.requests[0][0].UserIDs[0] != "u3" {
		t.Errorf("sent %v: only the new target u3 may be", s.requests)
	}
	if st.Messages["notification.welcome"] != nil || len(st.Messages[moved.Address].Targets) != 3 {
		t.Errorf("state %v", st.Addresses())
	}
	again, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil || again.HasChanges() {
		t.Fatalf("plan after: %v %+v", err, again.Summary)
	}
}
