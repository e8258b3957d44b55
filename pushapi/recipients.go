package pushapi

import (
	"bytes"
	"errors"
	"fmt"
)

// Bounds on what a recipients page may hold.
const (
	// MaxCursorBytes bounds a paging cursor: a service whose cursor grows
	// with every page is refused before it costs memory.
	MaxCursorBytes = 8 << 10
	// MaxUserIDBytes bounds one user id of the recipients list.
	MaxUserIDBytes = 64 << 10
)

// Keys of a recipients page object, matched without regard to case.
const (
	pageOther = iota
	pageList
	pageCursor
)

func pageKey(key []byte) int {
	for _, k := range [...]string{"userIds", "recipients", "data"} {
		if bytes.EqualFold(key, []byte(k)) {
			return pageList
		}
	}
	for _, k := range [...]string{"next", "nextCursor", "cursor"} {
		if bytes.EqualFold(key, []byte(k)) {
			return pageCursor
		}
	}
	return pageOther
}

// recipientsPage decodes one page of the recipient list from s: a bare
// array of user ids, or an object holding the list under userIds,
// recipients or data with an optional next cursor under next, nextCursor
// or cursor. Elements may be strings or objects with a userId (or id).
// Each id is passed to emit (the slice is valid during the call only);
// the next cursor is returned, "" on the last page. body is the start of
// the answer, for saying what it is when it is not JSON.
func (s *scanner) recipientsPage(emit func(id []byte) error) (cursor string, err error) {
	k := 0
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
			return "", err
		}
	case '{':
		found := false
		err := s.object(func(key []byte) error {
			switch pageKey(key) {
			case pageList:
				if found {
					return s.skip(1)
				}
				found = true
				return list()
			case pageCursor:
				c, err := s.cursor()
				if err != nil {
					return fmt.Errorf("the next cursor %w", err)
				}
				if c != "" {
					cursor = c
				}
				return nil
			}
			return s.skip(1)
		})
		if err != nil {
			return "", err
		}
		if !found {
			return "", errors.New(`the answer is an object without a user id list (userIds, recipients or data)`)
		}
	default:
		return "", notJSON(s, s.b, "an array or object")
	}
	if !s.eof() {
		return "", s.errorf("data after the recipient list")
	}
	return cursor, nil
}

func (s *scanner) recipient(emit func([]byte) error) error {
	switch s.peek() {
	case '"':
		v, err := s.strMax(MaxUserIDBytes)
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
