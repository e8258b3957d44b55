package state

import (
	"fmt"
	"sync"
)

// What every journaling backend shares: group commit of concurrent Append
// calls, and tracking of the snapshot a backend extends, so a run that
// started from an old state can record (and so send) nothing.

// GroupCommit batches a backend's concurrent Append calls: calls that
// arrive while another call's write is under way form a group that shares
// the next write and sync (or commit), so concurrent appenders pay for far
// fewer syncs than calls. The zero value is ready to use.
type GroupCommit[T any] struct {
	mu      sync.Mutex      // guards pending
	pending *commitGroup[T] // the group the next Do joins; nil when none waits
}

// commitGroup is the items of the calls that share one write.
type commitGroup[T any] struct {
	items []T
	done  chan struct{} // closed once err is set
	err   error
}

// Do adds items to the group the next write takes and returns that
// write's error. The first caller of a group, its leader, waits for the
// write before it by taking l (the backend's lock, held across each
// write), then seals the group, so later callers start the next one, and
// calls write with all of its items while holding l.
func (g *GroupCommit[T]) Do(l sync.Locker, items []T, write func([]T) error) error {
	return g.DoThenSync(l, items, func(items []T) (func() error, error) { return nil, write(items) })
}

// DoThenSync is Do where write may return a sync to wait for (an fsync)
// that runs after l is released: the next group is written meanwhile, so
// writes that need no sync of their own (outcomes) never queue behind
// another group's fsync. Every caller of the group gets the sync's error.
func (g *GroupCommit[T]) DoThenSync(l sync.Locker, items []T, write func([]T) (sync func() error, err error)) error {
	if len(items) == 0 {
		return nil
	}
	g.mu.Lock()
	c := g.pending
	leader := c == nil
	if leader {
		c = &commitGroup[T]{done: make(chan struct{})}
		g.pending = c
	}
	c.items = append(c.items, items...)
	g.mu.Unlock()
	if !leader {
		<-c.done
		return c.err
	}
	l.Lock()
	g.mu.Lock()
	g.pending = nil
	g.mu.Unlock()
	sync, err := write(c.items)
	l.Unlock()
	if err == nil && sync != nil {
		err = sync()
	}
	c.err = err
	close(c.done)
	return c.err
}

// NeedsSync reports whether entries must be durable before Append
// returns. Only outcomes need not: a request's outcome is written at once
// (a killed process loses nothing the kernel holds) and made durable by
// the next sync, which the next intent, any other entry or the final
// snapshot brings. Until then a power loss can only turn the targets of
// requests answered since the last sync back into unknown, and each of
// those had its intent synced and was in flight or queued when that sync
// ended: no more than a kill -9 leaves unknown.
func NeedsSync(entries ...Entry) bool {
	for _, e := range entries {
		if e.Type != EntryOutcome {
			return true
		}
	}
	return false
}

// Head is what a backend knows of the stored snapshot: the one it last
// read or persisted. Append extends only that one.
type Head struct {
	Known   bool // false until the first Read or Persist (or Append)
	Exists  bool // there was a snapshot
	Lineage string
	Serial  uint64
}

// HeadOf returns the Head of a state read or persisted; s nil means none
// was stored.
func HeadOf(s *State) Head {
	if s == nil {
		return Head{Known: true}
	}
	return Head{Known: true, Exists: true, Lineage: s.Lineage, Serial: s.Serial}
}

// Stale explains why the snapshot stored now (now) is not the one h knows,
// wrapping ErrStaleSerial or ErrLineage; nil when it is (or h knows none
// yet, so Append extends what is stored). name names the state.
func (h Head) Stale(name string, now Head) error {
	const tail = "another run wrote it since; these entries were not recorded"
	switch {
	case !h.Known || (!h.Exists && !now.Exists):
		return nil
	case !now.Exists:
		return fmt.Errorf("%w: %s no longer exists (this run read serial %d); %s", ErrStaleSerial, name, h.Serial, tail)
	case !h.Exists:
		return fmt.Errorf("%w: %s was created (lineage %s, serial %d) after this run found none; %s", ErrStaleSerial, name, now.Lineage, now.Serial, tail)
	case now.Lineage != h.Lineage:
		return fmt.Errorf("%w: %s now has lineage %s, this run read lineage %s; %s", ErrLineage, name, now.Lineage, h.Lineage, tail)
	case now.Serial != h.Serial:
		return fmt.Errorf("%w: %s is at serial %d, this run read serial %d; %s", ErrStaleSerial, name, now.Serial, h.Serial, tail)
	}
	return nil
}
