package local_test

import (
	"fmt"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes for the test, or skips it when
// that is not allowed (it needs root).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one failed (%v): run as root to include this test", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}
