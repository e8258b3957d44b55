//go:build unix

package pg

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with this pid exists (signal 0
// checks without sending anything; EPERM means it exists under another
// user).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
