package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// TestPacedRestartsKeepRate: a paced apply (600/minute: 10 targets a
// request, one a second) stopped after each request and started again at
// once, five times: each run reads the requests the state records in the
// current window (planner.ResumePacing), so the five requests are still a
// second apart. Without it each run sends its first request at once, and
// the five go together.
func TestPacedRestartsKeepRate(t *testing.T) {
	for _, resume := range []bool{true, false} {
		t.Run(fmt.Sprintf("resume %v", resume), func(t *testing.T) {
			_, client := startSandbox(t, 100)
			cfg := pacedConfig(config.Rate{Count: 600, Per: time.Minute}, sandboxUsers(50))
			st := state.New("test")
			clock := &fakeClock{now: now}
			log := &timedSender{clock: clock.Now, next: client}
			for run := range 5 {
				p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: clock.Now()})
				if err != nil {
					t.Fatal(err)
				}
				ctx, stop := context.WithCancel(context.Background())
				s := &fakeSender{reply: func(_ int, b []pushapi.Notification) (*pushapi.SendResponse, error) {
					stop() // the next request waits for its start: interrupted there
					return log.Send(context.Background(), b)
				}}
				opts := Options{Parallelism: 1, Now: clock.Now, Sleep: clock.Sleep}
				if resume {
					opts.PaceFrom = planner.ResumePacing(st, p.Pacing, clock.Now())
				}
				res, err := Apply(ctx, p, state.NewRecorder(&memJournal{}, st), s, opts)
				if err != nil || res.Counts.Delivered != 10 {
					t.Fatalf("run %d: %v %+v", run+1, err, res.Counts)
				}
			}
			most := maxInWindow(log.log, time.Second)
			switch {
			case resume && most > 10:
				t.Errorf("%d targets within a second across restarts; send_rate allows 10", most)
			case !resume && most != 50:
				t.Errorf("without resuming, %d targets within a second; want all 50 at once (the test shows nothing)", most)
			}
		})
	}
}
