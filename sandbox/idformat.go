package sandbox

import (
	"errors"
	"strconv"
	"strings"
)

// idFormat is a user_range id format: a literal prefix, one decimal verb
// (%d, or %0Nd for zero padding to N digits) and a literal suffix. "%%"
// stands for a literal percent sign.
type idFormat struct {
	prefix, suffix string
	width          int // 0 for %d
}

var errIDFormat = errors.New(`must contain exactly one %d or %0Nd verb, such as "u%07d" (write %% for a literal percent sign)`)

func parseIDFormat(s string) (idFormat, error) {
	var f idFormat
	var lit strings.Builder
	verbs := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		i++
		if i < len(s) && s[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		zero := i < len(s) && s[i] == '0'
		if zero {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i >= len(s) || s[i] != 'd' || (start == i) == zero || i-start > 2 {
			// Not %d or %0Nd: another verb, space padding, or a bare %.
			return idFormat{}, errIDFormat
		}
		if start < i {
			f.width, _ = strconv.Atoi(s[start:i])
			if f.width > 18 {
				return idFormat{}, errIDFormat
			}
		}
		verbs++
		f.prefix = lit.String()
		lit.Reset()
	}
	if verbs != 1 {
		return idFormat{}, errIDFormat
	}
	f.suffix = lit.String()
	return f, nil
}

// appendID appends the id of index i.
func (f idFormat) appendID(b []byte, i int) []byte {
	b = append(b, f.prefix...)
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(i), 10)
	for n := len(d); n < f.width; n++ {
		b = append(b, '0')
	}
	b = append(b, d...)
	return append(b, f.suffix...)
}

func (f idFormat) id(i int) string { return string(f.appendID(nil, i)) }

// parse returns the index whose id is s, if s is an id of this format:
// exactly what appendID gives, so "u01" is no id of "u%d".
func (f idFormat) parse(s string) (int, bool) { return parseID(f, s) }

func parseID[T string | []byte](f idFormat, s T) (int, bool) {
	if len(s) <= len(f.prefix)+len(f.suffix) ||
		string(s[:len(f.prefix)]) != f.prefix || string(s[len(s)-len(f.suffix):]) != f.suffix {
		return 0, false
	}
	d := s[len(f.prefix) : len(s)-len(f.suffix)]
	if len(d) > 18 || len(d) < f.width || (len(d) > max(f.width, 1) && d[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// formatsOverlap reports an id that both a (indexes below na) and b
// (indexes below nb) give, if any. Formats whose literal parts cannot match
// are told apart at once; otherwise the smaller range is checked id by id.
func formatsOverlap(a idFormat, na int, b idFormat, nb int) (string, bool) {
	compatible := func(x, y string, has func(string, string) bool) bool { return has(x, y) || has(y, x) }
	if !compatible(a.prefix, b.prefix, strings.HasPrefix) || !compatible(a.suffix, b.suffix, strings.HasSuffix) {
		return "", false
	}
	if na > nb {
		a, na, b, nb = b, nb, a, na
	}
	var buf []byte
	for i := range na {
		buf = a.appendID(buf[:0], i)
		if j, ok := parseID(b, buf); ok && j < nb {
			return string(buf), true
		}
	}
	return "", false
}
