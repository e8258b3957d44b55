package statefile

import "testing"

func TestCommonPrefix(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 0},
		{"u0000001", "u0000002", 7},
		{"u0000001", "u0000001", 8},
		{"u00000010", "u0000001", 8},
		{"user-with-a-long-id-0001", "user-with-a-long-id-0002", 23},
		{"user-with-a-long-id-0001", "user-with-b", 10},
		{"abcdefgh", "abcdefgx", 7},
		{"abcdefghi", "xbcdefghi", 0},
		{"abcdefghijklmnopq", "abcdefghijklmnopq", 17},
	} {
		if got := commonPrefix(tt.a, tt.b); got != tt.want {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := commonPrefix(tt.b, tt.a); got != tt.want {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}
