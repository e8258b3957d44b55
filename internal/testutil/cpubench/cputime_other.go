//go:build !unix

package cpubench

// CPUTime is 0 where getrusage is not available.
func CPUTime() int64 { return 0 }
