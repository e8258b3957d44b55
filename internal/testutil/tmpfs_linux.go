package testutil

import (
	"fmt"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes for the test (a disk that fills
// up), or skips the test saying why: mounting needs root.
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("skipped: a full disk is a tmpfs of %d bytes, and mounting one failed (%v); run the tests as root to include it", size, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}
