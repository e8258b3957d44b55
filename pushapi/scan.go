package pushapi

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting in skipped values so hostile input cannot recurse
// deeply.
const maxDepth = 64

// scanner is a small JSON reader for the response shapes we decode by
// hand: it walks the input once, hands out strings without copying where
// there are no escapes, and reports errors with the byte offset.
type scanner struct {
	b       []byte
	i       int
	scratch []byte
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eof() bool { return s.peek() == 0 && s.i >= len(s.b) }

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.unexpected(`"` + string(c) + `"`)
	}
	s.i++
	return nil
}

func (s *scanner) unexpected(want string) error {
	if s.i >= len(s.b) {
		return s.errorf("unexpected end of body, want %s", want)
	}
	return s.errorf("unexpected %q, want %s", s.b[s.i], want)
}

// kind names the JSON type of the next value, for error messages.
func (s *scanner) kind() string {
	switch s.peek() {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case 0:
		return "end of body"
	}
	return "number"
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string. The result aliases the input or the scratch buffer:
// it is valid until the next call.
func (s *scanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.unexpected("string")
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			return out, nil
		case c == '\\':
			return s.strSlow(start)
		case c < 0x20:
			return nil, s.errorf("control character in string")
		}
		s.i++
	}
	return nil, s.errorf("unterminated string")
}

func (s *scanner) strSlow(start int) ([]byte, error) {
	out := append(s.scratch[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			s.scratch = out
			return out, nil
		case c < 0x20:
			return nil, s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, s.errorf("unterminated string")
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					var ok2 bool
					if r2, ok2 = s.hex4(); !ok2 {
						return nil, s.errorf("bad \\u escape")
					}
					if utf16.DecodeRune(r, r2) == utf8.RuneError {
						s.i = save // lone surrogate; the next escape stands alone
						r2 = -1
					}
				}
				if r2 < 0 {
					r = utf8.RuneError
				} else {
					r = utf16.DecodeRune(r, r2)
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

// number reads a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		s.i = start
		return nil, s.unexpected("number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	return s.b[start:s.i], nil
}

var errTooDeep = errors.New("nesting too deep")

// skip consumes one value of any type.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("at byte %d: %w", s.i, errTooDeep)
	}
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func(key []byte) error { return s.skip(depth + 1) })
	case '[':
		return s.array(func() error { return s.skip(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, err := s.number()
		return err
	}
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.unexpected(word)
	}
	s.i += len(word)
	return nil
}

// object reads an object, calling fn for each member with the scanner at
// the value; fn must consume the value. key is valid only during fn.
func (s *scanner) object(fn func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.unexpected(`"," or "}"`)
		}
	}
}

// array reads an array, calling fn with the scanner at each element.
func (s *scanner) array(fn func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.unexpected(`"," or "]"`)
		}
	}
}
