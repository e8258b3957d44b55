package planner

import (
	"fmt"
	"testing"
	"time"

	"pushform/state"
)

func TestPaceMember(t *testing.T) {
	for _, tt := range []struct {
		group, addr string
		want        bool
	}{
		{"campaign.bf", "campaign.bf.notification.doors", true},
		{"campaign.bf", `campaign.bf.notification.doors["a"]`, true},
		{"campaign.bf", "campaign.bfx.notification.doors", false},
		{"campaign.bf", "notification.bf", false},
		{"notification.order", "notification.order", true},
		{"notification.order", `notification.order["A-1"]`, true},
		{"notification.order", "notification.orders", false},
		{"campaign.bf.notification.doors", `campaign.bf.notification.doors["x"]`, true},
		{"campaign.bf.notification.doors", "campaign.bf.notification.last", false},
	} {
		if got := (Pace{Group: tt.group}).Member(tt.addr); got != tt.want {
			t.Errorf("%s in %s: %v, want %v", tt.addr, tt.group, got, tt.want)
		}
	}
}

// TestResumePacing: where a group's next request may start, from the
// requests the state records (600/minute: 10 targets take a second).
func TestResumePacing(t *testing.T) {
	pace := Pace{Group: "campaign.bf", Count: 600, Per: time.Minute}
	type rec struct {
		addr    string
		ago     time.Duration // before now
		targets int
		outcome state.Outcome
		id      string // request id; "" for none
	}
	for _, tt := range []struct {
		name string
		recs []rec
		want time.Duration // after now; 0: at once (no entry)
	}{
		{"nothing recorded", nil, 0},
		{"one request just answered", []rec{{"campaign.bf.notification.a", 0, 10, state.Delivered, "r1"}}, time.Second},
		{"paced requests carry on", []rec{
			{"campaign.bf.notification.a", 2 * time.Second, 10, state.Delivered, "r1"},
			{"campaign.bf.notification.a", time.Second, 10, state.Delivered, "r2"},
			{"campaign.bf.notification.a", 0, 10, state.Delivered, "r3"},
		}, time.Second},
		{"a burst is spread out", []rec{{"campaign.bf.notification.a", 0, 100, state.Delivered, "r1"}}, 10 * time.Second},
		{"a burst waits at most until it leaves the window", []rec{{"campaign.bf.notification.a", 10 * time.Second, 6000, state.Delivered, "r1"}}, 50 * time.Second},
		{"older than the window", []rec{{"campaign.bf.notification.a", time.Minute, 600, state.Delivered, "r1"}}, 0},
		{"half a window's worth, half a window ago: at once", []rec{{"campaign.bf.notification.a", 30 * time.Second, 300, state.Delivered, "r1"}}, 0},
		{"two addresses of one request", []rec{
			{"campaign.bf.notification.a", 0, 10, state.Delivered, "r1"},
			{"campaign.bf.notification.b", 0, 10, state.Skipped, "r1"},
		}, 2 * time.Second},
		{"unknown outcomes count", []rec{{"campaign.bf.notification.a", 0, 20, state.Unknown, ""}}, 2 * time.Second},
		{"a failure the service answered counts", []rec{{"campaign.bf.notification.a", 0, 20, state.Failed, "r1"}}, 2 * time.Second},
		{"not sent, no request: does not count", []rec{{"campaign.bf.notification.a", 0, 20, state.Failed, ""}}, 0},
		{"already delivered: does not count", []rec{{"campaign.bf.notification.a", 0, 20, state.AlreadyDelivered, "r0"}}, 0},
		{"another group's sends do not count", []rec{{"notification.other", 0, 20, state.Delivered, "r1"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := state.New("test")
			n := 0
			for _, r := range tt.recs {
				m := st.Messages[r.addr]
				if m == nil {
					m = &state.Message{Address: r.addr, Targets: map[string]*state.Target{}}
					st.Messages[r.addr] = m
				}
				shared := &state.Target{Outcome: r.outcome, RequestID: r.id, Time: now.Add(-r.ago)}
				for range r.targets {
					m.Targets[fmt.Sprintf("u%05d", n)] = shared
					n++
				}
			}
			got := ResumePacing(st, []Pace{pace}, now)
			at, ok := got[pace.Group]
			switch {
			case tt.want == 0 && ok:
				t.Errorf("waits until now+%s, want no wait", at.Sub(now))
			case tt.want != 0 && (!ok || !at.Equal(now.Add(tt.want))):
				t.Errorf("starts at now+%s (%v), want now+%s", at.Sub(now), ok, tt.want)
			}
		})
	}
	if got := ResumePacing(nil, []Pace{pace}, now); len(got) != 0 {
		t.Errorf("no state: %v", got)
	}
}
