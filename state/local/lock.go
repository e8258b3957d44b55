package local

// Locking: an operating-system lock on PATH.lock, and the record of who
// holds it in PATH.lock.info.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"pushform/atomicfile"
	"pushform/state"
)

// Lock implements Locker with an operating-system lock on PATH.lock, which
// the kernel releases when the holding process exits, however it exits.
// Missing fields of info (Who, Created, Pid) are filled in. It tries once.
func (f *File) Lock(_ context.Context, info state.LockInfo) (string, error) {
	info = info.ForNewLock()
	lf, err := f.tryLock()
	if err != nil {
		return "", err
	}
	if lf == nil {
		return "", &state.LockError{Info: f.readLockInfo()}
	}
	// Holding the OS lock, any info left is from a holder that ended
	// without Unlock (which removes the info first).
	var stale *state.LockInfo
	if prev := f.readLockInfo(); prev.ID != "" || prev.Pid != 0 {
		stale = &prev
	}
	f.removeDeadTemps()
	if err := atomicfile.Write(f.LockInfoPath(), 0o600, func(w io.Writer) error { return json.NewEncoder(w).Encode(info) }); err != nil {
		unlockFile(lf)
		lf.Close()
		return "", fmt.Errorf("writing lock info: %w", err)
	}
	f.mu.Lock()
	f.lockFile, f.lockID, f.stale = lf, info.ID, stale
	f.mu.Unlock()
	return info.ID, nil
}

// removeDeadTemps removes the temp files of snapshots and lock infos that
// holders killed while writing them left behind (a snapshot's is as large
// as the state). Only a lock holder writes them, so with the lock held any
// that exist are dead. Best effort: a leftover is harmless, only wasteful.
func (f *File) removeDeadTemps() {
	dir, base := filepath.Dir(f.path), filepath.Base(f.path)
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range names {
		n := e.Name()
		if strings.HasPrefix(n, "."+base+".tmp-") || strings.HasPrefix(n, "."+base+".lock.info.tmp-") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// StaleLock returns the lock info that the last successful Lock found left
// behind by a holder that ended without unlocking (killed, crashed, or its
// machine stopped). The OS lock died with that holder, so it did not block
// Lock; the record is returned so the caller can say who it was. Lock
// replaces the record with its own; ForceUnlock removes it.
func (f *File) StaleLock() (state.LockInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stale == nil {
		return state.LockInfo{}, false
	}
	return *f.stale, true
}

// tryLock takes the OS lock on a new descriptor; nil, nil means it is held
// by someone else (another process, or another Lock of this one).
func (f *File) tryLock() (*os.File, error) {
	lf, err := os.OpenFile(f.LockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	ok, err := tryLockFile(lf)
	if err != nil || !ok {
		lf.Close()
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", f.LockPath(), err)
		}
		return nil, nil
	}
	return lf, nil
}

// Unlock implements Locker.
func (f *File) Unlock(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lockFile == nil {
		return errors.New("unlocking state: not locked")
	}
	if id != f.lockID {
		return fmt.Errorf("unlocking state: lock id %q does not match the held lock %q", id, f.lockID)
	}
	// What this holder journaled is durable before another may read it.
	jErr := f.closeJournal()
	// The info goes first, while the lock still keeps others from writing theirs.
	rmErr := os.Remove(f.LockInfoPath())
	unErr := unlockFile(f.lockFile)
	clErr := f.lockFile.Close()
	f.lockFile, f.lockID = nil, ""
	if rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		return fmt.Errorf("unlocking state: %w", rmErr)
	}
	if err := errors.Join(jErr, unErr, clErr); err != nil {
		return fmt.Errorf("unlocking state: %w", err)
	}
	return nil
}

// ForceUnlock removes the lock info left by a holder that is gone, when id
// matches it. The OS lock itself never outlives its process, so this only
// clears the record; a lock held by a running process is refused with a
// *LockError in the chain.
func (f *File) ForceUnlock(id string) (state.LockInfo, error) {
	data, err := os.ReadFile(f.LockInfoPath())
	if errors.Is(err, fs.ErrNotExist) {
		if lf, lerr := f.tryLock(); lerr == nil && lf == nil {
			return state.LockInfo{}, fmt.Errorf("force-unlock: %w; it is released when that process exits", &state.LockError{})
		} else if lf != nil {
			unlockFile(lf)
			lf.Close()
		}
		return state.LockInfo{}, fmt.Errorf("force-unlock: the state is not locked (no %s)", f.LockInfoPath())
	}
	if err != nil {
		return state.LockInfo{}, fmt.Errorf("force-unlock: %w", err)
	}
	var info state.LockInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return state.LockInfo{}, fmt.Errorf("force-unlock: lock info %s is unreadable: %w", f.LockInfoPath(), err)
	}
	if info.ID != id {
		return info, fmt.Errorf("force-unlock: lock id %q does not match the current lock (id %q, held by %s for %s)", id, info.ID, info.Who, info.Operation)
	}
	lf, err := f.tryLock()
	if err != nil {
		return info, fmt.Errorf("force-unlock: %w", err)
	}
	if lf == nil {
		return info, fmt.Errorf("force-unlock: %w; it is held by a running process and is released when that process exits (stop it rather than unlocking)", &state.LockError{Info: info})
	}
	defer lf.Close()
	defer unlockFile(lf)
	if err := os.Remove(f.LockInfoPath()); err != nil {
		return info, fmt.Errorf("force-unlock: %w", err)
	}
	return info, nil
}

func (f *File) readLockInfo() state.LockInfo {
	var info state.LockInfo
	if data, err := os.ReadFile(f.LockInfoPath()); err == nil {
		json.Unmarshal(data, &info) // best effort: a half-written file reads as unknown
	}
	return info
}
