package pushapi

import "testing"

// FuzzPlainEnd holds plainEnd, eight bytes at a time, to plainEndFrom, a
// byte at a time, from every offset of b.
func FuzzPlainEnd(f *testing.F) {
	f.Add([]byte(`"u0000001",`))
	f.Add([]byte(`"abcdefghijklmnopq"`))
	f.Add([]byte("\"abcdefg\x1fhijklmnop\""))
	f.Add([]byte(`"abcdefgh\"ijklmnop"`))
	f.Add([]byte("\"abcdefgh\x7fi\x80jk\"l"))
	f.Add([]byte("\"ab\x80cdefghijklmnop\"qrstuvwxyz"))
	f.Add([]byte("\"abcdefghij\xffklmnopqrstu\\vwxyz\""))
	f.Add([]byte("\"abcdefghi\"\x00\x01\x02\x03\x04\x05\x06"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for p := range len(b) + 1 {
			want, wantOK := p, false
			if p < len(b) && b[p] == '"' {
				want, wantOK = plainEndFrom(b, p+1)
			}
			if got, ok := plainEnd(b, p); got != want || ok != wantOK {
				t.Fatalf("plainEnd(%q, %d) = %d, %v; a byte at a time %d, %v", b, p, got, ok, want, wantOK)
			}
		}
	})
}
