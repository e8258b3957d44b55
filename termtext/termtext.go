// Package termtext makes untrusted text (ids, titles and bodies from a
// configuration, anything a server says) safe to show to people: control
// characters and Unicode bidi controls are shown escaped, Go style ("\x1b",
// "\u202e"), so such text cannot drive a terminal, hide itself, or reorder
// what a reviewer reads. JSON output does not need it: encoding/json
// escapes control characters, and the text must stay exact there.
//
// Escaped: C0 controls (U+0000..U+001F), DEL, C1 controls (U+0080..U+009F),
// the line and paragraph separators U+2028 and U+2029 (line breaks to some
// log viewers), invisible characters: every format character (category
// Cf: the bidi controls U+061C, U+200E, U+200F, U+202A..U+202E and
// U+2066..U+2069, the zero-width space U+200B, the soft hyphen U+00AD,
// U+FEFF, the tag characters U+E0000..U+E007F that can carry hidden text)
// and the other default-ignorable code points (Hangul fillers, U+034F),
// and bytes that are not UTF-8. The zero-width joiner U+200D is kept, so
// emoji sequences are left as they are, as is everything else.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// mode says which characters besides the escaped set need escaping.
type mode int

const (
	line  mode = iota // one line: newlines escaped too
	lines             // text whose newlines are ours: newlines kept
	quote             // inside double quotes: `"` and `\` escaped too
)

// Clean returns s with every control character (newline and tab too), bidi
// control and invalid byte escaped, for one line of output. Text without
// any is returned unchanged.
func Clean(s string) string { return clean(s, line) }

// Lines is Clean for text whose newlines are ours (an error message of
// several lines): newlines are kept, everything else is escaped as by Clean.
func Lines(s string) string { return clean(s, lines) }

// Quote returns s as a double-quoted string, with `"` and `\` escaped
// besides what Clean escapes. Its escapes are Go's, so strconv.Unquote
// gives s back.
func Quote(s string) string { return `"` + clean(s, quote) + `"` }

// Unsafe reports whether r is always shown escaped.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r < 0xad:
		return false
	case r == 0x200d: // the zero-width joiner builds emoji sequences
		return false
	case r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// keepASCII reports whether the ASCII byte c is written as it is in m.
func keepASCII(c byte, m mode) bool {
	switch {
	case c == '\n':
		return m == lines
	case c < 0x20 || c == 0x7f:
		return false
	case c == '"' || c == '\\':
		return m != quote
	}
	return true
}

// safePrefix is the length of the longest prefix of s that needs no escape.
func safePrefix(s string, m mode) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !keepASCII(c, m) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Unsafe(r) {
			return i
		}
		i += size
	}
	return len(s)
}

const hex = "0123456789abcdef"

func clean(s string, m mode) string {
	i := safePrefix(s, m)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case keepASCII(c, m):
				b.WriteByte(c)
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				escapeASCII(&b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		case Unsafe(r):
			shift := 12
			if r > 0xffff { // a tag character
				b.WriteString(`\U`)
				shift = 28
			} else {
				b.WriteString(`\u`)
			}
			for ; shift >= 0; shift -= 4 {
				b.WriteByte(hex[r>>shift&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeASCII writes a C0 control or DEL as Go writes it in a literal.
func escapeASCII(b *strings.Builder, c byte) {
	switch c {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		b.WriteString(`\x`)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
}
