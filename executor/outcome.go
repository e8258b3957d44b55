package executor

import (
	"errors"
	"pushform/message"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
	"strings"
	"time"
)

// Outcome mapping: a request's answer (or its failure) turned into journal
// entries, counts and failures.

// failedEntry records every target of intent as failed, part i with
// message msg(i).
func failedEntry(intent state.Entry, now time.Time, requestID string, status int, msg func(i int) string) state.Entry {
	e := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: requestID, Status: status,
		Items: make([]state.Item, len(intent.Items))}
	for i, it := range intent.Items {
		t := state.Target{Outcome: state.Failed, Fingerprint: it.Fingerprint, Time: now, Message: msg(i), RequestID: requestID}
		outcomes := make([]state.Target, len(it.Targets))
		for j := range outcomes {
			outcomes[j] = t
		}
		e.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	return e
}

func (r *run) answered(pb *prepared, resp *pushapi.SendResponse) error {
	b, intent, addrs, targets := pb.b, pb.intent, pb.addrs, pb.targets
	now := r.opts.Now().UTC()
	out := state.Entry{Type: state.EntryOutcome, Batch: intent.Batch, Time: now, RequestID: resp.RequestID, Status: resp.StatusCode,
		Items: make([]state.Item, len(intent.Items))}
	var counts Counts
	var failures []Failure
	skipped := map[string]int{}
	for i, it := range intent.Items {
		outcomes := make([]state.Target, len(it.Targets))
		var results []pushapi.Result
		if i < len(resp.Results) {
			results = resp.Results[i]
		}
		for j, id := range it.Targets {
			res := resultFor(results, j, it.TargetKind)
			t := toTarget(res, it.Fingerprint, resp.RequestID, now)
			outcomes[j] = t
			switch t.Outcome {
			case state.Delivered:
				counts.Delivered++
			case state.Skipped:
				counts.Skipped++
				skipped[t.Reason]++
			case state.Failed:
				counts.Failed++
				failures = append(failures, Failure{Address: it.Address, Target: id, Message: t.Message, RequestID: resp.RequestID})
			default:
				counts.Unknown++
			}
		}
		out.Items[i] = state.Item{Address: it.Address, Fingerprint: it.Fingerprint, Targets: it.Targets, Outcomes: outcomes}
	}
	if err := r.record(out); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
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
	r.emit(Event{Type: EventResponse, Batch: b, Addresses: addrs, Targets: targets, RequestID: resp.RequestID, Status: resp.StatusCode, Counts: counts})
	return nil
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

func toTarget(res *pushapi.Result, fp, requestID string, now time.Time) state.Target {
	t := state.Target{Fingerprint: fp, RequestID: requestID, Time: now}
	if res == nil { // the client checks lengths; be safe anyway
		t.Outcome = state.Unknown
		return t
	}
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

// failed records a batch that got no usable answer. When the request may
// have been processed its targets stay unknown (as the intent left them);
// when it certainly was not, they are recorded failed with the reason, so
// the next plan sends them again.
func (r *run) failed(pb *prepared, err error) error {
	class, _ := pushapi.Classify(err)
	var auth *pushapi.AuthError
	var ve *pushapi.ValidationError
	be := &BatchError{Batch: pb.b, Addresses: pb.addrs, Err: err, Unknown: class == pushapi.Ambiguous}
	var counts Counts
	if be.Unknown {
		counts.Unknown = pb.targets // as the intent left them
	} else {
		requestID, status := "", 0
		msg := func(int) string { return "not sent: " + err.Error() }
		if errors.As(err, &ve) {
			requestID, status = ve.RequestID, 400
			msg = func(i int) string { return "rejected by the service: " + issuesFor(ve, i) }
		}
		if jerr := r.record(failedEntry(pb.intent, r.opts.Now().UTC(), requestID, status, msg)); jerr != nil {
			return jerr
		}
		counts.Failed = pb.targets
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Counts.add(counts)
	r.res.Errors = append(r.res.Errors, be)
	r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.addrs, Targets: pb.targets, Counts: counts, Error: err.Error()})
	if errors.As(err, &auth) {
		return err
	}
	return nil
}

// issuesFor renders the service's issues that concern notification i of a
// request (or all of them when the service gave no index).
func issuesFor(ve *pushapi.ValidationError, i int) string {
	if len(ve.Issues) == 0 {
		if ve.Excerpt == "" {
			return "the request was refused with no details"
		}
		return ve.Excerpt
	}
	var parts []string
	for _, is := range ve.Issues {
		if is.Index == i || is.Index < 0 {
			parts = append(parts, is.String())
		}
	}
	if len(parts) == 0 {
		return "another notification of the same request was invalid"
	}
	return strings.Join(parts, "; ")
}

// notification builds the request object of change c for ids.
func notification(c *planner.Change, ids []string) pushapi.Notification {
	n := pushapi.Notification{
		Title:              c.Content.Title,
		Body:               c.Content.Body,
		OpenToURL:          c.Content.OpenToURL,
		BadgeCount:         c.Content.BadgeCount,
		SilentInForeground: c.Content.SilentInForeground,
		Tag:                c.Content.Tag,
	}
	switch c.TargetKind {
	case message.TargetDevices:
		n.DeviceIDs = ids
	case message.TargetTopics:
		n.Topics = ids
	default:
		n.UserIDs = ids
	}
	return n
}
