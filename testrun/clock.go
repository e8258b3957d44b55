package testrun

import (
	"context"
	"sync"
	"time"
)

// simClock is the clock a test run reads as the real one: it stands still
// but for the waits it is asked to sleep (send_rate pacing, the backoff
// between tries), which move it on at once. So a run's times are its now
// and what its waits add, whatever the machine's speed, and a paced send
// takes no real time. The waits add up: the run sends one request at a
// time.
type simClock struct {
	mu  sync.Mutex
	at  time.Time
	off time.Duration
}

func (c *simClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at.Add(c.off)
}

// sleep moves the clock on by d, unless ctx has ended.
func (c *simClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.mu.Lock()
		c.off += d
		c.mu.Unlock()
	}
	return nil
}
