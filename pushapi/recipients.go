package pushapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds on what a recipients page may hold.
const (
	// MaxCursorBytes bounds a paging cursor: a service whose cursor grows
	// with every page is refused before it costs memory.
	MaxCursorBytes = 8 << 10
	// MaxUserIDBytes bounds one user id of the recipients list.
	MaxUserIDBytes = 64 << 10
)

// recipientsPage decodes one page of the recipient list from s: a bare
// array of user ids, or an object holding the list under a sigList key
// (userIds, recipients, data...), with paging signals beside it or nested
// one level (links.next, meta.total...; see signals). Elements may be
// strings or objects with a userId (or id). Each id is passed to emit
// (the slice is valid during the call only); what the body says about
// paging is returned. onObject, when set, is called when the answer turns
// out to be an object, before any id: its paging signals may follow the
// list.
func (s *scanner) recipientsPage(emit func(id []byte) error, onObject func()) (info pageInfo, err error) {
	info = newPageInfo()
	k := s.before
	list := func() error {
		if s.peek() != '[' {
			return fmt.Errorf("the user id list is %s, want an array", s.kind())
		}
		return s.array(func() error {
			if err := s.recipient(emit); err != nil {
				return fmt.Errorf("recipient %d: %w", k, err)
			}
			k++
			return nil
		})
	}
	switch s.peek() {
	case '[':
		if err := list(); err != nil {
			return info, err
		}
	case '{':
		if onObject != nil {
			onObject()
		}
		found := false
		var member func(prefix string, depth int) func(key []byte) error
		member = func(prefix string, depth int) func(key []byte) error {
			return func(key []byte) error {
				m := bodySignal(key)
				name := prefix + string(key)
				switch m {
				case sigList:
					if found || depth > 0 {
						return s.skip(1)
					}
					found = true
					return list()
				case sigNext, sigCursor:
					c, err := s.nextValue()
					if err != nil {
						return fmt.Errorf("the next cursor %w", err)
					}
					info.setNext(m, c, name)
					return nil
				case sigNest:
					if depth > 1 || s.peek() != '{' {
						return s.skip(1)
					}
					return s.object(member(name+".", depth+1))
				case sigTotal, sigPage, sigPages, sigPerPage, sigOffset, sigLimit:
					n, ok, err := s.pageCount()
					if err != nil || !ok {
						return err
					}
					info.count(m, n, name)
					return nil
				case sigMore, sigLast:
					return s.flagValue(m, &info, name)
				case sigNextish:
					if c := s.peek(); c == 'n' || c == 'f' {
						return s.skip(1) // null or false: nothing follows
					}
					if info.nextish == "" {
						info.nextish, info.any = name, true
					}
					return s.skip(1)
				}
				return s.skip(1)
			}
		}
		if err := s.object(member("", 0)); err != nil {
			return info, err
		}
		if !found {
			return info, errors.New(`the answer is an object without a user id list (userIds, recipients, data, items or results)`)
		}
	default:
		return info, notJSON(s, s.start(), "an array or object")
	}
	if !s.eof() {
		return info, s.errorf("data after the recipient list")
	}
	return info, nil
}

// readRecipientsPage decodes a page of the recipient list streamed from r,
// as recipientsPage does; it returns the scanner that read it, for what
// it read. A bare array's plain string ids, the usual page, are read
// straight from the bytes (fastRecipients), and the general scanner takes
// over where they end: the bytes left, after a '[' put back in front, are
// the rest of the same array, so what is accepted and refused, and the
// errors with their byte offsets, stay the general path's.
func readRecipientsPage(r io.Reader, headMax int, emit func(id []byte) error, onObject func()) (*scanner, pageInfo, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	read, head, ids, err := fastRecipients(br, headMax, emit)
	var s *scanner
	if read == 0 {
		s = newStreamScanner(br, headMax)
	} else {
		s = newStreamScanner(io.MultiReader(strings.NewReader("["), br), headMax)
		s.base, s.before, s.in.head, s.in.unkept = read-1, ids, head, 1
	}
	if err != nil {
		return s, pageInfo{}, fmt.Errorf("recipient %d: %w", ids, err)
	}
	info, err := s.recipientsPage(emit, onObject)
	return s, info, err
}

// fastRecipients reads the start of a bare array of plain string ids
// from br, passing each to emit, and stops before the first element it
// does not read whole: one that is not a plain string (an escape, a byte
// outside printable ASCII, an object), is empty or longer than
// MaxUserIDBytes, does not fit the buffer, or is the last (not followed by
// a comma and another string). It returns how many bytes it read (0: not
// a bare array, nothing read), the first headMax of them, how many ids it
// passed, and emit's error. BenchmarkRecipients went from 62 to 44 ns an
// id (server included).
func fastRecipients(br *bufio.Reader, headMax int, emit func(id []byte) error) (read int64, head []byte, ids int, err error) {
	b, _ := br.Peek(1)
	b, _ = br.Peek(br.Buffered())
	p := skipWS(b, 0)
	if p >= len(b) || b[p] != '[' {
		return 0, nil, 0, nil
	}
	p++
	commit := func() {
		if len(head) < headMax {
			head = append(head, b[:min(p, headMax-len(head))]...)
		}
		br.Discard(p)
		read += int64(p)
	}
	for {
		// An element, its comma and the next one's quote, all in b; more
		// is read when b ends before them.
		q := skipWS(b, p)
		end, ok := plainEnd(b, q)
		more := !ok && q < len(b) && end == len(b) || q == len(b)
		if ok {
			if n := end - q - 2; n == 0 || n > MaxUserIDBytes {
				break
			}
			c := skipWS(b, end)
			n := skipWS(b, c+1)
			switch {
			case c < len(b) && b[c] != ',', c+1 < len(b) && n < len(b) && b[n] != '"':
				// the last element, or not a string after it
			case n < len(b):
				if err := emit(b[q+1 : end-1]); err != nil {
					return read, head, ids, err
				}
				ids++
				p = c + 1
				continue
			default:
				more = true
			}
		}
		if !more {
			break
		}
		commit()
		left := len(b) - p
		if left >= br.Size() {
			return read, head, ids, nil // an element as long as the buffer
		}
		if b, _ = br.Peek(left + 1); len(b) <= left {
			return read, head, ids, nil // the end, or a failure the scanner reports
		}
		b, _ = br.Peek(br.Buffered())
		p = 0
	}
	commit()
	return read, head, ids, nil
}

// nextValue reads a next page: a cursor or link as cursor reads it, or an
// object holding one under href or url (as HAL has it).
func (s *scanner) nextValue() (string, error) {
	switch s.peek() {
	case 'f':
		return "", s.literal("false") // no next page
	case '{':
	default:
		return s.cursor()
	}
	var v string
	seen := false
	err := s.object(func(key []byte) error {
		if seen || !bytes.EqualFold(key, []byte("href")) && !bytes.EqualFold(key, []byte("url")) {
			return s.skip(1)
		}
		seen = true
		c, err := s.cursor()
		v = c
		return err
	})
	if err == nil && !seen {
		return "", errors.New("is an object without href or url, want a string")
	}
	return v, err
}

// pageCount reads a value that should be a whole non-negative number,
// given as a number or a numeric string; ok is false for anything else.
func (s *scanner) pageCount() (n int64, ok bool, err error) {
	v, ok, err := s.numeric()
	if err != nil || !ok || len(v) > 32 {
		return 0, false, err
	}
	n, perr := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	return n, perr == nil && n >= 0, nil
}

func (s *scanner) recipient(emit func([]byte) error) error {
	switch s.peek() {
	case '"':
		v, err := s.nextStr(MaxUserIDBytes)
		if errors.Is(err, errTooLong) {
			return fmt.Errorf("a user id longer than %d bytes", MaxUserIDBytes)
		}
		if err != nil {
			return err
		}
		if len(v) == 0 {
			return errors.New("empty user id")
		}
		return emit(v)
	case '{':
		var id []byte
		primary := false
		err := s.object(func(key []byte) error {
			isUserID := bytes.EqualFold(key, []byte("userId"))
			if !isUserID && (primary || !bytes.EqualFold(key, []byte("id"))) {
				return s.skip(1)
			}
			v, err := s.strMax(MaxUserIDBytes)
			if errors.Is(err, errTooLong) {
				err = fmt.Errorf("a user id longer than %d bytes", MaxUserIDBytes)
			}
			if err != nil {
				if isUserID {
					return fmt.Errorf("userId: %w", err)
				}
				return fmt.Errorf("id: %w", err)
			}
			id, primary = append(id[:0], v...), isUserID
			return nil
		})
		if err != nil {
			return err
		}
		if len(id) == 0 {
			return errors.New("an object without userId")
		}
		return emit(id)
	}
	return fmt.Errorf("is %s, want a string", s.kind())
}

// cursor reads a next cursor: a string, a number, or null (no next page).
func (s *scanner) cursor() (string, error) {
	switch c := s.peek(); {
	case s.null():
		return "", nil
	case c == '"':
		v, err := s.strMax(MaxCursorBytes)
		if errors.Is(err, errTooLong) {
			return "", fmt.Errorf("is longer than %d bytes: a cursor that grows with every page is refused", MaxCursorBytes)
		}
		return validUTF8(v), err
	case c == 't' || c == 'f':
		return "", errors.New("is a boolean, want a string")
	case c == '{' || c == '[':
		return "", fmt.Errorf("is %s, want a string", s.kind())
	}
	v, err := s.number()
	return string(v), err
}
