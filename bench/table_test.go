package main

import (
	"strconv"
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {100000, "100,000"}, {1234567, "1,234,567"}, {-1234, "-1,234"},
	} {
		if got := group(tt.n); got != tt.want {
			t.Errorf("group(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestSpread(t *testing.T) {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, tt := range []struct {
		xs   []float64
		want string
	}{
		{nil, "n/a"},
		{[]float64{2}, "2"},
		{[]float64{3, 1, 2}, "2 (1..3, 3 runs)"},
		{[]float64{4, 1, 2, 3}, "2.5 (1..4, 4 runs)"},
	} {
		if got := spread(tt.xs, f); got != tt.want {
			t.Errorf("spread(%v) = %q; want %q", tt.xs, got, tt.want)
		}
	}
}

func TestRows(t *testing.T) {
	for _, tt := range []struct {
		row  Row
		met  bool
		want string
	}{
		{atLeast("t", "g", "m", 95, 90), true, "1.06x"},
		{atLeast("t", "g", "m", 80, 90), false, "0.89x"},
		{atMost("t", "g", "m", 1.2, 1.5), true, "0.80x"},
		{atMost("t", "g", "m", 12, 11), false, "1.09x"},
	} {
		if *tt.row.Met != tt.met || tt.row.Ratio != tt.want {
			t.Errorf("row %+v: met %v ratio %q; want %v %q", tt.row, *tt.row.Met, tt.row.Ratio, tt.met, tt.want)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, []Row{atMost("a|b", "<= 1", "2", 2, 1), info("c", "3", "")}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], `a\|b`) || !strings.HasSuffix(strings.TrimSpace(lines[2]), "| NO  |") || !strings.Contains(lines[3], "| -") {
		t.Fatalf("table:\n%s", b.String())
	}
}
