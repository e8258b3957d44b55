//go:build !linux

package local

// dirWatch is Linux's inotify watch (watch_linux.go); elsewhere every
// append checks the paths.
type dirWatch struct{}

func newDirWatch(snapshot, journal string) *dirWatch { return nil }

func (w *dirWatch) changed() bool { return true }

func (w *dirWatch) close() {}
