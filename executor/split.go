package executor

import (
	"context"
	"fmt"
	"math/bits"
	"net/http"
	"strings"

	"pushform/pushapi"
	"pushform/state"
)

// A 400 refuses a whole request and sends nothing (spec part 7), so one
// invalid notification would block every notification packed with it.
// refused isolates it: the notifications the service's issues point at are
// blamed, and the others are sent again as new requests, each journaled
// with its own intent and outcome; when no issue points at a notification,
// the request is bisected until the refused parts hold one notification.

// refused handles a 400 on pb. Its outcome entry records the blamed
// notifications' targets failed with the service's message and the 400's
// request id, and the others failed "not sent" with that id; a part sent
// again then records its own intent (its targets become unknown) and
// outcome. A crash at any point leaves each target with the record of the
// last request that could have reached it: never a lost outcome, and
// nothing both recorded not sent and delivered.
func (r *run) refused(ctx, stop context.Context, pb *prepared, ve *pushapi.ValidationError, recorders *recorders, fatal context.CancelCauseFunc) error {
	k := len(pb.req)
	blamed := make([]bool, k)
	identified := false
	if k == 1 {
		blamed[0] = true // whatever the issues say, they concern it
	} else {
		for _, is := range ve.Issues {
			if is.Index >= 0 && is.Index < k {
				blamed[is.Index], identified = true, true
			}
		}
	}
	var bad, rest []int
	for i := range k {
		if blamed[i] {
			bad = append(bad, i)
		} else {
			rest = append(rest, i)
		}
	}
	// The requests the rest is sent again in.
	var parts [][]int
	switch {
	case len(rest) == 0:
	case identified:
		parts = [][]int{rest}
	default:
		if pb.bisect == nil {
			pb.bisect = &bisection{left: bisectBudget(k)}
		}
		if pb.bisect.left >= 2 {
			pb.bisect.left -= 2
			pb.bisect.sent += 2
			h := len(rest) / 2
			parts = [][]int{rest[:h], rest[h:]}
		}
	}
	unattributed := len(rest) > 0 && len(parts) == 0

	rid := ve.RequestID
	restMsg := fmt.Sprintf("not sent: request %d was refused (400, request id %s) over another notification in it", pb.b+1, rid)
	if !identified && k > 1 {
		restMsg = fmt.Sprintf("not sent: the request was refused (400, request id %s) and the service did not say which notification was invalid", rid)
	}
	now := r.opts.Now().UTC()
	out := failedEntry(pb.intent, now, rid, http.StatusBadRequest, func(i int) string {
		if blamed[i] {
			return "rejected by the service: " + issuesAbout(ve, i, k)
		}
		return restMsg
	})
	if err := r.record(out); err != nil {
		// Refused: nothing of it reached a device, but the state holds
		// its targets as sent: the blamed ones failed, the others were
		// not sent.
		_, nBad := pb.pick(bad)
		r.mu.Lock()
		r.res.Counts.Failed += nBad
		r.unrecorded().Failed += nBad
		r.res.NotStarted += pb.targets - nBad
		r.unrecorded().NotSent += pb.targets - nBad
		r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, RequestID: rid, Status: http.StatusBadRequest,
			Counts: Counts{Failed: nBad}, Error: ve.Error(), Unrecorded: true})
		r.mu.Unlock()
		return err
	}
	subs := make([]*prepared, len(parts))
	numbers := make([]int, len(parts))
	if len(parts) > 0 {
		r.partBase(stop)
	}
	for i, idx := range parts {
		subs[i] = r.part(pb, idx)
		numbers[i] = subs[i].b
	}

	r.mu.Lock()
	if len(bad) > 0 {
		addrs, n := pb.pick(bad)
		err := blamedError(ve, bad, k)
		r.res.Counts.Failed += n
		r.res.Errors = append(r.res.Errors, &BatchError{Batch: pb.b, Addresses: addrs, Err: err})
		r.emit(Event{Type: EventError, Batch: pb.b, Addresses: addrs, Targets: n, RequestID: rid, Status: http.StatusBadRequest,
			Counts: Counts{Failed: n}, Error: err.Error()})
	}
	if unattributed {
		addrs, n := pb.pick(rest)
		err := &UnattributedError{Err: ve, Requests: pb.bisect.sent}
		r.res.Counts.Failed += n
		r.res.Errors = append(r.res.Errors, &BatchError{Batch: pb.b, Addresses: addrs, Err: err})
		r.emit(Event{Type: EventError, Batch: pb.b, Addresses: addrs, Targets: n, RequestID: rid, Status: http.StatusBadRequest,
			Counts: Counts{Failed: n}, Error: err.Error()})
	}
	if len(parts) > 0 {
		addrs, n := pb.pick(rest)
		r.emit(Event{Type: EventSplit, Batch: pb.b, Addresses: addrs, Targets: n, RequestID: rid, Status: http.StatusBadRequest,
			Error: ve.Error(), Parts: numbers})
	}
	r.mu.Unlock()
	return r.sendParts(ctx, stop, subs, recorders, fatal)
}

// sendParts sends the parts of a request split after it was recorded not
// sent, one after another, each with its own intent and outcome.
func (r *run) sendParts(ctx, stop context.Context, subs []*prepared, recorders *recorders, fatal context.CancelCauseFunc) error {
	for i, sub := range subs {
		if stop.Err() != nil || ctx.Err() != nil {
			// Recorded not sent; the next plan sends them.
			r.mu.Lock()
			r.res.NotStarted += sub.targets
			r.mu.Unlock()
			continue
		}
		sub.intent.Time = r.opts.Now().UTC()
		if err := r.record(sub.intent); err != nil {
			// Recorded not sent, as are the parts after it.
			r.mu.Lock()
			for _, rest := range subs[i:] {
				r.res.NotStarted += rest.targets
			}
			r.mu.Unlock()
			return err
		}
		sub.journaled = true
		if err := r.send(ctx, stop, sub, nil, recorders, fatal); err != nil {
			return err
		}
	}
	return nil
}

// bisection is the budget of one plan batch's bisection; its parts are
// sent one after the other by one worker.
type bisection struct {
	left, sent int // requests
}

// bisectBudget is how many requests may be spent bisecting a refused
// request of k notifications that the service did not attribute: enough to
// isolate any one invalid notification, or every notification of a small
// request, without letting a request-wide refusal cost 2k requests.
func bisectBudget(k int) int {
	return min(2*k-2, 4*bits.Len(uint(k)))
}

// part builds the request of pb's notifications idx, numbered after every
// request of the run so far; its intent is not journaled yet.
func (r *run) part(pb *prepared, idx []int) *prepared {
	pieces := make([]piece, len(idx))
	for j, i := range idx {
		pieces[j] = piece{i: i, to: -1}
	}
	return r.partOf(pb, pieces)
}

// piece is notification i of a request, or with to >= 0 its targets
// from to to (user or device ids).
type piece struct{ i, from, to int }

// partOf builds the request of pb's pieces, numbered after every request
// of the run so far; its intent is not journaled yet.
func (r *run) partOf(pb *prepared, pieces []piece) *prepared {
	b := int(r.nextBatch.Add(1) - 1)
	sub := &prepared{b: b, idempotent: true, bisect: pb.bisect, paces: pb.paces,
		intent: state.Entry{Type: state.EntryIntent, Batch: int64(b)}}
	for _, pc := range pieces {
		it, n := pb.intent.Items[pc.i], pb.req[pc.i]
		if pc.to >= 0 {
			it.Targets = it.Targets[pc.from:pc.to:pc.to]
			switch {
			case n.UserIDs != nil:
				n.UserIDs = it.Targets
			case n.DeviceIDs != nil:
				n.DeviceIDs = it.Targets
			}
		}
		sub.windows = append(sub.windows, pb.windows[pc.i])
		sub.quiet = append(sub.quiet, pb.quiet[pc.i])
		sub.req = append(sub.req, n)
		sub.intent.Items = append(sub.intent.Items, it)
		sub.addrs = append(sub.addrs, pb.addrs[pc.i])
		sub.targets += len(it.Targets)
		if it.Content == nil || !it.Content.Idempotent(it.Kind) {
			sub.idempotent = false
		}
	}
	sub.names = distinctRuns(sub.addrs)
	return sub
}

// pick returns the addresses and the number of targets of notifications
// idx of pb.
func (pb *prepared) pick(idx []int) ([]string, int) {
	addrs := make([]string, len(idx))
	n := 0
	for j, i := range idx {
		addrs[j] = pb.addrs[i]
		n += len(pb.intent.Items[i].Targets)
	}
	return addrs, n
}

// issuesAbout renders what the service said about notification i of a
// refused request of k: every issue when it was alone, else the issues
// that point at it.
func issuesAbout(ve *pushapi.ValidationError, i, k int) string {
	var parts []string
	for _, is := range ve.Issues {
		if is.Index == i || k == 1 {
			is.Index = -1 // its place in the request means nothing later
			parts = append(parts, is.String())
		}
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, "; ")
	case ve.Excerpt != "":
		return ve.Excerpt
	}
	return "the request was refused with no details"
}

// blamedError is the 400 as it concerns the notifications bad of a request
// of k: their issues only, indexed by position in bad (the order of
// BatchError.Addresses); a lone one's issues carry no index.
func blamedError(ve *pushapi.ValidationError, bad []int, k int) *pushapi.ValidationError {
	out := &pushapi.ValidationError{RequestID: ve.RequestID}
	if k == 1 {
		out.Excerpt = ve.Excerpt
	}
	for _, is := range ve.Issues {
		switch {
		case k == 1 || len(bad) == 1 && is.Index == bad[0]:
			is.Index = -1
		default:
			pos := -1
			for j, i := range bad {
				if is.Index == i {
					pos = j
				}
			}
			if pos < 0 {
				continue // about another notification, or the request
			}
			is.Index = pos
		}
		out.Issues = append(out.Issues, is)
	}
	return out
}
