//go:build !unix

package local

import (
	"errors"
	"os"
)

// The file backend locks with flock, which only unix systems have here.
func tryLockFile(*os.File) (bool, error) {
	return false, errors.New("state locking is only supported on unix systems")
}

func unlockFile(*os.File) error { return nil }
