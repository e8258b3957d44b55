package executor

import (
	"errors"
	"net/http"
	"time"

	"pushform/message"
	"pushform/pushapi"
	"pushform/state"
)

// Outcome mapping: a request's answer (or its failure) turned into journal
// entries, counts and failures.

// failedEntry records every target of intent as failed, part i with
// message msg(i).
func failedEntry(intent state.Entry, now time.Time, requestID string, status int, msg func(i int) string) state.Entry {
	return outcomeEntry(intent, now, requestID, status, func(i int) state.Target {
		return state.Target{Outcome: state.Failed, Message: msg(i)}
	})
}

// outcomeEntry records every target of part i of intent with outcome
// rec(i), stamped with the request id, the fingerprint and the time.
func outcomeEntry(intent state.Entry, now time.Time, requestID string, status int, rec func(i int) state.Target) state.Entry {
	e := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: requestID, Status: status,
		Items: make([]state.Item, len(intent.Items))}
	for i, it := range intent.Items {
		t := rec(i)
		t.Fingerprint, t.Time, t.RequestID = it.Fingerprint, now, requestID
		outcomes := make([]*state.Target, len(it.Targets))
		for j := range outcomes {
			outcomes[j] = &t
		}
		e.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	return e
}

func (r *run) answered(pb *prepared, resp *pushapi.SendResponse) error {
	b, intent, addrs, targets := pb.b, pb.intent, pb.names, pb.targets
	now := r.opts.Now().UTC()
	out := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: resp.RequestID, Status: resp.StatusCode,
		Items: make([]state.Item, len(intent.Items))}
	var counts Counts
	var failures []Failure
	skipped := map[string]int{}
	// Equal outcomes in a row share one record, across the items of one
	// content too (a personalised notification's texts): most of a
	// request's are equal, and a record is 120 bytes.
	var last *state.Target
	var lastRes *pushapi.Result
	for i, it := range intent.Items {
		outcomes := make([]*state.Target, len(it.Targets))
		var results []pushapi.Result
		if i < len(resp.Results) {
			results = resp.Results[i]
		}
		if last != nil && last.Fingerprint != it.Fingerprint {
			last = nil
		}
		for j, id := range it.Targets {
			// A result like the last makes the same record: only a
			// different one is made (with its 120-byte comparison, that
			// took 22 ns a target).
			res := resultFor(results, j, it.TargetKind)
			if last == nil || !sameResult(res, lastRes) {
				t := toTarget(res, it.Fingerprint, resp.RequestID, now)
				if last == nil || *last != t {
					rec := t // copied only when it differs, so t stays on the stack
					last = &rec
				}
				lastRes = res
			}
			outcomes[j] = last
			switch last.Outcome {
			case state.Delivered:
				counts.Delivered++
			case state.Skipped:
				counts.Skipped++
				skipped[last.Reason]++
			case state.Failed:
				counts.Failed++
				failures = append(failures, Failure{Address: it.Address, Target: id, Message: last.Message, RequestID: resp.RequestID})
			default:
				counts.Unknown++
			}
		}
		out.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	resp.Release() // every result is copied into out
	// The answer is counted even when it cannot be recorded: the
	// summary says what reached devices.
	jerr := r.record(out)
	r.mu.Lock()
	defer r.mu.Unlock()
	if jerr != nil {
		r.unrecorded().add(counts)
	}
	r.res.Requests++
	r.res.Counts.add(counts)
	for k, v := range skipped {
		r.res.Skipped[k] += v
	}
	for _, f := range failures {
		if len(r.res.Failures) < MaxListed {
			r.res.Failures = append(r.res.Failures, f)
		}
	}
	r.emit(Event{Type: EventResponse, Batch: b, Addresses: addrs, Targets: targets, RequestID: resp.RequestID, Status: resp.StatusCode, Counts: counts,
		Unrecorded: jerr != nil})
	return jerr
}

// resultFor picks target j's result; a topics notification has one result
// for its whole array.
func resultFor(results []pushapi.Result, j int, targetKind message.TargetKind) *pushapi.Result {
	if targetKind == message.TargetTopics {
		j = 0
	}
	if j < len(results) {
		return &results[j]
	}
	return nil
}

// sameResult reports whether a and b say the same of their targets: what
// toTarget keeps of them is equal.
func sameResult(a, b *pushapi.Result) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Outcome == b.Outcome && a.Reason == b.Reason && a.Message == b.Message && a.Unreadable == b.Unreadable &&
		(a.DeviceCount == nil) == (b.DeviceCount == nil) && (a.DeviceCount == nil || *a.DeviceCount == *b.DeviceCount) &&
		(a.UnreachableSince == b.UnreachableSince || a.UnreachableSince != nil && b.UnreachableSince != nil && *a.UnreachableSince == *b.UnreachableSince)
}

func toTarget(res *pushapi.Result, fp, requestID string, now time.Time) state.Target {
	t := state.Target{Fingerprint: fp, RequestID: requestID, Time: now}
	if res == nil { // the client checks lengths; be safe anyway
		t.Outcome = state.Unknown
		return t
	}
	t.Unreadable = res.Unreadable
	switch res.Outcome {
	case pushapi.OutcomeDelivered:
		t.Outcome = state.Delivered
		t.DeviceCount = -1
		if res.DeviceCount != nil {
			t.DeviceCount = *res.DeviceCount
		}
	case pushapi.OutcomeSkipped:
		t.Outcome = state.Skipped
		t.Reason = res.Reason
		t.UnreachableSince = res.UnreachableSince
	case pushapi.OutcomeFailed:
		t.Outcome = state.Failed
		t.Message = res.Message
	default:
		t.Outcome = state.Unknown
	}
	return t
}

// failed records a batch that got no usable answer, other than a 400 (see
// refused). When the request may have been processed (by its last try, or
// by maybe, an earlier try) its targets are unknown, with the request id and
// why, and count one more unanswered request; when it certainly was not,
// they are recorded failed with the reason, so the next plan sends them
// again. A rejected API key stops the run: it is returned, not listed in
// Result.Errors, so it is shown once.
func (r *run) failed(pb *prepared, err, maybe error) error {
	class, _ := pushapi.Classify(err)
	var auth *pushapi.AuthError
	isAuth := errors.As(err, &auth)
	be := &BatchError{Batch: pb.b, Addresses: pb.names, Err: err, Unknown: class == pushapi.Ambiguous || maybe != nil}
	requestID, status := answerOf(err)
	now := r.opts.Now().UTC()
	var counts Counts
	var e state.Entry
	if be.Unknown {
		why := "no usable answer: " + err.Error()
		if class != pushapi.Ambiguous {
			// The last try was refused, an earlier one may have gone
			// through: that one is the request to ask about.
			requestID, status = answerOf(maybe)
			why = "no usable answer: " + maybe.Error() + "; the last try: " + err.Error()
		}
		e = outcomeEntry(pb.intent, now, requestID, status, func(int) state.Target {
			return state.Target{Outcome: state.Unknown, Message: why}
		})
		counts.Unknown = pb.targets
	} else {
		e = failedEntry(pb.intent, now, requestID, status, func(int) string { return "not sent: " + err.Error() })
		counts.Failed = pb.targets
	}
	jerr := r.record(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	if jerr != nil {
		r.unrecorded().add(counts)
	}
	r.res.Counts.add(counts)
	if !isAuth {
		r.res.Errors = append(r.res.Errors, be)
	}
	r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, RequestID: requestID, Status: status, Counts: counts, Error: err.Error(),
		Unrecorded: jerr != nil})
	switch {
	case jerr != nil:
		return jerr
	case isAuth:
		return err
	}
	return nil
}

// answerOf returns the request id and status of the answer an error came
// with, as far as there was one.
func answerOf(err error) (requestID string, status int) {
	var (
		ve *pushapi.ValidationError
		ae *pushapi.AuthError
		se *pushapi.StatusError
		de *pushapi.DecodeError
		te *pushapi.TransportError
	)
	switch {
	case errors.As(err, &ve):
		return ve.RequestID, http.StatusBadRequest
	case errors.As(err, &ae):
		return ae.RequestID, http.StatusUnauthorized
	case errors.As(err, &se):
		return se.RequestID, se.StatusCode
	case errors.As(err, &de):
		return de.RequestID, de.StatusCode
	case errors.As(err, &te):
		return te.RequestID, 0
	}
	return "", 0
}

// notification builds the request object of change c for ids.
func notification(c message.Content, kind message.TargetKind, ids []string) pushapi.Notification {
	n := pushapi.Notification{
		Title:              c.Title,
		Body:               c.Body,
		OpenToURL:          c.OpenToURL,
		BadgeCount:         c.BadgeCount,
		SilentInForeground: c.SilentInForeground,
		Tag:                c.Tag,
	}
	switch kind {
	case message.TargetDevices:
		n.DeviceIDs = ids
	case message.TargetTopics:
		n.Topics = ids
	default:
		n.UserIDs = ids
	}
	return n
}
