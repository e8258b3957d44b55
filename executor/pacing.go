package executor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"pushform/planner"
	"pushform/state"
)

// Pacing: a request of a send_rate group starts only when the group's
// earliest next start has come, and moves that start on by the time its
// targets take at the rate. The start is claimed at the moment the request
// goes, not when it is queued, so requests that waited (on a busy worker, a
// slow answer) cannot bunch: in any window of length W a group starts
// requests for at most rate*W targets plus one request's worth, across
// workers and retries. A request in several groups (a paced notification
// of a paced campaign) waits for all of them.

// pacer holds the next start of every group of a run.
type pacer struct {
	mu    sync.Mutex
	next  map[string]time.Time
	paces map[string]planner.Pace
}

// newPacer paces p's groups, each starting at from[group] (see
// Options.PaceFrom) or at once.
func newPacer(p *planner.Plan, from map[string]time.Time) *pacer {
	pc := &pacer{next: map[string]time.Time{}, paces: map[string]planner.Pace{}}
	for _, pace := range p.Pacing {
		pc.paces[pace.Group] = pace
		if at, ok := from[pace.Group]; ok {
			pc.next[pace.Group] = at
		}
	}
	return pc
}

// claim starts a request of n targets in groups at now if all of them
// allow it; else it returns the earliest time they might, and the group
// that holds it back.
func (pc *pacer) claim(groups []string, n int, now time.Time) (ok bool, at time.Time, by string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	at = now
	for _, g := range groups {
		if next := pc.next[g]; next.After(at) {
			at, by = next, g
		}
	}
	if at.After(now) {
		return false, at, by
	}
	for _, g := range groups {
		if pace, known := pc.paces[g]; known {
			pc.next[g] = now.Add(pace.Interval(n))
		}
	}
	return true, now, ""
}

// pace waits until pb may start under its send rates. It returns the time
// the request may start: now, or, when every target's delivery window
// closes before the rates would let it go, that later time without
// waiting (the window check then records them). err is set when stop ended
// the wait.
func (r *run) pace(stop context.Context, pb *prepared) (time.Time, error) {
	emitted := false
	for {
		now := r.opts.Now()
		if len(pb.paces) == 0 {
			return now, nil
		}
		ok, at, by := r.pacer.claim(pb.paces, pb.targets, now)
		if ok {
			return now, nil
		}
		if pb.allClosedBy(at) {
			return at, nil
		}
		if !emitted {
			emitted = true
			pace := r.pacer.paces[by]
			r.mu.Lock()
			r.emit(Event{Type: EventPacing, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, Delay: at.Sub(now),
				Group: by, Rate: pace.Rate()})
			r.mu.Unlock()
		}
		if err := r.opts.Sleep(stop, at.Sub(now)); err != nil {
			return now, err
		}
	}
}

// allClosedBy reports whether every item of pb has a delivery window that
// has closed at t.
func (pb *prepared) allClosedBy(t time.Time) bool {
	for _, w := range pb.windows {
		if w == nil || t.Before(*w) {
			return false
		}
	}
	return len(pb.windows) > 0
}

// WindowClosedError says targets were not sent (or not sent again)
// because their delivery window (send_before) had closed.
type WindowClosedError struct {
	At time.Time
	// Last is the error of the last try, when there was one.
	Last error
}

func (e *WindowClosedError) Error() string {
	s := "not sent: the delivery window closed at " + e.At.UTC().Format(time.RFC3339)
	if e.Last != nil {
		s += " (the last try: " + e.Last.Error() + ")"
	}
	return s
}

// quietBegan holds back the items of gone, whose targets' quiet_hours
// began before a try could start: a request never journaled is left as it
// was (its targets unsent, for the next apply after the window); one
// journaled (a retry) is recorded not sent, or unknown when an earlier
// try may have gone through. Not an error: the plan's time of day ran
// out (Result.Quiet).
func (r *run) quietBegan(gone *prepared, last, maybe error) error {
	at := gone.windows[0].UTC().Format(time.RFC3339)
	if gone.journaled {
		now := r.opts.Now().UTC()
		requestID, status := answerOf(last)
		var e state.Entry
		if maybe != nil {
			requestID, status = answerOf(maybe)
			e = outcomeEntry(gone.intent, now, requestID, status, func(int) state.Target {
				return state.Target{Outcome: state.Unknown, Message: fmt.Sprintf("no usable answer: %v; not tried again: quiet_hours began at %s", maybe, at)}
			})
		} else {
			e = failedEntry(gone.intent, now, requestID, status, func(int) string {
				return "not sent: quiet_hours began at " + at + "; the next apply after the window sends it"
			})
		}
		if err := r.record(e); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if gone.journaled && maybe != nil {
		r.res.Counts.Unknown += gone.targets
	} else {
		r.res.Quiet += gone.targets
	}
	r.emit(Event{Type: EventQuiet, Batch: gone.b, Addresses: gone.addrs, Targets: gone.targets, At: at})
	return nil
}

// closeWindows records the items of pb whose delivery window has closed at
// t, and returns pb without them: nil when none is left. last is the error
// of the try before, if any; maybe that of a try that may have been
// processed, whose targets are then unknown rather than failed.
func (r *run) closeWindows(pb *prepared, t time.Time, last, maybe error) (*prepared, error) {
	var closed, quiet, open []int
	for i, w := range pb.windows {
		switch {
		case w == nil || t.Before(*w):
			open = append(open, i)
		case pb.quiet[i]:
			quiet = append(quiet, i)
		default:
			closed = append(closed, i)
		}
	}
	if len(closed) == 0 && len(quiet) == 0 {
		return pb, nil
	}
	if len(quiet) > 0 {
		if err := r.quietBegan(pb.subset(quiet), last, maybe); err != nil {
			return nil, err
		}
	}
	if len(closed) == 0 {
		if len(open) == 0 {
			return nil, nil
		}
		return pb.subset(open), nil
	}
	gone := pb.subset(closed)
	now := r.opts.Now().UTC()
	var counts Counts
	requestID, status := answerOf(last)
	var e state.Entry
	if maybe != nil {
		requestID, status = answerOf(maybe)
		e = outcomeEntry(gone.intent, now, requestID, status, func(i int) state.Target {
			return state.Target{Outcome: state.Unknown, Message: fmt.Sprintf("no usable answer: %v; not tried again: the delivery window closed at %s",
				maybe, gone.windows[i].UTC().Format(time.RFC3339))}
		})
		counts.Unknown = gone.targets
	} else {
		e = failedEntry(gone.intent, now, requestID, status, func(i int) string {
			return (&WindowClosedError{At: *gone.windows[i], Last: last}).Error()
		})
		counts.Failed = gone.targets
	}
	entries := []state.Entry{e}
	if !pb.journaled {
		entries = []state.Entry{gone.intent, e}
		entries[0].Time = now
	}
	if err := r.record(entries...); err != nil {
		return nil, err
	}
	err := &WindowClosedError{At: *gone.windows[0], Last: last}
	r.mu.Lock()
	r.res.Counts.add(counts)
	r.res.Errors = append(r.res.Errors, &BatchError{Batch: gone.b, Addresses: gone.names, Err: err, Unknown: maybe != nil})
	r.emit(Event{Type: EventError, Batch: gone.b, Addresses: gone.names, Targets: gone.targets, RequestID: requestID, Status: status,
		Counts: counts, Error: err.Error()})
	r.mu.Unlock()
	if len(open) == 0 {
		return nil, nil
	}
	return pb.subset(open), nil
}

// subset returns the request of pb's notifications idx: the same request
// number and intent batch, journaled as pb is.
func (pb *prepared) subset(idx []int) *prepared {
	sub := &prepared{b: pb.b, idempotent: true, bisect: pb.bisect, paces: pb.paces, journaled: pb.journaled,
		intent: state.Entry{Type: state.EntryIntent, Batch: pb.intent.Batch, Time: pb.intent.Time}}
	for _, i := range idx {
		it := pb.intent.Items[i]
		sub.req = append(sub.req, pb.req[i])
		sub.intent.Items = append(sub.intent.Items, it)
		sub.addrs = append(sub.addrs, pb.addrs[i])
		sub.windows = append(sub.windows, pb.windows[i])
		sub.quiet = append(sub.quiet, pb.quiet[i])
		sub.targets += len(it.Targets)
		if it.Content == nil || !it.Content.Idempotent(it.Kind) {
			sub.idempotent = false
		}
	}
	sub.names = distinctRuns(sub.addrs)
	return sub
}
