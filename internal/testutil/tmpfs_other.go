//go:build !linux

package testutil

import "testing"

// SmallDisk skips the test: a full disk is a tmpfs, which only Linux
// mounts here.
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	t.Skipf("skipped: a full disk is a tmpfs of %d bytes, which only Linux mounts", size)
	return ""
}
