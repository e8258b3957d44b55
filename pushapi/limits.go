package pushapi

// The service's limits the spec leaves unshown (part 8): a rate, met by 429,
// and a size, met by 413 or a request-level 400.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultRateLimitWait is the time a run may spend waiting out 429s.
const DefaultRateLimitWait = 10 * time.Minute

// RateLimit is one run's budget for waiting out 429 Too Many Requests,
// shared by everything that talks to the service in the run (the
// recipients pages and every send worker). A 429 is a wait, not a failed
// try: it asks everyone to pause, not one request to retry. So a 429
// pauses every caller of Pause until the wait it asked for is over (the
// workers slow down together), and the budget counts the time paused,
// once however many callers wait: ten workers answered 429 with
// Retry-After: 5 at once spend five seconds of it, not fifty. Once a wait
// would take the time paused beyond the budget, Wait refuses it. Safe for
// concurrent use; a nil *RateLimit has no budget (every Wait refused).
type RateLimit struct {
	budget time.Duration
	now    func() time.Time

	mu     sync.Mutex
	spent  time.Duration // paused so far
	until  time.Time     // the end of the current pause
	waited int           // 429s waited out
}

// NewRateLimit returns a budget of budget (DefaultRateLimitWait when not
// positive); now is the clock (nil: time.Now).
func NewRateLimit(budget time.Duration, now func() time.Time) *RateLimit {
	if budget <= 0 {
		budget = DefaultRateLimitWait
	}
	if now == nil {
		now = time.Now
	}
	return &RateLimit{budget: budget, now: now}
}

// Budget is the time the run may spend paused.
func (l *RateLimit) Budget() time.Duration {
	if l == nil {
		return 0
	}
	return l.budget
}

// Spent reports the time paused so far and how many 429s were waited out.
func (l *RateLimit) Spent() (time.Duration, int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spent, l.waited
}

// RateLimitSpentError is Wait's refusal: the budget is spent.
type RateLimitSpentError struct {
	Budget time.Duration
	Waited int // 429s waited out before
}

func (e *RateLimitSpentError) Error() string {
	return fmt.Sprintf("the service kept answering 429 Too Many Requests: %d waits took up the run's budget for them (%s, --rate-limit-wait)", e.Waited, e.Budget)
}

// Wait pauses the run for d after a 429 (its Retry-After, capped by the
// caller) and returns once the pause is over, or ctx ends. When the pause
// would take the time paused beyond the budget it does not wait and
// returns a *RateLimitSpentError.
func (l *RateLimit) Wait(ctx context.Context, d time.Duration, sleep func(context.Context, time.Duration) error) error {
	if l == nil {
		return &RateLimitSpentError{}
	}
	l.mu.Lock()
	now := l.now()
	from, end := now, now.Add(d)
	if l.until.After(from) {
		from = l.until
	}
	grows := max(end.Sub(from), 0)
	if l.spent+grows > l.budget {
		err := &RateLimitSpentError{Budget: l.budget, Waited: l.waited}
		l.mu.Unlock()
		return err
	}
	l.spent += grows
	l.waited++
	if end.After(l.until) {
		l.until = end
	}
	wait := l.until.Sub(now)
	l.mu.Unlock()
	return sleep(ctx, wait)
}

// Pause returns once the pause a 429 asked for is over (at once when
// there is none), or ctx ends: every request of the run waits for it.
func (l *RateLimit) Pause(ctx context.Context, sleep func(context.Context, time.Duration) error) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	d := l.until.Sub(l.now())
	l.mu.Unlock()
	if d <= 0 {
		return nil
	}
	return sleep(ctx, d)
}

// RateLimited reports whether err is a 429 Too Many Requests, and the
// wait its Retry-After asked for (0 when it gave none).
func RateLimited(err error) (bool, time.Duration) {
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusTooManyRequests {
		return true, se.RetryAfter
	}
	return false, 0
}

// TooLarge reports whether err says the request was too large for the
// service, not wrong: a 413 Payload Too Large, or a 400 whose issues say
// at request level (about no one notification) that the body, the number
// of objects or ids, or the payload is too large. Such a request is to be
// sent again in smaller parts, not failed.
func TooLarge(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.StatusCode == http.StatusRequestEntityTooLarge
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	for _, is := range ve.Issues {
		if is.Index < 0 && saysTooLarge(is.Field+" "+is.Message) {
			return true
		}
	}
	return len(ve.Issues) == 0 && saysTooLarge(ve.Excerpt)
}

// saysTooLarge reports whether text says something is too large and what
// is a size: "the request body exceeds 64 KiB", "too many userIds",
// "at most 50 notifications per request".
func saysTooLarge(text string) bool {
	t := strings.ToLower(text)
	return containsAny(t, "too large", "too big", "too long", "too many", "exceed", "maximum", "at most", "limit") &&
		containsAny(t, "body", "payload", "size", "byte", "kb", "mb", "object", "notification", "item", "element", "entries", "array", "count", "ids", "targets", "recipients")
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
