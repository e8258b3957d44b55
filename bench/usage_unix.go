//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// usage returns an ended process's peak memory (max RSS) and the bytes it
// caused to be written to storage, from its rusage.
func usage(ps *os.ProcessState) (maxRSS, disk int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	unit := int64(1024) // kilobytes, but bytes on Darwin
	if runtime.GOOS == "darwin" {
		unit = 1
	}
	return ru.Maxrss * unit, ru.Oublock * 512
}
