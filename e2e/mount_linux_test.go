package e2e

import (
	"fmt"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips it with a
// line saying why (mounting needs root).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("skipped: a full disk is a tmpfs of %d bytes, and mounting one failed (%v); run the e2e tests as root to include it", size, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}
