package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"
)

// Reader loads the current state: the last snapshot with every journal entry
// written since replayed over it. It returns a nil state and no error when
// nothing has been recorded yet.
type Reader interface {
	Read() (*State, error)
}

// Journal records entries durably: Append returns only once the entries are
// written and synced, so apply can record its intent before sending.
type Journal interface {
	Append(entries ...Entry) error
}

// Persister writes a whole state as the new snapshot and clears the journal.
// The manager owns the serial: Persist stores the state with the stored
// serial plus one and sets s.Serial to it. It refuses a state of another
// lineage (ErrLineage) and one whose serial is not the stored one
// (ErrStaleSerial: someone else wrote in between).
type Persister interface {
	Persist(s *State) error
}

// CompactReader is the optional capability of a Reader that can read a
// state compact (see State.Compact): no map of targets is built, which plan
// and apply need at millions of targets. A backend without it is read with
// Read.
type CompactReader interface {
	ReadCompact() (*State, error)
}

// Locker guards a state against concurrent writers.
//
// Lock tries once: when the state is locked by someone else it returns a
// *LockError describing the holder (LockWithContext retries). ctx bounds
// the attempt itself (a round trip to a server), not a wait for the
// holder. Unlock releases the lock taken with the returned id.
type Locker interface {
	Lock(ctx context.Context, info LockInfo) (id string, err error)
	Unlock(id string) error
}

// ForceUnlocker removes a lock left behind by a holder that is gone.
type ForceUnlocker interface {
	ForceUnlock(id string) (LockInfo, error)
}

// Manager is a complete state backend.
type Manager interface {
	Reader
	Journal
	Persister
	Locker
}

// Errors returned by Persist.
var (
	ErrLineage     = errors.New("state lineage mismatch")
	ErrStaleSerial = errors.New("state changed since it was read")
)

// LockInfo says who holds a lock, for the message of a refused run.
type LockInfo struct {
	ID        string    `json:"id"`
	Who       string    `json:"who"`       // user@host
	Operation string    `json:"operation"` // plan, apply, state rm, ...
	Created   time.Time `json:"created"`
	Pid       int       `json:"pid"`
}

// NewLockInfo returns the lock info of this process for an operation.
func NewLockInfo(operation string) LockInfo {
	return LockInfo{
		Who:       whoAmI(),
		Operation: operation,
		Created:   time.Now().UTC().Truncate(time.Second),
		Pid:       os.Getpid(),
	}
}

// ForNewLock returns info with a new lock id and the fields the caller left
// empty (Who, Created, Pid) filled in with this process's.
func (i LockInfo) ForNewLock() LockInfo {
	def := NewLockInfo(i.Operation)
	if i.Who == "" {
		i.Who = def.Who
	}
	if i.Created.IsZero() {
		i.Created = def.Created
	}
	if i.Pid == 0 {
		i.Pid = def.Pid
	}
	i.ID = NewLockID()
	return i
}

func whoAmI() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return name + "@" + host
}

// NewLockID returns a random lock id.
func NewLockID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("state: reading random bytes: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// LockError is returned when a state is locked by someone else. Info is the
// holder's lock info, as far as it could be read.
type LockError struct {
	Info LockInfo
	// Waited is how long LockWithContext retried before giving up.
	Waited time.Duration
	// Hint, when set, says what the backend knows besides: that the
	// holder's process is gone while its server session lingers, say.
	Hint string
}

// LockWithContext takes l's lock, retrying while it is held by someone
// else until ctx's deadline, as Terraform's statemgr.LockWithContext: once
// when ctx has none, else after 50 ms, then waits doubling up to a second.
// A lock that stays held returns the last *LockError, with Waited set.
func LockWithContext(ctx context.Context, l Locker, info LockInfo) (string, error) {
	start := time.Now()
	wait := 50 * time.Millisecond
	for {
		id, err := l.Lock(ctx, info)
		var le *LockError
		if err == nil || !errors.As(err, &le) {
			return id, err
		}
		deadline, ok := ctx.Deadline()
		if !ok || time.Until(deadline) <= 0 || ctx.Err() != nil {
			le.Waited = time.Since(start)
			return "", err
		}
		t := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

func (e *LockError) Error() string {
	i := e.Info
	if i.ID == "" && i.Who == "" && i.Pid == 0 {
		return "state is locked by another process (its lock info is not readable)"
	}
	msg := fmt.Sprintf("state is locked by %s (%s, pid %d, since %s, lock id %s)",
		i.Who, i.Operation, i.Pid, i.Created.UTC().Format(time.RFC3339), i.ID)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}
