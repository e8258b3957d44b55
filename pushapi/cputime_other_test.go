//go:build !unix

package pushapi

func cpuTime() int64 { return 0 }
