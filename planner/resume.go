package planner

import (
	"slices"
	"strings"
	"time"

	"pushform/state"
)

// Pacing across runs. A send_rate holds across restarts: the requests the
// state records within the last window of a group's rate (its Per, with
// their real times) count, so a restarted apply continues the rate rather
// than starting afresh.

// Member reports whether the sends of address addr count in p's group:
// the instances of a paced block, or the messages of a paced campaign.
func (p Pace) Member(addr string) bool {
	if name, ok := strings.CutPrefix(p.Group, "campaign."); ok && !strings.Contains(name, ".") {
		return strings.HasPrefix(addr, p.Group+".")
	}
	return blockOf(addr) == p.Group
}

// ResumePacing returns, for the groups of paces whose recorded sends
// still hold the rate at now, the earliest time the group's next request
// may start. The requests st records within the last window of the rate
// (Per before now) are replayed as the executor paces them, each moving
// the group's next start on by the time its targets take at the rate (an
// answer's time stands for its request's start: later, so never sooner);
// once every one of them has left the window the rate is whole again, so
// the start is never later than the last one plus Per. A request counts
// when the service may have taken it: delivered, skipped, unknown, or
// failed with a request id; not a target recorded already-delivered, nor
// one failed "not sent" without a request.
func ResumePacing(st *state.State, paces []Pace, now time.Time) map[string]time.Time {
	if st == nil || len(paces) == 0 {
		return nil
	}
	out := map[string]time.Time{}
	for _, p := range paces {
		if next, ok := resume(st, p, now); ok {
			out[p.Group] = next
		}
	}
	return out
}

// sent is one request as the state records it: its answer's time and
// request id, and how many of the group's targets it carried.
type sent struct {
	at      time.Time
	id      string
	targets int
}

func resume(st *state.State, p Pace, now time.Time) (time.Time, bool) {
	since := now.Add(-p.Per)
	type key struct {
		at time.Time
		id string
	}
	byRequest := map[key]int{}
	for m := range st.LedgerMessages() {
		if !p.Member(m.Address) || !mayDeliverSince(m, since) {
			continue // a ledger entry forgotten before the window holds no send in it
		}
		for _, t := range m.AllTargets() {
			if t.Time.After(since) && tookRate(t) {
				byRequest[key{t.Time, t.RequestID}]++
			}
		}
	}
	if len(byRequest) == 0 {
		return time.Time{}, false
	}
	reqs := make([]sent, 0, len(byRequest))
	for k, n := range byRequest {
		reqs = append(reqs, sent{k.at, k.id, n})
	}
	slices.SortFunc(reqs, func(a, b sent) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	var next time.Time
	for _, r := range reqs {
		next = maxTime(next, r.at).Add(p.Interval(r.targets))
	}
	next = minTime(next, reqs[len(reqs)-1].at.Add(p.Per))
	return next, next.After(now)
}

// tookRate reports whether the request that recorded t may have reached
// the service, and so used its group's rate.
func tookRate(t *state.Target) bool {
	switch t.Outcome {
	case state.Delivered, state.Skipped, state.Unknown:
		return true
	case state.Failed:
		return t.RequestID != ""
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
