package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// Send requests are split with jsontext, the tokenizer of
// github.com/go-json-experiment/json: it validates the whole body as RFC
// 8259 JSON, and splitRequest cuts it into elements and fields, leaving
// values as raw spans of the body for the validator (target arrays are
// decoded on the way). BenchmarkJSON measures it against encoding/json.

// field is one member of an object: its key (unescaped) and raw value;
// strs holds the strings of an array value whose elements all are.
type field struct {
	name string
	raw  []byte
	strs []string
}

// element is one element of the request array: an object's fields, or the
// raw value of anything else.
type element struct {
	object bool
	fields fieldMap
	raw    []byte
}

// requestReader walks one request body.
type requestReader struct {
	dec  *jsontext.Decoder
	body []byte
	buf  []byte // an unescaped string
}

func newRequestReader(b []byte) *requestReader {
	return &requestReader{
		// As lenient as encoding/json: a repeated key keeps the last
		// value, invalid UTF-8 becomes U+FFFD.
		dec:  jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
		body: b,
	}
}

// syntaxError says where and why a body is not JSON.
func (r *requestReader) syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("invalid JSON at byte %d: unexpected end of JSON input", len(r.body))
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.ByteOffset, se.Err)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// next is the offset where the next value starts.
func (r *requestReader) next() int {
	un := r.dec.UnreadBuffer()
	return int(r.dec.InputOffset()) + len(un) - len(bytes.TrimLeft(un, " \t\r\n,:"))
}

// splitRequest splits a send request body. When the body is valid JSON but
// not an array, elems is nil and top is the first byte of the value.
func splitRequest(b []byte) (elems []element, top byte, err error) {
	r := newRequestReader(b)
	k := r.dec.PeekKind()
	if k == 0 {
		_, err := r.dec.ReadToken()
		return nil, 0, r.syntaxError(err)
	}
	top = b[r.next()]
	if k != '[' {
		if err := r.dec.SkipValue(); err != nil {
			return nil, top, r.syntaxError(err)
		}
		return nil, top, r.end()
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return nil, top, r.syntaxError(err)
	}
	elems = []element{}
	for {
		var e element
		switch r.dec.PeekKind() {
		case ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, top, r.syntaxError(err)
			}
			return elems, top, r.end()
		case '{':
			e.object = true
			if e.fields, err = r.object(); err != nil {
				return nil, top, err
			}
		default:
			start := r.next()
			if err := r.dec.SkipValue(); err != nil {
				return nil, top, r.syntaxError(err)
			}
			e.raw = b[start:r.dec.InputOffset()]
		}
		elems = append(elems, e)
	}
}

// end checks nothing but white space follows the top-level value.
func (r *requestReader) end() error {
	if _, err := r.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("invalid JSON at byte %d: invalid character after top-level value", r.dec.InputOffset())
		}
		return r.syntaxError(err)
	}
	return nil
}

// object reads the object next into fields; a repeated key keeps the last
// value, as encoding/json does.
func (r *requestReader) object() (fieldMap, error) {
	if _, err := r.dec.ReadToken(); err != nil {
		return nil, r.syntaxError(err)
	}
	fields := make(fieldMap, 0, 4)
	for {
		if r.dec.PeekKind() == '}' {
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.syntaxError(err)
			}
			return fields, nil
		}
		key, err := r.dec.ReadValue() // PeekKind reported any non-string
		if err != nil {
			return nil, r.syntaxError(err)
		}
		f := field{name: r.unquote(key)}
		start := r.next()
		if r.dec.PeekKind() == '[' {
			f.strs, err = r.strings()
		} else {
			err = r.dec.SkipValue()
		}
		if err != nil {
			return nil, r.syntaxError(err)
		}
		f.raw = r.body[start:r.dec.InputOffset()]
		replaced := false
		for i := range fields {
			if fields[i].name == f.name {
				fields[i], replaced = f, true
			}
		}
		if !replaced {
			fields = append(fields, f)
		}
	}
}

// strings reads the array next, returning its strings when every element
// is one.
func (r *requestReader) strings() ([]string, error) {
	if _, err := r.dec.ReadToken(); err != nil {
		return nil, err
	}
	out := make([]string, 0, 16)
	for {
		switch r.dec.PeekKind() {
		case ']':
			_, err := r.dec.ReadToken()
			return out, err
		case '"':
			v, err := r.dec.ReadValue()
			if err != nil {
				return nil, err
			}
			if out != nil {
				out = append(out, r.unquote(v))
			}
		default:
			if err := r.dec.SkipValue(); err != nil {
				return nil, err
			}
			out = nil
		}
	}
}

// unquote decodes the string token v.
func (r *requestReader) unquote(v []byte) string {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && validUTF8(inner) {
		return string(inner)
	}
	r.buf, _ = jsontext.AppendUnquote(r.buf[:0], v) // invalid UTF-8 becomes U+FFFD
	return string(r.buf)
}

// arrayElems splits a raw array already validated into its elements' raw
// values.
func arrayElems(raw []byte) [][]byte {
	r := newRequestReader(raw)
	var out [][]byte
	if _, err := r.dec.ReadToken(); err != nil {
		return nil
	}
	for r.dec.PeekKind() != ']' {
		start := r.next()
		if r.dec.SkipValue() != nil {
			return out
		}
		out = append(out, raw[start:r.dec.InputOffset()])
	}
	return out
}

// decodeString decodes a JSON string token; ok is false for anything else.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && validUTF8(inner) {
		return string(inner), true
	}
	return unquote(raw)
}

// unquote decodes a string token the way encoding/json does: a lone
// surrogate or an invalid byte becomes U+FFFD.
func unquote(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' || !jsontext.Value(raw).IsValid(jsontext.AllowInvalidUTF8(true)) {
		return "", false
	}
	out, _ := jsontext.AppendUnquote(nil, raw) // the error only reports what became U+FFFD
	return string(out), true
}
