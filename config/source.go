package config

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Limits on what the loader reads, so hostile input gives a diagnostic
// rather than exhausting memory or the stack.
const (
	// MaxFileSize caps one configuration or variables file.
	MaxFileSize = 32 << 20
	// MaxFunctionFileSize caps what file() and templatefile() read.
	MaxFunctionFileSize = 16 << 20
	// MaxNesting caps bracket nesting: the HCL parser recurses per level.
	MaxNesting = 2000
)

// ReadSource reads a file of at most limit bytes.
func ReadSource(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(src)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, limit>>20)
	}
	return src, nil
}

// ParseSource checks src against the size, NUL and nesting limits and parses
// it as native HCL syntax. fmt uses it too, so both refuse the same input.
func ParseSource(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	start := hcl.Pos{Line: 1, Column: 1, Byte: 0}
	whole := &hcl.Range{Filename: filename, Start: start, End: start}
	if len(src) > MaxFileSize {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Configuration file too large",
			Detail:   fmt.Sprintf("%s is %d bytes; the limit is %d MiB.", filename, len(src), MaxFileSize>>20),
			Subject:  whole,
		}}
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		pos := offsetPos(src, i)
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid character in configuration file",
			Detail:   "The file contains a NUL byte; configuration files must be UTF-8 text.",
			Subject:  &hcl.Range{Filename: filename, Start: pos, End: pos},
		}}
	}
	if i := nestingOverflow(src, MaxNesting); i >= 0 {
		pos := offsetPos(src, i)
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Configuration nested too deeply",
			Detail:   fmt.Sprintf("Brackets are nested more than %d levels deep here.", MaxNesting),
			Subject:  &hcl.Range{Filename: filename, Start: pos, End: pos},
		}}
	}
	return hclsyntax.ParseConfig(src, filename, start)
}

// nestingOverflow returns the offset where bracket depth first exceeds max,
// or -1. It ignores quoting, so it overestimates; max is far above real use.
func nestingOverflow(src []byte, max int) int {
	depth := 0
	for i, c := range src {
		switch c {
		case '(', '[', '{':
			depth++
			if depth > max {
				return i
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

func offsetPos(src []byte, off int) hcl.Pos {
	line := 1 + bytes.Count(src[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return hcl.Pos{Line: line, Column: col, Byte: off}
}
