package pushapi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDepth bounds nesting in skipped values: no answer the client reads
// nests deeper, so deeper is hostile.
const maxDepth = 64

// maxString bounds one token of a streamed body. A user id, message or key
// longer than this is hostile; the bound keeps a streamed body from holding
// an endless string in memory (a whole body is bounded already).
const maxString = 1 << 20

// scanner is the client's one JSON reader: the tolerant decoders of the
// answers (results, issues, recipient pages) walk its tokens. The
// tokenizing and validation are jsontext's; scanner adds what the
// decoders share: strings handed out without a copy where they hold no
// escape, object keys matched by the caller, nesting and token bounds, and
// errors in the client's words with the byte offset.
//
// It reads a whole body (newScanner) or a stream (newStreamScanner): a
// recipients list of any length is read in constant memory. Slices it
// returns are valid until the next call.
type scanner struct {
	// base is how many bytes of the answer were read before the input
	// (by fastRecipients), less the '[' put back in front: byte offsets
	// in errors are the answer's.
	base    int64
	before  int // the list's elements read before the input
	dec     *jsontext.Decoder
	body    []byte    // the whole input; nil when streaming
	in      *streamIn // the stream; nil for a whole body
	scratch []byte    // an unescaped string
	keybuf  []byte    // the key of the member being read
}

// decodeOptions makes the tokenizer as lenient as encoding/json: a
// service's repeated key or invalid UTF-8 is not worth failing a send for.
func decodeOptions() []jsontext.Options {
	return []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
}

// newScanner reads the whole body b, without copying it.
func newScanner(b []byte) *scanner {
	return &scanner{dec: jsontext.NewDecoder(bytes.NewBuffer(b), decodeOptions()...), body: b}
}

// newStreamScanner reads r, keeping its first head bytes to show in an
// error.
func newStreamScanner(r io.Reader, head int) *scanner {
	in := &streamIn{r: r, headMax: head}
	in.dec = jsontext.NewDecoder(in, decodeOptions()...)
	return &scanner{dec: in.dec, in: in}
}

// streamIn is the reader under a streaming decoder: it refuses to buffer
// more than maxString bytes past the last token (the decoder would grow
// its buffer for an endless string), keeps the start of the answer, and
// remembers the reader's own failure apart from bad content.
type streamIn struct {
	r       io.Reader
	dec     *jsontext.Decoder
	n       int64 // bytes read
	head    []byte
	headMax int
	unkept  int   // bytes read next that are not the answer's: not kept in head
	err     error // the reader's failure (not io.EOF)
}

func (in *streamIn) Read(p []byte) (int, error) {
	if in.n-in.dec.InputOffset() > maxString {
		return 0, errTooLong
	}
	n, err := in.r.Read(p)
	in.n += int64(n)
	kept := p[:n]
	if in.unkept > 0 {
		u := min(in.unkept, n)
		kept, in.unkept = kept[u:], in.unkept-u
	}
	if k := min(len(kept), in.headMax-len(in.head)); k > 0 {
		in.head = append(in.head, kept[:k]...)
	}
	if err != nil && err != io.EOF {
		in.err = err
	}
	return n, err
}

// readErr is the reader's failure, if the input ended because of one.
func (s *scanner) readErr() error {
	if s.in == nil {
		return nil
	}
	return s.in.err
}

// start is the input read so far (a stream's head), for describing it.
func (s *scanner) start() []byte {
	if s.in != nil {
		return s.in.head
	}
	return s.body
}

// rest is what follows the last token, white space and delimiters
// skipped: where the next value starts.
func (s *scanner) rest() []byte {
	return bytes.TrimLeft(s.dec.UnreadBuffer(), " \t\r\n,:")
}

func (s *scanner) pos() int64 {
	return s.base + s.dec.InputOffset() + int64(len(s.dec.UnreadBuffer())-len(s.rest()))
}

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

// fail puts an error of the tokenizer in the client's words; want is what
// the caller was reading.
func (s *scanner) fail(err error, want string) error {
	if rerr := s.readErr(); rerr != nil {
		return &readError{rerr}
	}
	if errors.Is(err, errTooLong) {
		return errTooLong
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		end := s.base + int64(len(s.body))
		if s.in != nil {
			end = s.base + s.in.n
		}
		if r := s.rest(); len(r) > 0 && r[0] == '"' {
			return fmt.Errorf("at byte %d: the answer ended inside a string", end)
		}
		return fmt.Errorf("at byte %d: the answer ended early, want %s", end, want)
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Errorf("at byte %d: %w", s.base+se.ByteOffset, se.Err)
	}
	return err
}

// peek returns the kind of the next value ('"', '0' for a number, '{',
// '[', 't', 'f', 'n'), or 0 at the end or at bad input.
func (s *scanner) peek() jsontext.Kind { return s.dec.PeekKind() }

// eof reports whether only white space is left.
func (s *scanner) eof() bool {
	if s.peek() != 0 {
		return false
	}
	_, err := s.dec.ReadToken()
	return err == io.EOF
}

// unexpected is the error for a value of kind k where want was wanted.
func (s *scanner) unexpected(k jsontext.Kind, want string) error {
	if k == 0 { // the end, or bad input: the tokenizer says which
		_, err := s.dec.ReadToken()
		return s.fail(err, want)
	}
	return s.errorf("unexpected %q, want %s", s.rest()[0], want)
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
	case '0':
		return "a number"
	}
	if len(s.rest()) == 0 {
		return "nothing"
	}
	return "not JSON"
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	_, err := s.dec.ReadToken()
	return err == nil
}

// literal consumes true or false.
func (s *scanner) literal(word string) error {
	if k := s.peek(); k != jsontext.Kind(word[0]) {
		return s.unexpected(k, word)
	}
	_, err := s.dec.ReadToken()
	return s.failed(err, word)
}

// failed is fail for a non-nil err.
func (s *scanner) failed(err error, want string) error {
	if err == nil {
		return nil
	}
	return s.fail(err, want)
}

// str reads a string. The result aliases the input or the scratch buffer:
// it is valid until the next call.
func (s *scanner) str() ([]byte, error) { return s.strMax(math.MaxInt) }

// strMax reads a string of at most max bytes (decoded).
func (s *scanner) strMax(max int) ([]byte, error) {
	if k := s.peek(); k != '"' {
		return nil, s.unexpected(k, "a string")
	}
	return s.nextStr(max)
}

// nextStr is strMax where the caller has seen a string is next.
func (s *scanner) nextStr(max int) ([]byte, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, s.fail(err, "a string")
	}
	out := unquoted(&s.scratch, v)
	if len(out) > max {
		return nil, errTooLong
	}
	return out, nil
}

// unquoted is the content of the valid string token v: v's own bytes when
// it holds no escape, else decoded into *buf. Invalid UTF-8 in an escaped
// string becomes U+FFFD, as encoding/json has it.
func unquoted(buf *[]byte, v jsontext.Value) []byte {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	*buf, _ = jsontext.AppendUnquote((*buf)[:0], v) // the error is only for invalid UTF-8
	return *buf
}

// number reads a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	if k := s.peek(); k != '0' {
		return nil, s.unexpected(k, "a number")
	}
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, s.fail(err, "a number")
	}
	if len(v) > 64 {
		return nil, s.errorf("bad number %q", v[:40])
	}
	return v, nil
}

// numeric reads a number, or a string (a service may quote its numbers),
// and returns its text; ok is false, the value skipped, for anything else.
func (s *scanner) numeric() (v []byte, ok bool, err error) {
	switch s.peek() {
	case '"':
		v, err = s.str()
	case '0':
		v, err = s.number()
	default:
		return nil, false, s.skip(1)
	}
	return v, err == nil, err
}

var (
	errTooDeep = errors.New("nesting too deep")
	// errTooLong is a string over the length its caller allows.
	errTooLong = errors.New("a string too long")
)

// skip consumes one value of any type; depth is the nesting it is at.
func (s *scanner) skip(depth int) error {
	switch k := s.peek(); k {
	case 0:
		return s.unexpected(k, "a value")
	case '{', '[':
	default:
		return s.failed(s.dec.SkipValue(), "a value")
	}
	base := s.dec.StackDepth()
	for {
		if _, err := s.dec.ReadToken(); err != nil {
			return s.fail(err, "a value")
		}
		d := s.dec.StackDepth()
		if d == base {
			return nil
		}
		if depth+d-base > maxDepth {
			return fmt.Errorf("at byte %d: %w", s.base+s.dec.InputOffset(), errTooDeep)
		}
	}
}

// raw reads any value and returns its JSON text.
func (s *scanner) raw() (string, error) {
	if k := s.peek(); k == 0 {
		return "", s.unexpected(k, "a value")
	}
	v, err := s.dec.ReadValue()
	if err != nil {
		return "", s.fail(err, "a value")
	}
	return validUTF8(v), nil
}

// value reads any value and returns its JSON text, valid until the next
// call: for a caller that decides afterwards whether it can read it.
func (s *scanner) value() (jsontext.Value, error) {
	if k := s.peek(); k == 0 {
		return nil, s.unexpected(k, "a value")
	}
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, s.fail(err, "a value")
	}
	return v, nil
}

// object reads an object, calling fn for each member with the scanner at
// the value; fn must consume the value. key is valid only until fn calls
// the scanner: look at it first.
func (s *scanner) object(fn func(key []byte) error) error {
	if k := s.peek(); k != '{' {
		return s.unexpected(k, `"{"`)
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return s.fail(err, `"{"`)
	}
	for {
		switch k := s.peek(); k {
		case '}':
			_, err := s.dec.ReadToken()
			return s.failed(err, `"}"`)
		case '"':
		default:
			return s.unexpected(k, `a key or "}"`)
		}
		v, err := s.dec.ReadValue()
		if err != nil {
			return s.fail(err, "a key")
		}
		if len(v) > 4096+2 {
			return s.errorf("an object key longer than 4096 bytes")
		}
		key := unquoted(&s.scratch, v)
		if len(key) > 4096 {
			return s.errorf("an object key longer than 4096 bytes")
		}
		if s.in != nil { // the stream's next read may move its window
			s.keybuf = append(s.keybuf[:0], key...)
			key = s.keybuf
		}
		if err := fn(key); err != nil {
			return err
		}
	}
}

// array reads an array, calling fn with the scanner at each element.
func (s *scanner) array(fn func() error) error {
	if k := s.peek(); k != '[' {
		return s.unexpected(k, `"["`)
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return s.fail(err, `"["`)
	}
	for {
		switch k := s.peek(); k {
		case ']':
			_, err := s.dec.ReadToken()
			return s.failed(err, `"]"`)
		case 0:
			return s.unexpected(k, `a value or "]"`)
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// reset makes s read the whole body in holds, afresh (the caller may
// reuse one buffer, where newScanner allocates one).
func (s *scanner) reset(in *bytes.Buffer) {
	s.dec.Reset(in, decodeOptions()...)
	s.body = in.Bytes()
}

// The fast paths' byte readers (fastEntry, fastDelivered, fastRecipients)
// read plain strings and small numbers straight from the bytes, where the
// scanner would tokenize; what they accept, the fast paths' fuzz targets
// hold to the scanner.

// plainStr reads the string at b[p] when it is plain (ASCII that needs no
// escape, so its content is its bytes), and returns its content and the
// offset past it.
func plainStr(b []byte, p int) ([]byte, int, bool) {
	end, ok := plainEnd(b, p)
	if !ok {
		return nil, 0, false
	}
	return b[p+1 : end-1], end, true
}

// plainEnd returns the offset past the plain string at b[p] (see
// plainStr) and true; or false with the offset of the byte that is not
// plain, len(b) when b ends first, or p when b[p] is not '"'. It skips
// eight plain bytes at a time, then finishes as plainEndFrom, its
// reference (FuzzPlainEnd).
func plainEnd(b []byte, p int) (int, bool) {
	if p >= len(b) || b[p] != '"' {
		return p, false
	}
	i := p + 1
	for ; i+8 <= len(b); i += 8 {
		if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
	}
	return plainEndFrom(b, i)
}

// plainEndFrom is plainEnd a byte at a time, from b[i] inside the string.
func plainEndFrom(b []byte, i int) (int, bool) {
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case notPlain(c):
			return i, false
		}
	}
	return len(b), false
}

// notPlain reports whether c is a byte special marks: below 0x20, above
// 0x7f, '"' or '\\'.
func notPlain(c byte) bool { return c < 0x20 || c >= 0x80 || c == '"' || c == '\\' }

// special has the high bit set in the first byte of w (little endian)
// that is not plain: below 0x20, above 0x7f, '"' or '\\'. Bytes after
// the first may be marked wrongly (a borrow), so only the lowest counts.
func special(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	q, bs := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*0x20)&^w | (q-ones)&^q | (bs-ones)&^bs | w) & high
}

// plainUint reads the number at b[p] when it is a non-negative integer
// without exponent or fraction, followed by white space, ',' or '}'.
func plainUint(b []byte, p int) ([]byte, int, bool) {
	i := p
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == p || i == len(b) || b[p] == '0' && i > p+1 {
		return nil, 0, false
	}
	switch b[i] {
	case ' ', '\t', '\r', '\n', ',', '}':
		return b[p:i], i, true
	}
	return nil, 0, false
}

func skipWS(b []byte, p int) int {
	for p < len(b) {
		switch b[p] {
		case ' ', '\t', '\r', '\n':
			p++
		default:
			return p
		}
	}
	return p
}
