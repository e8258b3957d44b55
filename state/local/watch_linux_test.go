package local

import "testing"

// TestLocalFS: a directory watch is used only where every change passes
// through this kernel; on a network or FUSE file system, appends check the
// paths as before.
func TestLocalFS(t *testing.T) {
	for _, tc := range []struct {
		name  string
		magic int64
		want  bool
	}{
		{"ext4", 0xEF53, true},
		{"xfs", 0x58465342, true},
		{"tmpfs", 0x01021994, true},
		{"overlayfs", 0x794c7630, true},
		{"nfs", 0x6969, false},
		{"cifs", 0xFF534D42, false},
		{"smb2", 0xFE534D42, false},
		{"fuse", 0x65735546, false},
		{"unknown", 0x1234, false},
	} {
		if got := localFS(tc.magic); got != tc.want {
			t.Errorf("%s (%#x): localFS = %v, want %v", tc.name, tc.magic, got, tc.want)
		}
	}
}
