//go:build !linux

package local

import "os"

// dataSync makes what was appended to f durable (fdatasync on Linux).
func dataSync(f *os.File) error { return f.Sync() }
