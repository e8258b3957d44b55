//go:build !unix

package main

import "os"

// usage returns zeros where there is no rusage (Windows): the bench's peak
// memory and disk figures then read 0, and its goals are Linux's.
func usage(*os.ProcessState) (maxRSS, disk int64) { return 0, 0 }
