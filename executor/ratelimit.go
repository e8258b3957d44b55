package executor

import (
	"fmt"
	"net/http"
	"strconv"

	"pushform/pushapi"
)

// RateLimitedError ends a run whose budget for waiting out 429s was spent
// (pushapi.RateLimit): the request that met it and every request not
// started are recorded not sent, never failed, and the next apply sends
// them. In-flight requests finish.
type RateLimitedError struct {
	Spent *pushapi.RateLimitSpentError
	// RequestID is the last 429's.
	RequestID string
	// NotSent counts the run's targets not sent, once the run is over.
	NotSent int
}

func (e *RateLimitedError) Error() string {
	if e.NotSent == 0 {
		return fmt.Sprintf("apply stopped: %v (the last 429: request id %s)", e.Spent, e.RequestID)
	}
	n := strconv.Itoa(e.NotSent) + " targets were"
	if e.NotSent == 1 {
		n = "1 target was"
	}
	return fmt.Sprintf("%s not sent: %v (the last 429: request id %s); they are recorded not sent, and the next apply sends them", n, e.Spent, e.RequestID)
}

// rateLimited records pb not sent after a 429 (err) whose wait the run's
// budget refused, and returns the error that stops the run; the batches
// not started are recorded not sent for the same reason. When an earlier
// try may have been processed (maybe), pb is recorded unknown instead.
func (r *run) rateLimited(pb *prepared, err, maybe error, spent *pushapi.RateLimitSpentError) error {
	rid := pushapi.RequestID(err)
	why := fmt.Sprintf("not sent: the service kept answering 429 Too Many Requests beyond this run's wait budget (%s, --rate-limit-wait); the next apply sends it", spent.Budget)
	if maybe != nil {
		if ferr := r.failed(pb, err, maybe); ferr != nil {
			return ferr
		}
		r.mu.Lock()
		r.notSentWhy = why
		r.mu.Unlock()
		return &RateLimitedError{Spent: spent, RequestID: rid}
	}
	jerr := r.record(failedEntry(pb.intent, r.opts.Now().UTC(), rid, http.StatusTooManyRequests, func(int) string { return why }))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notSentWhy = why
	r.res.NotStarted += pb.targets
	if jerr != nil {
		r.unrecorded().NotSent += pb.targets
	}
	r.emit(Event{Type: EventError, Batch: pb.b, Addresses: pb.names, Targets: pb.targets, RequestID: rid, Status: http.StatusTooManyRequests,
		Error: why, Unrecorded: jerr != nil})
	if jerr != nil {
		return jerr
	}
	return &RateLimitedError{Spent: spent, RequestID: rid}
}
