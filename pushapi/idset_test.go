package pushapi

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestIDSetAgreesWithAMap(t *testing.T) {
	t.Run("tag bits place entries", func(t *testing.T) { testIDSet(t, newIDSet()) })
	t.Run("hashing again past the tag bits", func(t *testing.T) {
		s := newIDSet()
		s.tagBits = 12 // as a table past 2^32 slots would
		testIDSet(t, s)
	})
	t.Run("a sorted run, then out of order", func(t *testing.T) {
		for _, sorted := range []int{1, 2, 767, 768, 5000} { // 768 fills a 1024-slot table to its load limit
			s := newIDSet()
			want := map[string]bool{}
			add := func(id string) {
				t.Helper()
				if got, err := s.add([]byte(id)); got == want[id] || err != nil {
					t.Fatalf("after %d sorted: add(%.20q) = %v, %v; already there: %v", sorted, id, got, err, want[id])
				}
				want[id] = true
			}
			long := strings.Repeat("x", MaxUserIDBytes)
			for i := range sorted {
				if i%50 == 49 { // long ids, so the sorted run spans arena blocks
					add(fmt.Sprintf("v%06d%s", i, long[:MaxUserIDBytes-7]))
				} else {
					add(fmt.Sprintf("v%06d", i))
				}
			}
			if s.table != nil {
				t.Fatalf("a sorted run of %d built the table", sorted)
			}
			add(fmt.Sprintf("v%06d", sorted-1)) // the last again: out of order, and a repeat
			for i := range 3000 {
				add(fmt.Sprintf("v%06d", (i*7919)%(sorted+3000)))
				add(fmt.Sprintf("w%06d", i))
			}
			if s.n != len(want) {
				t.Errorf("%d stored, want %d", s.n, len(want))
			}
		}
	})
}

func TestIDSetFull(t *testing.T) {
	s := newIDSet()
	s.maxBlocks = 2
	big := strings.Repeat("x", MaxUserIDBytes)
	for i := 0; ; i++ {
		if _, err := s.add([]byte(big + fmt.Sprint(i))); err != nil {
			if err != errTooManyIDs || i < 2*blockSize/MaxUserIDBytes-2 {
				t.Fatalf("after %d ids: %v", i, err)
			}
			return
		}
	}
}

func testIDSet(t *testing.T, s *idSet) {
	want := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	long := strings.Repeat("x", MaxUserIDBytes)
	for i := range 60_000 {
		var id string
		switch {
		case i%7 == 0: // a repeat
			id = fmt.Sprintf("u%d", rng.IntN(i+1))
		case i%100 == 1: // long, filling blocks unevenly
			id = long[:rng.IntN(len(long))+1] + fmt.Sprint(i)
		default:
			id = fmt.Sprintf("u%d", i)
		}
		if got, err := s.add([]byte(id)); got == want[id] || err != nil {
			t.Fatalf("add(%.20q) = %v, already there: %v", id, got, want[id])
		}
		want[id] = true
	}
	if s.n != len(want) {
		t.Errorf("%d stored, want %d", s.n, len(want))
	}
}

// FuzzIDSet holds the set to a map. Each byte r of runs adds a run of
// 1 to 64 ascending ids from 7r, so runs are sorted, overlap and repeat;
// with fewBits the table hashes again as it grows past its tag bits (the
// seed of every byte grows it).
func FuzzIDSet(f *testing.F) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	f.Add([]byte{0x3f, 0x10, 0x05}, false)
	f.Add([]byte{0x3f, 0x7f, 0xbf, 0xff, 0x3f, 0x20, 0x21, 0x40, 0x00, 0xff, 0xfe, 0xfd}, true)
	f.Add(every, false)
	f.Add(every, true)
	f.Fuzz(func(t *testing.T, runs []byte, fewBits bool) {
		s, want := newIDSet(), map[string]bool{}
		if fewBits {
			s.tagBits = 10 // the first table's size: every growth hashes again
		}
		for _, r := range runs {
			start := 7 * int(r)
			for i := range 1 + int(r&0x3f) {
				id := fmt.Sprintf("v%05d", start+i)
				if added, err := s.add([]byte(id)); added == want[id] || err != nil {
					t.Fatalf("add(%q) = %v, %v; already there: %v", id, added, err, want[id])
				}
				want[id] = true
			}
		}
		if s.n != len(want) {
			t.Fatalf("%d stored, want %d", s.n, len(want))
		}
	})
}

func BenchmarkIDSet(b *testing.B) {
	ids := make([][]byte, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Appendf(nil, "u%07d", i)
	}
	b.Run("idSet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := newIDSet()
			for _, id := range ids {
				if _, err := s.add(id); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/id")
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := map[string]struct{}{}
			for _, id := range ids {
				if _, ok := m[string(id)]; !ok {
					m[string(id)] = struct{}{}
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/id")
	})
}
