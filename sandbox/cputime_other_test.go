//go:build !unix

package sandbox

func cpuTime() int64 { return 0 }
