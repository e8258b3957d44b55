package termtext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct{ in, clean, lines, quote string }{
		{"alice", "alice", "alice", `"alice"`},
		{"", "", "", `""`},
		{"Grüße 👨\u200d👩\u200d👧 🇩🇪", "Grüße 👨\u200d👩\u200d👧 🇩🇪", "Grüße 👨\u200d👩\u200d👧 🇩🇪", "\"Grüße 👨\u200d👩\u200d👧 🇩🇪\""},
		{"a\x1b]0;owned\a\x1b[2J", `a\x1b]0;owned\a\x1b[2J`, `a\x1b]0;owned\a\x1b[2J`, `"a\x1b]0;owned\a\x1b[2J"`},
		{"b\u202ex", `b\u202ex`, `b\u202ex`, `"b\u202ex"`},
		{"u\x00x", `u\x00x`, `u\x00x`, `"u\x00x"`},
		{"one\ntwo\r\n", `one\ntwo\r\n`, "one\ntwo\\r\n", `"one\ntwo\r\n"`},
		{"tab\there", `tab\there`, `tab\there`, `"tab\there"`},
		{"del\x7f c1\u0085\u009b", `del\x7f c1\u0085\u009b`, `del\x7f c1\u0085\u009b`, `"del\x7f c1\u0085\u009b"`},
		{"bidi \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `bidi \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`,
			`bidi \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `"bidi \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069"`},
		{"sep\u2028\u2029", `sep\u2028\u2029`, `sep\u2028\u2029`, `"sep\u2028\u2029"`},
		{"bad \xff\xfe utf8 \xc2", `bad \xff\xfe utf8 \xc2`, `bad \xff\xfe utf8 \xc2`, `"bad \xff\xfe utf8 \xc2"`},
		{`say "hi" \ C:\path`, `say "hi" \ C:\path`, `say "hi" \ C:\path`, `"say \"hi\" \\ C:\\path"`},
		{"invisible k\u200bey\u00ad\ufeff\u2060\u3164\u034f", `invisible k\u200bey\u00ad\ufeff\u2060\u3164\u034f`, `invisible k\u200bey\u00ad\ufeff\u2060\u3164\u034f`, `"invisible k\u200bey\u00ad\ufeff\u2060\u3164\u034f"`},
		{"tags \U000e0041\U000e007f", `tags \U000e0041\U000e007f`, `tags \U000e0041\U000e007f`, `"tags \U000e0041\U000e007f"`},
		{"\ufffd stays", "\ufffd stays", "\ufffd stays", "\"\ufffd stays\""},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.clean {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.clean)
		}
		if got := Lines(tt.in); got != tt.lines {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.lines)
		}
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.quote)
		}
	}
}

// checkSafe fails when out holds a byte below 0x20 other than the allowed
// newline, DEL, a C1 control, a bidi control or invalid UTF-8.
func checkSafe(t *testing.T, name, in, out string, newline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not UTF-8", name, in, out)
	}
	for _, r := range out {
		if r == '\n' && newline {
			continue
		}
		if Unsafe(r) {
			t.Fatalf("%s(%q) = %q holds %U", name, in, out, r)
		}
	}
}

// isClean reports whether s needs no escape for Clean (newline allowed
// when lines is set).
func isClean(s string, lines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if Unsafe(r) && !(lines && r == '\n') {
			return false
		}
	}
	return true
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"alice", "a\x1b]0;owned\a\x1b[2J", "b\u202ex", "u\x00x", "line\nline", "\xff\xc2", `q"\`, "👨\u200d👩", "\u0085\u2069\u061c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, l, q := Clean(s), Lines(s), Quote(s)
		checkSafe(t, "Clean", s, c, false)
		checkSafe(t, "Lines", s, l, true)
		checkSafe(t, "Quote", s, q, false)
		if isClean(s, false) && c != s {
			t.Fatalf("Clean(%q) = %q: clean text changed", s, c)
		}
		if isClean(s, true) && l != s {
			t.Fatalf("Lines(%q) = %q: clean text changed", s, l)
		}
		if strings.Count(l, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Lines(%q) = %q: newlines not kept", s, l)
		}
		if back, err := strconv.Unquote(q); err != nil || back != s {
			t.Fatalf("Quote(%q) = %s does not unquote to the input: %q, %v", s, q, back, err)
		}
	})
}

func BenchmarkClean(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"clean", "notification.order_shipped[\"A-1001\"] -> user-000123: Grüße"},
		{"hostile", "a\x1b]0;owned\a\x1b[2J b\u202ex u\x00x"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Clean(bc.s)
			}
		})
	}
}
