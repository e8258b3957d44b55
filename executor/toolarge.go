package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"pushform/pushapi"
)

// A request too large for the service (pushapi.TooLarge: a 413, or a 400
// saying so at request level) refused nothing it holds: it is sent again
// in halves, as a request refused without saying which notification is to
// blame is (see refused): first its notifications, then a lone
// notification's ids, until each part fits. A lone notification to a lone
// target still too large is the one that fails, with the service's words.
// The sizes that fitted are kept for the rest of the run (sizeLimits), so
// later requests are sent in parts of them at once.

// sizeLimits are the largest requests the service took after refusing a
// larger one as too large in this run: notifications per request and ids
// per notification; 0 while none was refused.
type sizeLimits struct {
	mu           sync.Mutex
	objects, ids int
}

// took notes that the service took pb, when pb is a part of a split for
// size: its size fits.
func (l *sizeLimits) took(pb *prepared) {
	if pb.sized == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch pb.sized {
	case splitObjects:
		if l.objects == 0 || len(pb.req) < l.objects {
			l.objects = len(pb.req)
		}
	case splitIDs:
		n := 0
		for _, it := range pb.intent.Items {
			n = max(n, len(it.Targets))
		}
		if l.ids == 0 || n < l.ids {
			l.ids = n
		}
	}
}

func (l *sizeLimits) get() (objects, ids int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.objects, l.ids
}

// How a part came from a split for size.
const (
	splitObjects byte = 1 + iota // its notifications are half of a request's
	splitIDs                     // its ids are half of a notification's
)

// fitted returns pb in parts of the sizes the service took earlier in
// the run, nil when pb fits them (or none is known).
func (r *run) fitted(stop context.Context, pb *prepared) []*prepared {
	objects, ids := r.sizes.get()
	if objects == 0 && ids == 0 {
		return nil
	}
	var parts [][]piece
	var cur []piece
	add := func(pc piece) {
		if objects > 0 && len(cur) == objects {
			parts, cur = append(parts, cur), nil
		}
		cur = append(cur, pc)
	}
	for i := range pb.req {
		n := len(pb.intent.Items[i].Targets)
		if ids == 0 || n <= ids || !splittable(&pb.req[i]) {
			add(piece{i: i, to: -1})
			continue
		}
		for from := 0; from < n; from += ids {
			add(piece{i: i, from: from, to: min(from+ids, n)})
		}
	}
	parts = append(parts, cur)
	if len(parts) == 1 && len(parts[0]) == len(pb.req) {
		return nil
	}
	r.partBase(stop)
	subs := make([]*prepared, len(parts))
	for j, pcs := range parts {
		subs[j] = r.partOf(pb, pcs)
	}
	return subs
}

// splittable reports whether n's targets may be sent in parts: user and
// device ids may, a topics array is one target.
func splittable(n *pushapi.Notification) bool {
	return len(n.UserIDs) > 1 || len(n.DeviceIDs) > 1
}

// halves splits pb for size: its notifications in two, or a lone
// notification's ids; nil when pb is one notification to one target.
func (r *run) halves(stop context.Context, pb *prepared) []*prepared {
	var a, b []piece
	kind := splitObjects
	switch k := len(pb.req); {
	case k > 1:
		for i := range k {
			if i < k/2 {
				a = append(a, piece{i: i, to: -1})
			} else {
				b = append(b, piece{i: i, to: -1})
			}
		}
	case k == 1 && splittable(&pb.req[0]):
		n := len(pb.intent.Items[0].Targets)
		a, b, kind = []piece{{i: 0, from: 0, to: n / 2}}, []piece{{i: 0, from: n / 2, to: n}}, splitIDs
	default:
		return nil
	}
	r.partBase(stop)
	subs := []*prepared{r.partOf(pb, a), r.partOf(pb, b)}
	for _, s := range subs {
		s.sized = kind
	}
	return subs
}

// tooLarge handles a request the service found too large (err): it is
// recorded not sent and sent again in halves, or, one notification to one
// target, fails with the service's words.
func (r *run) tooLarge(ctx, stop context.Context, pb *prepared, err error, recorders *recorders, fatal context.CancelCauseFunc) error {
	parts := r.halves(stop, pb)
	if parts == nil {
		rid, status := answerOf(err)
		words := serviceWords(err)
		e := failedEntry(pb.intent, r.opts.Now().UTC(), rid, status, func(int) string { return "rejected by the service as too large: " + words })
		jerr := r.record(e)
		r.mu.Lock()
		defer r.mu.Unlock()
		counts := Counts{Failed: pb.targets}
		r.res.Counts.add(counts)
		if jerr != nil {
			r.unrecorded().add(counts)
		}
		r.res.Errors = append(r.res.Errors, &BatchError{Batch: pb.b, Addresses: pb.names,
			Err: fmt.Errorf("too large for the service even alone: %w", err)})
		r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, RequestID: rid, Status: status,
			Counts: counts, Error: err.Error(), Unrecorded: jerr != nil})
		return jerr
	}
	return r.resend(ctx, stop, pb, parts, err, recorders, fatal)
}

// resend records pb not sent and sends parts instead: after the service
// found it too large (err), or at once, to the sizes it took before (err
// nil).
func (r *run) resend(ctx, stop context.Context, pb *prepared, parts []*prepared, err error, recorders *recorders, fatal context.CancelCauseFunc) error {
	rid, status := answerOf(err)
	why := fmt.Sprintf("not sent: request %d is larger than the service took earlier in this run; sent again in parts", pb.b+1)
	if err != nil {
		why = fmt.Sprintf("not sent: request %d was too large for the service (%d, request id %s); sent again in parts", pb.b+1, status, rid)
	}
	if pb.journaled {
		if jerr := r.record(failedEntry(pb.intent, r.opts.Now().UTC(), rid, status, func(int) string { return why })); jerr != nil {
			r.mu.Lock()
			r.res.NotStarted += pb.targets
			r.unrecorded().NotSent += pb.targets
			r.mu.Unlock()
			return jerr
		}
	}
	numbers := make([]int, len(parts))
	for i, p := range parts {
		numbers[i] = p.b
	}
	msg := "larger than the service took earlier in this run"
	if err != nil {
		msg = err.Error()
	}
	r.mu.Lock()
	r.emit(Event{Type: EventSplit, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, RequestID: rid, Status: status,
		Error: msg, Parts: numbers, TooLarge: true})
	r.mu.Unlock()
	return r.sendParts(ctx, stop, parts, recorders, fatal)
}

// serviceWords is what the service said of a request too large: its
// request-level issues, or its answer's excerpt.
func serviceWords(err error) string {
	var ve *pushapi.ValidationError
	var se *pushapi.StatusError
	switch {
	case errors.As(err, &ve):
		var parts []string
		for _, is := range ve.Issues {
			is.Index = -1
			parts = append(parts, is.String())
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
		if ve.Excerpt != "" {
			return ve.Excerpt
		}
	case errors.As(err, &se):
		if se.Excerpt != "" {
			return fmt.Sprintf("%d %s: %s", se.StatusCode, http.StatusText(se.StatusCode), se.Excerpt)
		}
		return fmt.Sprintf("%d %s", se.StatusCode, http.StatusText(se.StatusCode))
	}
	return err.Error()
}
