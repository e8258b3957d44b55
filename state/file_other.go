//go:build !unix

package state

import (
	"errors"
	"os"
)

// The file backend locks with flock, which only unix systems have here.
func tryLockFile(*os.File) (bool, error) {
	return false, errors.New("state locking is only supported on unix systems")
}

func unlockFile(*os.File) error { return nil }

// syncDir is a no-op: directories cannot be synced on these systems.
func syncDir(string) error { return nil }
