//go:build !linux

package e2e

import "testing"

// smallDisk skips the test: a full disk is a tmpfs, which only Linux
// mounts.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	t.Skipf("skipped: a full disk is a tmpfs of %d bytes, which only Linux mounts", size)
	return ""
}
