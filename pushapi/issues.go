package pushapi

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"pushform/internal/jsonstr"
	"pushform/secret"
)

// decodeIssues reads a 400 body: {"issues": [...]} or a bare array. Any
// entry is kept verbatim (Raw); where the entry says which notification it
// is about, by path [INDEX, "field", ...], index and field, a JSON pointer
// ("/INDEX/field", also under source), or a message starting with
// "[INDEX]", Index and Field are set. n is the number of notifications
// sent: an index outside it is no index. Messages, fields and raw entries
// are redacted with red (messages and fields all together, so a key split
// across them is found too). ok is false when the body holds no issues
// array.
func decodeIssues(body []byte, n int, red *secret.Redactor) (issues []Issue, ok bool) {
	s := newScanner(body)
	list := func() error {
		issues = []Issue{}
		return s.array(func() error {
			is, err := s.issue(n)
			issues = append(issues, is)
			return err
		})
	}
	var err error
	switch s.peek() {
	case '[':
		err = list()
	case '{':
		err = s.object(func(key []byte) error {
			if issues != nil || !bytes.EqualFold(key, []byte("issues")) || s.peek() != '[' {
				return s.skip(1)
			}
			return list()
		})
	default:
		return nil, false
	}
	if err != nil || issues == nil || !s.eof() {
		return nil, false
	}
	parts := make([]string, 0, 2*len(issues))
	for _, is := range issues {
		parts = append(parts, is.Message, is.Field)
	}
	red.Join(parts)
	for i := range issues {
		is := &issues[i]
		is.Message, is.Field = sanitize(parts[2*i], 500), sanitize(parts[2*i+1], 200)
		if raw := red.Bytes(is.Raw); len(raw) != len(is.Raw) || string(raw) != string(is.Raw) {
			if !json.Valid(raw) { // keep Raw JSON whatever the redaction cut
				raw = jsonstr.AppendQuote(nil, raw)
			}
			is.Raw = raw
		}
	}
	return issues, true
}

// pathElem is one step of a path to a field: an array index or a name.
type pathElem struct {
	num   int // when isNum
	isNum bool
	name  string
}

// Keys of an issue object, matched without regard to case.
const (
	issueOther = iota
	issuePath
	issueIndex
	issueField
	issuePointer
	issueSource
	issueMessage
)

func issueKey(key []byte) int {
	for _, k := range [...]struct {
		name string
		id   int
	}{
		{"path", issuePath}, {"index", issueIndex}, {"field", issueField}, {"pointer", issuePointer},
		{"source", issueSource}, {"message", issueMessage},
	} {
		if bytes.EqualFold(key, []byte(k.name)) {
			return k.id
		}
	}
	return issueOther
}

// reasonKeys name an issue's reason when it has no message, best first:
// RFC 9457's detail before its title, which only names the problem type.
var reasonKeys = [...]string{"detail", "msg", "reason", "description", "error", "title"}

// reasonRank is key's place in reasonKeys, -1 when it is none of them.
func reasonRank(key []byte) int {
	for i, k := range reasonKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return i
		}
	}
	return -1
}

// issue reads one entry of an issues array.
func (s *scanner) issue(n int) (Issue, error) {
	is := Issue{Index: -1}
	s.peek()
	start := s.pos()
	var (
		path, pointer []pathElem
		hasPath       bool
		index         = -1
		field         string
		reason        string // from detail, msg, reason or description
		reasonAt      int    // its rank in reasonKeys
	)
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err != nil {
			return is, err
		}
		is.Message = string(v)
	case '{':
		err := s.object(func(key []byte) error {
			var err error
			if r := reasonRank(key); r >= 0 {
				v, err := s.text()
				if err == nil && v != "" && (reason == "" || r < reasonAt) {
					reason, reasonAt = v, r
				}
				return err
			}
			switch issueKey(key) {
			case issuePath:
				path, err = s.path()
				hasPath = err == nil && path != nil
			case issueIndex:
				index, err = s.index()
			case issueField:
				var elems []pathElem
				if elems, err = s.path(); err == nil {
					field = renderField(elems)
				}
			case issuePointer:
				var v []byte
				if s.peek() != '"' {
					return s.skip(1)
				}
				if v, err = s.str(); err == nil {
					pointer = pointerElems(string(v))
				}
			case issueSource: // {"source": {"pointer": "/1/title"}}, as JSON:API has it
				if s.peek() != '{' {
					return s.skip(1)
				}
				err = s.object(func(key []byte) error {
					if !bytes.EqualFold(key, []byte("pointer")) || s.peek() != '"' || pointer != nil {
						return s.skip(1)
					}
					v, err := s.str()
					pointer = pointerElems(string(v))
					return err
				})
			case issueMessage:
				is.Message, err = s.text()
			default:
				return s.skip(1)
			}
			return err
		})
		if err != nil {
			return is, err
		}
	default:
		if err := s.skip(1); err != nil {
			return is, err
		}
	}
	is.Raw = json.RawMessage(slices.Clone(s.body[start:s.dec.InputOffset()]))
	if is.Message == "" {
		is.Message = reason
	}

	switch {
	case hasPath:
		is.Index, is.Field = indexAndField(path, n)
	case index >= 0 || field != "":
		is.Field = field
		if index < n {
			is.Index = index
		}
	case pointer != nil:
		is.Index, is.Field = indexAndField(pointer, n)
	default:
		is.Index, is.Field = messageIndex(is.Message, n)
	}
	return is, nil
}

// path reads a path: an array of indexes and names, or a string such as
// "/1/title", "[1].title" or "1.title".
func (s *scanner) path() ([]pathElem, error) {
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		if p := string(v); strings.HasPrefix(p, "/") {
			return pointerElems(p), nil
		}
		return dottedElems(string(v)), nil
	case '[':
		elems := []pathElem{}
		err := s.array(func() error {
			switch s.peek() {
			case '"':
				v, err := s.str()
				elems = append(elems, pathElem{name: string(v)})
				return err
			case '0':
				v, err := s.number()
				if err != nil {
					return err
				}
				if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == math.Trunc(f) && f >= 0 && f < 1e9 {
					elems = append(elems, pathElem{num: int(f), isNum: true})
				} else {
					elems = append(elems, pathElem{name: string(v)})
				}
				return nil
			}
			v, err := s.raw()
			elems = append(elems, pathElem{name: v})
			return err
		})
		return elems, err
	}
	return nil, s.skip(1)
}

// index reads a notification index: a whole number or a numeric string;
// -1 for anything else.
func (s *scanner) index() (int, error) {
	v, ok, err := s.numeric()
	if err != nil || !ok {
		return -1, err
	}
	f, perr := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
	if perr != nil || f != math.Trunc(f) || f < 0 || f >= 1e9 {
		return -1, nil
	}
	return int(f), nil
}

// indexAndField takes a leading index off a path: the notification, when
// it is one of the n sent; the rest names the field ("userIds[3]").
func indexAndField(elems []pathElem, n int) (int, string) {
	index := -1
	if len(elems) > 0 && !elems[0].isNum {
		elems[0] = segment(elems[0].name) // the request is an array: "1" can only be an index
	}
	if len(elems) > 0 && elems[0].isNum {
		if elems[0].num < n {
			index = elems[0].num
		}
		elems = elems[1:]
	}
	return index, renderField(elems)
}

func renderField(elems []pathElem) string {
	var b strings.Builder
	for _, el := range elems {
		if el.isNum {
			b.WriteString("[" + strconv.Itoa(el.num) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(el.name)
	}
	return b.String()
}

// pointerElems splits a JSON pointer (RFC 6901) into a path; segments of
// digits are indexes.
func pointerElems(p string) []pathElem {
	p = strings.TrimPrefix(p, "#")
	if p == "" || p == "/" {
		return []pathElem{}
	}
	var elems []pathElem
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		elems = append(elems, segment(seg))
	}
	return elems
}

// dottedElems splits "[1].userIds[3]", "1.title" or "$[0].body" into a
// path.
func dottedElems(p string) []pathElem {
	p = strings.TrimPrefix(strings.TrimSpace(p), "$")
	elems := []pathElem{}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		elems = append(elems, segment(part))
	}
	return elems
}

func segment(seg string) pathElem {
	if seg != "" && len(seg) < 10 && strings.Trim(seg, "0123456789") == "" {
		n, _ := strconv.Atoi(seg)
		return pathElem{num: n, isNum: true}
	}
	return pathElem{name: seg}
}

// messageIndex reads "[1] title: ..." or "[1].title ...": a message that
// starts with the notification index.
func messageIndex(msg string, n int) (int, string) {
	m := strings.TrimLeft(msg, " ")
	end := strings.IndexByte(m, ']')
	if !strings.HasPrefix(m, "[") || end < 2 || end > 10 {
		return -1, ""
	}
	i, err := strconv.Atoi(m[1:end])
	if err != nil || i < 0 || i >= n {
		return -1, ""
	}
	rest := m[end+1:]
	var field string
	switch {
	case strings.HasPrefix(rest, "."):
		field = rest[1:]
		if k := strings.IndexAny(field, " :"); k >= 0 {
			field = field[:k]
		}
	case strings.HasPrefix(rest, " "):
		if k := strings.IndexByte(rest, ':'); k > 1 && !strings.ContainsAny(rest[1:k], " \t") {
			field = rest[1:k]
		}
	}
	return i, field
}
