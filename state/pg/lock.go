package pg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state"
)

// Lock implements state.Locker with a session-level advisory lock on the
// Manager's connection: the server releases it when that connection ends,
// however it ends (kill -9, a crash, a lost network). The holder's info is
// kept in the locks table, so a refused run can name it. Missing fields of
// info (Who, Created, Pid) are filled in.
//
// Lock tries once; a state locked by someone else returns a
// *state.LockError.
func (m *Manager) Lock(_ context.Context, info state.LockInfo) (string, error) {
	if m.roErr != nil {
		return "", m.roErr
	}
	info = info.ForNewLock()
	holder, backendPid, err := m.tryLock(info)
	if err != nil {
		return "", err
	}
	if holder != nil {
		le := &state.LockError{Info: *holder}
		if backendPid != 0 && processGone(*holder) {
			le.Hint = fmt.Sprintf("that process has ended, but its server session (backend pid %d) still holds the lock while its last statement runs "+
				"(it ends within the backend's connection_check_interval on PostgreSQL 14 and later). To end it now, run SELECT pg_terminate_backend(%d); "+
				"or pushform force-unlock --force %s", backendPid, backendPid, holder.ID)
		}
		return "", le
	}
	return info.ID, nil
}

// tryLock takes the lock once. It returns nil when it has it, and the
// holder's info (as far as it is readable) with its server process when
// someone else does.
func (m *Manager) tryLock(info state.LockInfo) (*state.LockInfo, int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return nil, 0, err
	}
	if m.lockID != "" {
		// Advisory locks nest within a session: this Manager's own lock
		// would be granted again. Another Lock of it is refused as
		// another process's would be.
		holder := m.lock
		return &holder, 0, nil
	}
	ctx, cancel := m.call()
	defer cancel()
	for try := 1; ; try++ {
		got, err := m.tryAdvisory(ctx)
		if err != nil {
			return nil, 0, err
		}
		if got {
			break
		}
		// A holder writes its row right after it takes the lock: until
		// then the row is missing, or is a dead holder's. Name the holder
		// only from its own row.
		holder, backendPid, current, err := m.readHolder(ctx)
		if err != nil {
			return nil, 0, err
		}
		if current || try == holderTries {
			return &holder, backendPid, nil
		}
		time.Sleep(holderRetry)
	}
	// Holding the advisory lock, a row left is from a holder whose
	// connection ended without Unlock.
	prev, found, err := m.readLock(ctx)
	if err == nil {
		_, err = m.conn.Exec(ctx, m.q.writeLock, m.name, info.ID, info.Who, info.Operation, info.Created, int32(info.Pid))
		if err != nil {
			err = m.opErr("writing the lock info", err)
		}
	}
	if err != nil {
		m.releaseAdvisory(ctx)
		return nil, 0, err
	}
	m.lockID, m.lock, m.stale = info.ID, info, nil
	if found {
		m.stale = &prev
	}
	return nil, 0, nil
}

func (m *Manager) tryAdvisory(ctx context.Context) (bool, error) {
	var got bool
	if err := m.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, m.key).Scan(&got); err != nil {
		return false, m.opErr("taking the lock", err)
	}
	return got, nil
}

func (m *Manager) releaseAdvisory(ctx context.Context) (bool, error) {
	var released bool
	if err := m.conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, m.key).Scan(&released); err != nil {
		return false, m.opErr("releasing the lock", err)
	}
	return released, nil
}

// While the lock is refused and its row is not yet the holder's own,
// tryLock reads it again this often, this many times (a holder writes it
// within a round trip or two).
const (
	holderTries = 50
	holderRetry = 20 * time.Millisecond
)

// readHolder reads the lock info row and reports whether it is the row of
// the session holding the advisory lock now. When it is not (the holder
// has not written its row yet, or the lock was just released), the info is
// not returned: it would name someone else.
func (m *Manager) readHolder(ctx context.Context) (info state.LockInfo, backendPid int32, current bool, err error) {
	info, backendPid, found, err := m.readLockRow(ctx)
	if err != nil || !found {
		return state.LockInfo{}, 0, false, err
	}
	k := uint64(m.key)
	var holds bool
	err = m.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
WHERE locktype = 'advisory' AND granted AND pid = $1
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid::int8 = $2 AND objid::int8 = $3 AND objsubid = 1)`, backendPid, int64(k>>32), int64(k&0xffffffff)).Scan(&holds)
	if err != nil {
		return state.LockInfo{}, 0, false, m.opErr("reading the lock holder", err)
	}
	if !holds {
		return state.LockInfo{}, 0, false, nil
	}
	return info, backendPid, true, nil
}

// readLock reads the lock info row; found is false when there is none.
func (m *Manager) readLock(ctx context.Context) (info state.LockInfo, found bool, err error) {
	info, _, found, err = m.readLockRow(ctx)
	return info, found, err
}

// readLockRow is readLock with the server process of the connection that
// wrote the row.
func (m *Manager) readLockRow(ctx context.Context) (info state.LockInfo, backendPid int32, found bool, err error) {
	var pid int32
	err = m.conn.QueryRow(ctx, m.q.readLock, m.name).Scan(&info.ID, &info.Who, &info.Operation, &info.Created, &pid, &backendPid)
	if errors.Is(err, pgx.ErrNoRows) {
		return state.LockInfo{}, 0, false, nil
	}
	if err != nil {
		return state.LockInfo{}, 0, false, m.opErr("reading the lock info", err)
	}
	// Another process wrote these: they reach a terminal in messages.
	info.ID, info.Who, info.Operation = m.red.clean(info.ID), m.red.clean(info.Who), m.red.clean(info.Operation)
	info.Created = info.Created.UTC()
	info.Pid = int(pid)
	return info, backendPid, true, nil
}

// StaleLock returns the lock info that the last successful Lock found left
// by a holder whose connection ended without unlocking (killed, crashed,
// its machine gone). The server released that holder's lock with its
// connection, so it did not block Lock; the record is returned so the
// caller can say who it was. Lock replaces the record with its own;
// ForceUnlock removes it.
func (m *Manager) StaleLock() (state.LockInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stale == nil {
		return state.LockInfo{}, false
	}
	return *m.stale, true
}

// Unlock implements state.Locker.
func (m *Manager) Unlock(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unlockLocked(id)
}

func (m *Manager) unlockLocked(id string) error {
	if m.lockID == "" {
		return fmt.Errorf("%s: unlocking: not locked", m)
	}
	if id != m.lockID {
		return fmt.Errorf("%s: unlocking: lock id %q does not match the held lock %q", m, id, m.lockID)
	}
	m.lockID, m.lock = "", state.LockInfo{}
	if err := m.usable(); err != nil {
		return err // the lock went with the connection
	}
	ctx, cancel := m.call()
	defer cancel()
	// The info goes first, while the lock still keeps others from writing
	// theirs.
	_, err := m.conn.Exec(ctx, m.q.deleteLock, m.name, id)
	if err != nil {
		err = m.opErr("removing the lock info", err)
	}
	released, uerr := m.releaseAdvisory(ctx)
	if uerr == nil && !released {
		uerr = fmt.Errorf("%s: unlocking: the server no longer held this run's lock", m)
	}
	return errors.Join(err, uerr)
}

// ForceUnlock removes the lock info left by a holder whose connection is
// gone, when id matches it. The advisory lock itself never outlives its
// connection, so this only clears the record; a lock whose holder is still
// connected is refused with a *state.LockError in the chain.
func (m *Manager) ForceUnlock(id string) (state.LockInfo, error) {
	if m.roErr != nil {
		return state.LockInfo{}, m.roErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return state.LockInfo{}, err
	}
	ctx, cancel := m.call()
	defer cancel()
	info, backendPid, found, err := m.readLockRow(ctx)
	if err != nil {
		return state.LockInfo{}, err
	}
	if m.lockID != "" {
		return m.lock, fmt.Errorf("force-unlock: %w; it is held by this process", &state.LockError{Info: m.lock})
	}
	if !found {
		got, err := m.tryAdvisory(ctx)
		if err != nil {
			return state.LockInfo{}, err
		}
		if !got {
			return state.LockInfo{}, fmt.Errorf("force-unlock: %w; it is released when that process's connection to the server ends", &state.LockError{})
		}
		if _, err := m.releaseAdvisory(ctx); err != nil {
			return state.LockInfo{}, err
		}
		return state.LockInfo{}, fmt.Errorf("force-unlock: %s is not locked", m)
	}
	if info.ID != id {
		return info, fmt.Errorf("force-unlock: lock id %q does not match the current lock (id %q, held by %s for %s)", id, info.ID, info.Who, info.Operation)
	}
	got, err := m.tryAdvisory(ctx)
	if err != nil {
		return info, err
	}
	if !got && processGone(info) {
		// The process is gone and its session lingers (a slow last
		// statement): end the session, which releases the lock.
		if got, err = m.terminate(ctx, backendPid); err != nil {
			return info, err
		}
	}
	if !got {
		hint := ""
		if backendPid != 0 {
			hint = fmt.Sprintf(" Its server session is backend pid %d: if that process is gone, end the session with SELECT pg_terminate_backend(%d);", backendPid, backendPid)
		}
		return info, fmt.Errorf("force-unlock: %w; it is held by a running process, still connected to the server, and is released when that connection ends (stop the process rather than unlocking).%s", &state.LockError{Info: info}, hint)
	}
	_, err = m.conn.Exec(ctx, m.q.deleteLock, m.name, id)
	if err != nil {
		err = m.opErr("removing the lock info", err)
	}
	_, uerr := m.releaseAdvisory(ctx)
	if err := errors.Join(err, uerr); err != nil {
		return info, err
	}
	return info, nil
}

// terminate ends the server session pid, which holds the lock for a
// process that is gone, and takes the lock once the server released it.
// m.mu is held.
func (m *Manager) terminate(ctx context.Context, pid int32) (bool, error) {
	if _, err := m.conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		return false, m.opErr(fmt.Sprintf("ending the lingering session (backend pid %d; SELECT pg_terminate_backend(%d) needs the same role or pg_signal_backend)", pid, pid), err)
	}
	for range 50 {
		got, err := m.tryAdvisory(ctx)
		if err != nil || got {
			return got, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false, nil
}

// processGone reports whether the process that wrote info is known to
// have ended: it ran on this machine and no longer exists. A holder on
// another machine is never taken for gone.
func processGone(info state.LockInfo) bool {
	_, host, ok := strings.Cut(info.Who, "@")
	_, here, _ := strings.Cut(state.NewLockInfo("").Who, "@")
	return ok && host == here && info.Pid > 0 && info.Pid != os.Getpid() && !processExists(info.Pid)
}
