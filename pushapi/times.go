package pushapi

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The timestamps of an answer (unreachableSince): RFC 3339 and the forms
// around it, epoch seconds and milliseconds.

// epochMillisFrom is the magnitude from which an epoch number is taken
// for milliseconds rather than seconds.
const epochMillisFrom = 1e11

// timeOf reads a timestamp from the JSON value v (see strTime and
// epochTime); nil for null or a blank string.
func timeOf(v jsontext.Value, buf *[]byte) (*time.Time, error) {
	switch v.Kind() {
	case 'n':
		return nil, nil
	case '"':
		return strTime(unquoted(buf, v))
	case '0':
		return epochTime(v)
	}
	return nil, fmt.Errorf("not a time: %s", v.Kind())
}

// strTime reads the content of a timestamp string: RFC 3339 and the
// forms databases print, told apart from epoch seconds or milliseconds
// (see rfc3339ish); nil when blank.
func strTime(v []byte) (*time.Time, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, nil
	}
	if t, ok := rfc3339ish(v); ok {
		return &t, nil
	}
	return epochTime(v)
}

// rfc3339ish parses RFC 3339 (time.RFC3339Nano) and the forms around it
// a service may print: a space or a lower-case t between date and time,
// a lower-case z, and a numeric offset of hours only (+00, PostgreSQL's
// text form) or without a colon (+0000). A time without an offset is not
// read: its zone is not known.
func rfc3339ish(v []byte) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
		return t, true
	}
	// yyyy-mm-ddThh:mm:ss is 19 bytes; the offset is at least one.
	if len(v) < 20 || len(v) > 64 || v[4] != '-' || v[7] != '-' {
		return time.Time{}, false
	}
	var b [64]byte
	n := copy(b[:], v)
	s := b[:n]
	if c := s[10]; c == ' ' || c == 't' {
		s[10] = 'T'
	}
	if c := s[n-1]; c == 'z' {
		s[n-1] = 'Z'
	}
	// The offset: the last '+' or '-' after the time of day.
	if i := bytes.LastIndexAny(s[19:], "+-"); i >= 0 {
		i += 19
		off := s[i+1:]
		var fixed []byte
		switch {
		case len(off) == 2 && digits(off):
			fixed = append(append(s[:i+1:i+1], off...), ":00"...)
		case len(off) == 4 && digits(off):
			fixed = append(append(append(s[:i+1:i+1], off[:2]...), ':'), off[2:]...)
		}
		if fixed != nil {
			s = fixed
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	return t, err == nil
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// epochTime reads epoch seconds or milliseconds from the text of a number
// (or of a string that is not RFC 3339).
func epochTime(v []byte) (*time.Time, error) {
	n, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(n, 0) || math.Abs(n) > 1e15 {
		return nil, fmt.Errorf("neither RFC 3339 nor epoch seconds or milliseconds: %q", sanitize(string(v), 40))
	}
	// Seconds and milliseconds told apart by magnitude: 1e11 seconds is
	// the year 5138, 1e11 milliseconds is March 1973; a contact time is
	// between the two.
	ms := n
	if math.Abs(n) < epochMillisFrom {
		ms = n * 1000
	}
	t := time.UnixMilli(int64(ms)).UTC()
	return &t, nil
}
