//go:build unix

package cpubench

import "syscall"

// CPUTime is the CPU time this process has used, in nanoseconds: a
// benchmark's CPU per operation holds on a machine busy with other work,
// where its wall time does not.
func CPUTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
