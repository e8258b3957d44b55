package pushapi

import (
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting in skipped values so hostile input cannot recurse
// deeply.
const maxDepth = 64

// maxString bounds one string token. A user id, message or key longer than
// this is hostile; the bound keeps a streamed body from holding an endless
// string in memory.
const maxString = 1 << 20

// scanner is the client's one JSON reader, for the response shapes it
// decodes by hand (BenchmarkJSON measures why). It walks the input once,
// hands out strings without copying where there are no escapes, and
// reports errors with the byte offset.
//
// It reads either a whole body (r nil: b is all there is) or a stream: b
// is then a window refilled from r, so a recipients list of any length is
// read in constant memory. Slices it returns alias the window: they are
// valid until the next call.
type scanner struct {
	b       []byte
	i       int
	off     int64     // input bytes dropped before b[0]
	r       io.Reader // nil when b is the whole input
	rerr    error     // the reader's error, once it has failed or ended
	scratch []byte
	keybuf  []byte
}

// newStreamScanner reads r through a window of size bytes.
func newStreamScanner(r io.Reader, size int) *scanner {
	return &scanner{r: r, b: make([]byte, 0, size)}
}

// more reads more input, keeping b[keep:] (keep <= s.i); it returns how
// far the kept bytes moved towards the start, and false at the end of the
// input.
func (s *scanner) more(keep int) (shift int, ok bool) {
	if s.r == nil || s.rerr != nil {
		return 0, false
	}
	if keep > 0 {
		n := copy(s.b, s.b[keep:])
		s.b = s.b[:n]
		s.off += int64(keep)
		s.i -= keep
		shift = keep
	}
	if len(s.b) == cap(s.b) { // a token fills the window: widen it
		nb := make([]byte, len(s.b), 2*cap(s.b))
		copy(nb, s.b)
		s.b = nb
	}
	for {
		n, err := s.r.Read(s.b[len(s.b):cap(s.b)])
		s.b = s.b[:len(s.b)+n]
		if err != nil {
			s.rerr = err
		}
		if n > 0 {
			return shift, true
		}
		if err != nil {
			return shift, false
		}
	}
}

// ensure makes n bytes from s.i available, if the input has them.
func (s *scanner) ensure(n int) bool {
	for len(s.b)-s.i < n {
		if _, ok := s.more(s.i); !ok {
			return false
		}
	}
	return true
}

// readErr is the reader's failure, if the input ended because of one.
func (s *scanner) readErr() error {
	if s.rerr == nil || errors.Is(s.rerr, io.EOF) {
		return nil
	}
	return s.rerr
}

func (s *scanner) pos() int64 { return s.off + int64(s.i) }

func (s *scanner) errorf(format string, args ...any) error {
	if err := s.readErr(); err != nil {
		return &readError{err}
	}
	return fmt.Errorf("at byte %d: %s", s.pos(), fmt.Sprintf(format, args...))
}

// readError is a failure to read a streamed body (a dropped connection, a
// timeout), not a fault of its content.
type readError struct{ err error }

func (e *readError) Error() string { return "reading the answer: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	for {
		for s.i < len(s.b) {
			switch c := s.b[s.i]; c {
			case ' ', '\t', '\n', '\r':
				s.i++
			default:
				return c
			}
		}
		if _, ok := s.more(s.i); !ok {
			return 0
		}
	}
}

// eof reports whether only white space is left.
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
		return s.errorf("the answer ended early, want %s", want)
	}
	return s.errorf("unexpected %q, want %s", s.b[s.i], want)
}

// kind names the JSON type of the next value, for error messages.
func (s *scanner) kind() string {
	switch s.peek() {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	if s.i >= len(s.b) {
		return "nothing"
	}
	return "not JSON"
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && s.ensure(4) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string (of at most maxString bytes when streaming: a whole
// body is bounded already). The result aliases the input or the scratch
// buffer: it is valid until the next call.
func (s *scanner) str() ([]byte, error) {
	if s.r == nil {
		return s.strMax(math.MaxInt)
	}
	return s.strMax(maxString)
}

// strMax reads a string of at most max bytes (decoded).
func (s *scanner) strMax(max int) ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.unexpected("a string")
	}
	s.i++
	start := s.i
	for {
		for s.i < len(s.b) {
			c := s.b[s.i]
			switch {
			case c == '"':
				out := s.b[start:s.i]
				if len(out) > max {
					return nil, errTooLong
				}
				s.i++
				return out, nil
			case c == '\\':
				return s.strSlow(start, max)
			case c < 0x20:
				return nil, s.errorf("control character in string")
			}
			s.i++
		}
		if s.i-start > max {
			return nil, errTooLong
		}
		shift, ok := s.more(start)
		if !ok {
			return nil, s.errorf("the answer ended inside a string")
		}
		start -= shift
	}
}

func (s *scanner) strSlow(start, max int) ([]byte, error) {
	out := append(s.scratch[:0], s.b[start:s.i]...)
	for {
		if len(out) > max {
			return nil, errTooLong
		}
		if s.i >= len(s.b) {
			if _, ok := s.more(s.i); !ok {
				return nil, s.errorf("the answer ended inside a string")
			}
		}
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
		if !s.ensure(2) {
			return nil, s.errorf("the answer ended inside a string")
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
				return nil, s.errorf(`bad \u escape`)
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.ensure(2) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					var ok2 bool
					if r2, ok2 = s.hex4(); !ok2 {
						return nil, s.errorf(`bad \u escape`)
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
			return nil, s.errorf(`bad escape \%c`, e)
		}
	}
}

func (s *scanner) hex4() (rune, bool) {
	if !s.ensure(4) {
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

// number reads a JSON number and returns its text (aliasing the input).
func (s *scanner) number() ([]byte, error) {
	s.peek()
	start := s.i
	for {
		for s.i < len(s.b) && isNumberByte(s.b[s.i]) {
			s.i++
		}
		if s.i < len(s.b) {
			break
		}
		shift, ok := s.more(start)
		start -= shift
		if !ok {
			break
		}
	}
	v := s.b[start:s.i]
	if len(v) == 0 {
		return nil, s.unexpected("a number")
	}
	if !validNumber(v) || len(v) > 64 {
		return nil, s.errorf("bad number %q", v[:min(len(v), 40)])
	}
	return v, nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber checks v against the JSON number grammar.
func validNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(v)
}

var (
	errTooDeep = errors.New("nesting too deep")
	// errTooLong is a string over the length its caller allows.
	errTooLong = errors.New("a string too long")
)

// skip consumes one value of any type.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("at byte %d: %w", s.pos(), errTooDeep)
	}
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func([]byte) error { return s.skip(depth + 1) })
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
	if !s.ensure(len(word)) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.unexpected(word)
	}
	s.i += len(word)
	return nil
}

// object reads an object, calling fn for each member with the scanner at
// the value; fn must consume the value. key is valid only until fn calls
// the scanner: look at it first.
func (s *scanner) object(fn func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.strMax(4096)
		if errors.Is(err, errTooLong) {
			return s.errorf("an object key longer than 4096 bytes")
		}
		if err != nil {
			return err
		}
		if s.r != nil { // a refill while reading the ':' would move the key
			s.keybuf = append(s.keybuf[:0], key...)
			key = s.keybuf
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
