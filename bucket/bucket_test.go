package bucket

import (
	"fmt"
	"testing"
)

// TestStable pins points: a change to the hash would move every target of
// every rollout in flight, so it must fail here first.
func TestStable(t *testing.T) {
	for _, tc := range []struct {
		salt, id string
		want     uint32
	}{
		{"notification.spring", "u0000001", pinned[0]},
		{"notification.spring", "u0000002", pinned[1]},
		{"other", "u0000001", pinned[2]},
		{"", "", pinned[3]},
	} {
		if got := New(tc.salt).Point(tc.id); got != tc.want {
			t.Errorf("Point(%q, %q) = %d, want %d", tc.salt, tc.id, got, tc.want)
		}
	}
}

var pinned = [4]uint32{456072, 734555, 241804, 148383}

// TestSeparator: the salt and the id are not merely concatenated.
func TestSeparator(t *testing.T) {
	if New("ab").Sum("c") == New("a").Sum("bc") {
		t.Error(`"ab"+"c" hashes like "a"+"bc"`)
	}
}

// TestUniform: every tenth of the range holds about a tenth of 100,000
// sequential ids, and a 1% cut about 1%.
func TestUniform(t *testing.T) {
	h := New("campaign.x.notification.y")
	const n = 100_000
	var deciles [10]int
	in1 := 0
	for i := range n {
		p := h.Point(fmt.Sprintf("u%07d", i))
		if p >= Scale {
			t.Fatalf("point %d out of range", p)
		}
		deciles[p/(Scale/10)]++
		if p < Cut(0.01) {
			in1++
		}
	}
	for i, c := range deciles {
		if c < n/10*95/100 || c > n/10*105/100 {
			t.Errorf("decile %d holds %d of %d", i, c, n)
		}
	}
	if in1 < 900 || in1 > 1100 {
		t.Errorf("1%% cut holds %d of %d", in1, n)
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want uint32
	}{{-1, 0}, {0, 0}, {0.01, 10_000}, {0.5, 500_000}, {1, Scale}, {2, Scale}, {0.000001, 1}} {
		if got := Cut(tc.f); got != tc.want {
			t.Errorf("Cut(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

func BenchmarkPoint(b *testing.B) {
	h := New("notification.spring")
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	var sink uint32
	for i := 0; b.Loop(); i++ {
		sink += h.Point(ids[i&1023])
	}
	_ = sink
}
