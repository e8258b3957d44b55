package operation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pushform/state"
)

// TestChooseClock: which time a run takes, from the service it talks to.
// real is the real clock; the state's latest delivery is an hour before.
func TestChooseClock(t *testing.T) {
	real := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	last := real.Add(-time.Hour)
	base := state.Service{Kind: state.KindBaseURL, URL: "https://push.example.com/v1"}
	sandbox := state.Service{Kind: state.KindSandbox, Sandbox: "sandbox.hcl"}
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	for _, tt := range []struct {
		name      string
		op        string
		svc       state.Service
		now       string // --now
		savedAt   string // a saved plan's --now
		simulated string // the embedded sandbox's clock
		wantAt    string // the run's time; "" with want
		want      string // in the error
	}{
		{name: "apply, base URL: the real clock", op: "apply", svc: base, wantAt: "2026-11-22T12:00:00Z"},
		{name: "apply --now ahead, base URL: refused", op: "apply", svc: base, now: "2026-11-29T09:00:00Z", want: "apply --now 2026-11-29T09:00:00Z refused: https://push.example.com/v1 has real devices"},
		{name: "apply --now the clock, base URL: refused", op: "apply", svc: base, now: "2026-11-22T12:00:00Z", want: "apply --now 2026-11-22T12:00:00Z refused"},
		{name: "apply --now back, base URL: refused", op: "apply", svc: base, now: "2026-11-22T10:00:00Z", want: "refused"},
		{name: "test-send --now, base URL: refused", op: "test-send", svc: base, now: "2026-11-29T09:00:00Z", want: "refused"},
		{name: "plan --now ahead, base URL: a rehearsal", op: "plan", svc: base, now: "2026-11-29T09:00:00Z", wantAt: "2026-11-29T09:00:00Z"},
		{name: "plan --now back, base URL", op: "plan", svc: base, now: "2026-11-20T09:00:00Z", wantAt: "2026-11-20T09:00:00Z"},
		{name: "a plan saved for later, base URL: refused until then", op: "apply", svc: base, savedAt: "2099-01-02T00:00:00Z", want: "the plan was made for 2099-01-02T00:00:00Z, later than the clock (2026-11-22T12:00:00Z): https://push.example.com/v1 decides what is due at the real time, so this plan cannot be applied before 2099-01-02T00:00:00Z"},
		{name: "a plan saved for the current second, base URL", op: "apply", svc: base, savedAt: "2026-11-22T12:00:00Z", wantAt: "2026-11-22T12:00:00Z"},
		{name: "a plan saved for the past, after the last delivery", op: "apply", svc: base, savedAt: "2026-11-22T11:30:00Z", wantAt: "2026-11-22T12:00:00Z"},
		{name: "a plan saved before the last delivery: refused", op: "apply", svc: base, savedAt: "2026-11-22T10:30:00Z", want: "which is earlier than the latest delivery the state records (2026-11-22T11:00:00Z)"},
		{name: "apply, sandbox, no clock yet: the real clock", op: "apply", svc: sandbox, wantAt: "2026-11-22T12:00:00Z"},
		{name: "apply, sandbox clock ahead: the sandbox's", op: "apply", svc: sandbox, simulated: "2026-12-01T00:00:00Z", wantAt: "2026-12-01T00:00:00Z"},
		{name: "apply --now ahead, sandbox: moves to it", op: "apply", svc: sandbox, simulated: "2026-12-01T00:00:00Z", now: "2026-12-08T00:00:00Z", wantAt: "2026-12-08T00:00:00Z"},
		{name: "apply --now back of the real clock, sandbox: simulated time", op: "apply", svc: sandbox, now: "2026-11-22T11:30:00Z", wantAt: "2026-11-22T11:30:00Z"},
		{name: "apply --now before the sandbox clock: refused", op: "apply", svc: sandbox, simulated: "2026-12-01T00:00:00Z", now: "2026-11-30T00:00:00Z", want: "--now 2026-11-30T00:00:00Z is earlier than the clock of the embedded sandbox (2026-12-01T00:00:00Z"},
		{name: "apply --now before the last delivery, sandbox: refused", op: "apply", svc: sandbox, now: "2026-11-22T10:00:00Z", want: "earlier than the clock of the embedded sandbox (2026-11-22T11:00:00Z"},
		{name: "a plan saved ahead, sandbox: runs at it", op: "apply", svc: sandbox, savedAt: "2099-01-02T00:00:00Z", wantAt: "2099-01-02T00:00:00Z"},
		{name: "a plan saved before the sandbox clock: refused", op: "apply", svc: sandbox, simulated: "2026-12-01T00:00:00Z", savedAt: "2026-11-25T00:00:00Z", want: "the plan was made for 2026-11-25T00:00:00Z, which is earlier than the clock of the embedded sandbox"},
		{name: "plan --now before the sandbox clock: a rehearsal", op: "plan", svc: sandbox, simulated: "2026-12-01T00:00:00Z", now: "2026-11-25T00:00:00Z", wantAt: "2026-11-25T00:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := clockInput{operation: tt.op, service: tt.svc, lastDelivery: func() time.Time { return last },
				real: func() time.Time { return real }}
			if tt.now != "" {
				in.now = at(tt.now)
			}
			if tt.savedAt != "" {
				in.savedAt = at(tt.savedAt)
			}
			if tt.simulated != "" {
				in.simulated = at(tt.simulated)
			}
			c, err := chooseClock(in)
			var ce *ClockError
			switch {
			case tt.want != "" && err == nil:
				t.Fatalf("taken at %s, want %q", c.At, tt.want)
			case tt.want != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was sent")):
				t.Fatalf("error %q, want %q", err, tt.want)
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "" && !c.At.Equal(at(tt.wantAt)):
				t.Fatalf("at %s, want %s", c.At, tt.wantAt)
			}
		})
	}
}

// TestClockNow: the time a run records at is the real one through a base
// URL, whatever a plan's --now says; the embedded sandbox's moves from
// its simulated time with the real clock.
func TestClockNow(t *testing.T) {
	real := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tick := real
	clock := func() time.Time { return tick }
	none := func() time.Time { return time.Time{} }
	c, err := chooseClock(clockInput{operation: "plan", service: state.Service{Kind: state.KindBaseURL, URL: "https://x.example/v1"},
		now: real.Add(48 * time.Hour), lastDelivery: none, real: clock})
	if err != nil {
		t.Fatal(err)
	}
	tick = real.Add(3 * time.Second)
	if !c.Now().Equal(tick) || !c.Rehearsal {
		t.Errorf("base URL: records at %s (rehearsal %v), want the real %s", c.Now(), c.Rehearsal, tick)
	}
	tick = real
	sim := real.Add(7 * 24 * time.Hour)
	c, err = chooseClock(clockInput{operation: "apply", service: state.Service{Kind: state.KindSandbox, Sandbox: "s.hcl"},
		simulated: sim, lastDelivery: none, real: clock})
	if err != nil {
		t.Fatal(err)
	}
	tick = real.Add(3 * time.Second)
	if want := sim.Add(3 * time.Second); !c.Now().Equal(want) {
		t.Errorf("sandbox: records at %s, want %s", c.Now(), want)
	}
}

// TestLastDeliveryScannedOnlyWhenNeeded: through a base URL with no time
// asked for, the state's records are not scanned (ten million of them
// take a while); the sandbox and a time asked for scan them.
func TestLastDeliveryScannedOnlyWhenNeeded(t *testing.T) {
	real := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   clockInput
		scan bool
	}{
		{clockInput{operation: "apply", service: state.Service{Kind: state.KindBaseURL, URL: "https://x.example/v1"}}, false},
		{clockInput{operation: "plan", service: state.Service{Kind: state.KindBaseURL, URL: "https://x.example/v1"}, now: real}, true},
		{clockInput{operation: "apply", service: state.Service{Kind: state.KindSandbox}}, true},
	} {
		scanned := false
		tt.in.real = func() time.Time { return real }
		tt.in.lastDelivery = func() time.Time { scanned = true; return time.Time{} }
		if _, err := chooseClock(tt.in); err != nil {
			t.Fatal(err)
		}
		if scanned != tt.scan {
			t.Errorf("%+v: scanned %v, want %v", tt.in.service, scanned, tt.scan)
		}
	}
}
