package executor

import (
	"context"
	"math/rand/v2"
	"time"
)

// The retry policy: what is retried is decided by pushapi.Classify; how
// long to wait is decided here.

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is capped exponential backoff with full jitter, never shorter
// than what the service asked for.
func (r *run) backoff(attempt int, after time.Duration) time.Duration {
	d := r.opts.BaseDelay << min(attempt-1, 16)
	if d > r.opts.MaxDelay || d <= 0 {
		d = r.opts.MaxDelay
	}
	d = d/2 + rand.N(d/2+1)
	// Honour Retry-After, within reason: a service asking for hours is
	// better reported than waited for.
	return max(d, min(after, r.opts.MaxRetryAfter))
}
