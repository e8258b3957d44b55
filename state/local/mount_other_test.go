//go:build !linux

package local_test

import "testing"

// mountTmpfs skips the test: a full disk is a small tmpfs, which only
// Linux mounts.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	t.Skipf("a full disk needs a tmpfs of %d bytes, which only Linux mounts", size)
	return ""
}
