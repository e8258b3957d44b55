package local

import (
	"bytes"
	"errors"
	"path/filepath"
	"syscall"
	"unsafe"
)

// dirWatch tells whether the snapshot or the journal of a state may have
// been replaced, written or removed by another process since it was last
// asked: inotify watches on their directory (names created, removed,
// renamed) and on the snapshot (written), read without blocking. While
// the lock is held it spares each append two stats of paths. The
// journal's own writes make no event: only its name is watched.
type dirWatch struct {
	fd                int
	file              int32  // the snapshot's watch; -1 without a snapshot
	snapshot, journal string // base names
	buf               [4096]byte
}

const (
	dirWatchMask  = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	fileWatchMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE
)

// localFS reports whether the file system of statfs magic is one whose changes
// all pass through this kernel, so inotify sees them: not NFS, SMB or FUSE, where
// another machine's are not seen. ext2-4, XFS, Btrfs, tmpfs, overlayfs,
// F2FS, ZFS.
func localFS(magic int64) bool {
	switch magic {
	case 0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794c7630, 0xF2F52010, 0x2FC12FC1:
		return true
	}
	return false
}

// newDirWatch watches snapshot and journal; nil when the system or file
// system cannot (then every append checks the paths).
func newDirWatch(snapshot, journal string) *dirWatch {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(snapshot), &fs); err != nil || !localFS(int64(fs.Type)) {
		return nil
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &dirWatch{fd: fd, file: -1, snapshot: filepath.Base(snapshot), journal: filepath.Base(journal)}
	if _, err := syscall.InotifyAddWatch(fd, filepath.Dir(snapshot), dirWatchMask); err != nil {
		w.close()
		return nil
	}
	if wd, err := syscall.InotifyAddWatch(fd, snapshot, fileWatchMask); err == nil {
		w.file = int32(wd)
	} else if !errors.Is(err, syscall.ENOENT) {
		w.close()
		return nil
	}
	return w
}

// changed reports whether anything happened to the snapshot, or to the
// journal's name, since the watch was set up or last asked; when it
// cannot tell, it says so.
func (w *dirWatch) changed() bool {
	changed := false
	for {
		n, err := syscall.Read(w.fd, w.buf[:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return changed
		}
		if err != nil || n <= 0 {
			return true
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := w.buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			switch {
			case ev.Wd == w.file: // the snapshot written, or its watch gone
				changed = true
			case ev.Mask&(syscall.IN_Q_OVERFLOW|syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0:
				changed = true // events lost, or the directory itself gone
			case string(name) == w.snapshot || string(name) == w.journal:
				changed = true
			}
		}
	}
}

// close releases the watch without waiting: closing an inotify instance
// waits for the kernel to retire its marks (an RCU grace period, 0.1 to
// 15 ms at the end of an apply at 0 ms, while the final snapshot could
// be encoded), and nothing uses the descriptor after.
func (w *dirWatch) close() { go syscall.Close(w.fd) }
