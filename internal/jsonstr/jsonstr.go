// Package jsonstr quotes strings as JSON the one way pushform's hand-built
// encoders do: jsontext's (", \ and control characters escaped, nothing
// else; invalid UTF-8 as U+FFFD), with a shortcut for the plain strings
// ids mostly are. The shortcut is held to jsontext by a differential fuzz
// test (FuzzAppendQuote).
package jsonstr

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Plain reports whether s is quoted as it is: valid UTF-8 without '"',
// '\\' or a control character (below 0x20).
func Plain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\':
			return false
		case c >= utf8.RuneSelf:
			return validRest(s[i:])
		}
	}
	return true
}

// validRest reports whether s, from its first non-ASCII byte on, is valid
// UTF-8 without a byte Plain refuses.
func validRest[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	switch s := any(s).(type) {
	case string:
		return utf8.ValidString(s)
	case []byte:
		return utf8.Valid(s)
	}
	panic("unreachable")
}

// AppendQuote appends s as a JSON string: jsontext.AppendQuote's bytes,
// those of a Plain s copied between quotes.
func AppendQuote[T string | []byte](dst []byte, s T) []byte {
	if Plain(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst, _ = jsontext.AppendQuote(dst, s) // the error only reports what became U+FFFD
	return dst
}
