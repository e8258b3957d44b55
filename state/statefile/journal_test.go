package statefile

import (
	"bytes"
	"math/rand/v2"
	"slices"
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

// TestEscapeFrom compares the in-place escaping with a plain one, for
// payloads dense and sparse in bytes to escape, in both formats.
func TestEscapeFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, nul := range []bool{false, true} {
		for range 20_000 {
			b := make([]byte, rng.IntN(200))
			for i := range b {
				b[i] = "ab\n\\\x00x"[rng.IntN(6)]
				if rng.IntN(4) > 0 {
					b[i] = 'a'
				}
			}
			var want []byte
			for _, c := range b {
				switch {
				case c == '\n':
					want = append(want, '\\', 'n')
				case c == '\\':
					want = append(want, '\\', '\\')
				case c == 0 && nul:
					want = append(want, '\\', '0')
				default:
					want = append(want, c)
				}
			}
			prefix := []byte("00000000 ")
			got := append(slices.Clip(prefix), b...)
			if i := escapeAt(got[len(prefix):], nul); i >= 0 {
				got = escapeFrom(got, len(prefix)+i, nul)
			}
			if !bytes.Equal(got[len(prefix):], want) || !bytes.Equal(got[:len(prefix)], prefix) {
				t.Fatalf("nul %v: escaping %q gave %q, want %q", nul, b, got[len(prefix):], want)
			}
		}
	}
}
