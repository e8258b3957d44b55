package secret

import (
	"encoding/base64"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Besides its escapings, a secret is found in the other forms a server
// or a configuration can give it: in any letter case, with invisible
// characters between its characters (a zero-width space, a soft hyphen),
// and base64 or base64url encoded inside a longer encoded text.

// Invisible reports whether r is shown as nothing: format characters
// (category Cf: zero-width space, soft hyphen, bidi and word joiners, tag
// characters), variation selectors and the other default-ignorable code
// points (Hangul fillers, the combining grapheme joiner). Text can hide a
// secret by putting them between its characters.
func Invisible(r rune) bool {
	if r < 0xad {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// minEncoded is the length under which an encoded form of a secret is not
// looked for: five base64 characters occur in ordinary ids by chance.
const minEncoded = 8

// encodedForms returns the base64 and base64url (padded or not: the
// padding is outside them) texts that are in every encoding of s, at each
// of the three alignments s can have inside a longer encoded text: the
// characters whose six bits all come from s.
func encodedForms(s string) []string {
	var out []string
	for align := 0; align < 3; align++ {
		buf := make([]byte, align+len(s))
		copy(buf[align:], s)
		enc := base64.StdEncoding.EncodeToString(buf)
		first := (8*align + 5) / 6      // the first character with no bit of the padding before s
		end := 8 * (align + len(s)) / 6 // past the last character with no bit after s
		if end-first < minEncoded {
			continue
		}
		core := enc[first:end]
		out = append(out, core)
		if u := strings.NewReplacer("+", "-", "/", "_").Replace(core); u != core {
			out = append(out, u)
		}
	}
	return out
}

// fold returns s as the redactor compares it: letters in lower case,
// invisible characters left out.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if Invisible(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// isASCII reports whether b holds only ASCII bytes: such text has no
// invisible character, and only ASCII letters to fold.
func isASCII[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// indexFoldASCII is the index of the first match of sec (folded, ASCII)
// in text ignoring ASCII case, or -1. It does not allocate.
func indexFoldASCII[T string | []byte](text T, sec []byte) int {
	if len(sec) == 0 || len(sec) > len(text) {
		return -1
	}
	c0 := sec[0]
next:
	for i := 0; i+len(sec) <= len(text); i++ {
		if lowerASCII(text[i]) != c0 {
			continue
		}
		for k := 1; k < len(sec); k++ {
			if lowerASCII(text[i+k]) != sec[k] {
				continue next
			}
		}
		return i
	}
	return -1
}

// folded returns m's text as fold writes it, mapped to the original: an
// invisible character belongs to the character after it, so a secret
// found across one is replaced whole.
func folded(m mapped) mapped {
	out := mapped{text: make([]byte, 0, len(m.text)), start: make([]int32, 0, len(m.text)), end: make([]int32, 0, len(m.text))}
	pending := -1 // where the invisible characters before this one start
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(m.text); {
		r, size := utf8.DecodeRune(m.text[i:])
		if r != utf8.RuneError && Invisible(r) {
			if pending < 0 {
				pending = m.origStart(i)
			}
			i += size
			continue
		}
		var enc []byte
		if r == utf8.RuneError && size == 1 {
			enc = m.text[i : i+1]
		} else {
			enc = buf[:utf8.EncodeRune(buf[:], unicode.ToLower(r))]
		}
		s, e := m.origStart(i), m.origEnd(i+size-1)
		if pending >= 0 {
			s, pending = pending, -1
		}
		for range enc {
			out.start = append(out.start, int32(s))
			out.end = append(out.end, int32(e))
		}
		out.text = append(out.text, enc...)
		i += size
	}
	return out
}

// foldsOf lists the runes that match c ignoring case (c first).
func foldsOf(c rune) []rune {
	out := []rune{c}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	return out
}

// escapedInvisible returns the length of an invisible character written
// with one escape at t[pos:] (\u200b, &#8203;, &#x200B;, %E2%80%8B,
// \xe2\x80\x8b, &shy;, ...), or 0.
func escapedInvisible(t []byte, pos int) int {
	if pos >= len(t) {
		return 0
	}
	rest := t[pos:]
	switch rest[0] {
	case '\\':
		if len(rest) >= 6 && (rest[1] == 'u' || rest[1] == 'U') {
			if v, ok := parseHex(rest[2:6]); ok {
				r, n := rune(v), 6
				if 0xd800 <= v && v < 0xdc00 && len(rest) >= 12 && rest[6] == '\\' && (rest[7] == 'u' || rest[7] == 'U') {
					if lo, ok := parseHex(rest[8:12]); ok && 0xdc00 <= lo && lo < 0xe000 {
						r, n = 0x10000+(rune(v)-0xd800)<<10+(rune(lo)-0xdc00), 12
					}
				}
				if Invisible(r) {
					return n
				}
			}
			return 0
		}
		return escapedUTF8(rest, `\x`)
	case '%':
		return escapedUTF8(rest, "%")
	case '&':
		end := 0
		for i := 1; i < len(rest) && i < 20; i++ {
			if rest[i] == ';' {
				end = i
				break
			}
		}
		if end == 0 {
			return 0
		}
		body := string(rest[1:end])
		var v uint64
		var ok bool
		switch {
		case strings.HasPrefix(body, "#x") || strings.HasPrefix(body, "#X"):
			v, ok = parseHex([]byte(body[2:]))
		case strings.HasPrefix(body, "#"):
			v, ok = parseDec(body[1:])
		default:
			r, named := invisibleEntities[body]
			v, ok = uint64(r), named
		}
		if ok && v <= unicode.MaxRune && Invisible(rune(v)) {
			return end + 1
		}
	}
	return 0
}

// invisibleEntities are the HTML named references of invisible characters.
var invisibleEntities = map[string]rune{
	"shy": 0xad, "ZeroWidthSpace": 0x200b, "zwnj": 0x200c, "zwj": 0x200d, "lrm": 0x200e, "rlm": 0x200f,
	"NoBreak": 0x2060, "ApplyFunction": 0x2061, "af": 0x2061, "InvisibleTimes": 0x2062, "it": 0x2062,
	"InvisibleComma": 0x2063, "ic": 0x2063,
}

// escapedUTF8 returns the length of a UTF-8 encoded invisible character
// written byte by byte as prefix followed by two hex digits, or 0.
func escapedUTF8(t []byte, prefix string) int {
	var raw []byte
	n := 0
	for len(raw) < utf8.UTFMax {
		p := n
		if !strings.HasPrefix(string(t[p:min(len(t), p+len(prefix))]), prefix) || p+len(prefix)+2 > len(t) {
			break
		}
		v, ok := parseHex(t[p+len(prefix) : p+len(prefix)+2])
		if !ok {
			break
		}
		raw = append(raw, byte(v))
		n = p + len(prefix) + 2
		if r, size := utf8.DecodeRune(raw); r != utf8.RuneError && size == len(raw) {
			if Invisible(r) {
				return n
			}
			return 0
		}
	}
	return 0
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 6 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func parseDec(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 7 {
		return 0, false
	}
	var v uint64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
