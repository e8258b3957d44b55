package statefile

import (
	"bytes"
	"testing"
)

// TestEscapeAt compares the eight-bytes-at-a-time search with a plain one
// at every offset and length around a word, for both bytes and bytes
// that differ from them by one bit or sit next to them.
func TestEscapeAt(t *testing.T) {
	for _, nul := range []bool{false, true} {
		set := "\n\\"
		if nul {
			set += "\x00"
		}
		testEscapeAt(t, nul, func(b []byte) int { return bytes.IndexAny(b, set) })
	}
}

func testEscapeAt(t *testing.T, nul bool, plain func([]byte) int) {
	for _, c := range []byte{'\n', '\\', 0, '\n' ^ 0x80, '\\' ^ 0x80, 0x80, '\n' + 1, '\\' - 1, 1, 0xff} {
		for n := range 20 {
			for at := -1; at < n; at++ {
				b := bytes.Repeat([]byte{0x0b}, n)
				if at >= 0 {
					b[at] = c
				}
				if got, want := escapeAt(b, nul), plain(b); got != want {
					t.Fatalf("escapeAt(%q, %v) = %d, want %d", b, nul, got, want)
				}
				// A second match after the first must not move it.
				if at >= 0 && at+1 < n {
					b[n-1] = '\n'
					if got, want := escapeAt(b, nul), plain(b); got != want {
						t.Fatalf("escapeAt(%q, %v) = %d, want %d", b, nul, got, want)
					}
				}
			}
		}
	}
}
