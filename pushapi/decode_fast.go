package pushapi

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The fast path. A service answers every entry in a few shapes, such as
// {"userId":"u0000001","status":"delivered","deviceCount":1}: keys in
// the spec's spelling, once each, plain ASCII strings, small counts.
// Reading those straight from the bytes costs a fraction of the
// tokenizer's way. An entry of any other shape is read by the general
// decoder (scanner.entry) from its start; anything else in the answer,
// and any error, sends the whole answer to the general path, so what is
// accepted and refused, and the errors, stay the general path's.

// fast reads a whole answer, {"results":[...]} or [...] of at least one
// and at most rd.most entries, that the general path reads without error.
// False leaves rd to be reset and the answer to the general path.
func (rd *resultsReader) fast(b []byte) bool {
	p := skipWS(b, 0)
	if p >= len(b) {
		return false
	}
	ok := false
	if b[p] != '{' {
		p, ok = rd.fastArray(b, p)
	} else {
		const key = `"results"`
		p = skipWS(b, p+1)
		if !bytes.HasPrefix(b[p:], []byte(key)) {
			return false
		}
		if p = skipWS(b, p+len(key)); p >= len(b) || b[p] != ':' {
			return false
		}
		if p, ok = rd.fastArray(b, skipWS(b, p+1)); ok {
			p = skipWS(b, p)
			ok = p < len(b) && b[p] == '}'
			p++
		}
	}
	return ok && skipWS(b, p) == len(b)
}

// fastArray reads the results array at b[p] and returns the offset past it.
func (rd *resultsReader) fastArray(b []byte, p int) (int, bool) {
	if p >= len(b) || b[p] != '[' {
		return 0, false
	}
	for {
		p = skipWS(b, p+1) // past '[' or ','
		if p >= len(b) || b[p] != '{' || rd.n >= rd.most {
			return 0, false // [] and too many entries: the general path's cases
		}
		e, exp, count := rd.slot()
		q, ok := fastDelivered(b, p, e, exp, count)
		if !ok {
			q, ok = fastEntry(b, p, e, exp, count)
		}
		if !ok {
			// An answer mostly of other shapes is the general path's
			// from the start: it reads them for less.
			if rd.slow++; rd.slow > 4 && rd.slow*4 > rd.n {
				return 0, false
			}
			*e.Result = Result{}
			*e = entry{Result: e.Result}
			if q, ok = rd.generalEntry(b, p, e, exp, count); !ok {
				return 0, false
			}
		}
		rd.done(e)
		if p = skipWS(b, q); p >= len(b) {
			return 0, false
		}
		switch b[p] {
		case ']':
			return p + 1, true
		case ',':
		default:
			return 0, false
		}
	}
}

// generalEntry reads the entry at b[p] with the general decoder and
// returns the offset past it; false on an error, which the general path
// is to report (at its offset in the answer).
func (rd *resultsReader) generalEntry(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	if rd.sub == nil {
		rd.sub = newScanner(b[p:])
	} else {
		rd.in = *bytes.NewBuffer(b[p:])
		rd.sub.reset(&rd.in)
	}
	if rd.sub.entry(e, exp, count) != nil {
		return 0, false
	}
	return p + int(rd.sub.dec.InputOffset()), true
}

// fastEntry reads the entry at b[p] ('{') as scanner.entry would when it
// has a common shape, and returns the offset past it; false (e then holds
// anything) for any other. count must not be nil.
func fastEntry(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	r := e.Result
	var seen uint16 // keys read: a repeated one is the general path's
	var outcome Outcome
	hasOutcome := false
	p = skipWS(b, p+1)
	for {
		id, q := fastKey(b, p)
		if id == keyOther || seen&(1<<id) != 0 {
			return 0, false
		}
		if p = skipWS(b, q); p >= len(b) || b[p] != ':' {
			return 0, false
		}
		p = skipWS(b, p+1)
		var ok bool
		seen |= 1 << id
		var v []byte
		switch id {
		case keyDeviceCount:
			if v, p, ok = plainUint(b, p); !ok || len(v) > 9 {
				return 0, false
			}
			*count, _ = smallUint(v)
			r.DeviceCount = count
		case keyUnreachableSince:
			if v, q, ok = plainStr(b, p); ok {
				t, err := strTime(v)
				if err != nil {
					return 0, false
				}
				r.UnreachableSince, p = t, q
			} else if v, q, ok = plainUint(b, p); ok && len(v) <= 20 {
				t, err := epochTime(v)
				if err != nil {
					return 0, false
				}
				r.UnreachableSince, p = t, q
			} else {
				return 0, false
			}
		default:
			if v, p, ok = plainStr(b, p); !ok {
				return 0, false
			}
			switch id {
			case keyUserID:
				r.UserID, e.echo = echoOf(v, exp, 'u'), e.echo|echoUser
			case keyDeviceID:
				r.DeviceID, e.echo = echoOf(v, exp, 'd'), e.echo|echoDevice
			case keyOutcome:
				if outcome, ok = parseOutcome(v); !ok {
					return 0, false
				}
				hasOutcome = true
			case keyReason:
				r.Reason, e.reasonFirst = strText(v), r.Message == ""
			case keyMessage:
				r.Message = strText(v)
			}
		}
		if p = skipWS(b, p); p >= len(b) {
			return 0, false
		}
		if b[p] == '}' {
			p++
			break
		}
		if b[p] != ',' {
			return 0, false
		}
		p = skipWS(b, p+1)
	}
	if !hasOutcome {
		var err error
		if outcome, err = inferOutcome(r, false); err != nil {
			return 0, false
		}
	}
	r.Outcome = outcome
	return p, true
}

// fastDelivered reads the entry at b[p] as fastEntry would when it is the
// commonest one, byte for byte: {"userId":"<the id expected>","status":
// "delivered","deviceCount":<n>}, no white space. Matched whole, it needs
// no key lookups: 15 ns an entry instead of fastEntry's 55 (a million
// results are a million of these). False, with e untouched, for any other.
func fastDelivered(b []byte, p int, e *entry, exp *target, count *int) (int, bool) {
	const head, tail = `{"userId":`, `,"status":"delivered","deviceCount":`
	if exp == nil || exp.kind != 'u' || len(b)-p < len(head)+len(exp.id)+2+len(tail) || string(b[p:p+len(head)]) != head {
		return 0, false
	}
	id, q, ok := plainStr(b, p+len(head))
	if !ok || string(id) != exp.id || len(b)-q < len(tail) || string(b[q:q+len(tail)]) != tail {
		return 0, false
	}
	v, q, ok := plainUint(b, q+len(tail))
	if !ok || len(v) > 9 || b[q] != '}' {
		return 0, false
	}
	*count, _ = smallUint(v)
	r := e.Result
	r.UserID, r.Outcome, r.DeviceCount = exp.id, OutcomeDelivered, count
	e.echo |= echoUser
	return q + 1, true
}

// fastKey is the key at b[p] when it is in the spec's spelling, and the
// offset past it; keyOther for any other, which the general decoder reads.
// Compared quoted, a match holds no escape.
func fastKey(b []byte, p int) (int, int) {
	b = b[p:]
	is := func(quoted string) bool { return len(b) >= len(quoted) && string(b[:len(quoted)]) == quoted }
	switch {
	case is(`"userId"`):
		return keyUserID, p + len(`"userId"`)
	case is(`"status"`):
		return keyOutcome, p + len(`"status"`)
	case is(`"deviceCount"`):
		return keyDeviceCount, p + len(`"deviceCount"`)
	case is(`"reason"`):
		return keyReason, p + len(`"reason"`)
	case is(`"message"`):
		return keyMessage, p + len(`"message"`)
	case is(`"deviceId"`):
		return keyDeviceID, p + len(`"deviceId"`)
	case is(`"unreachableSince"`):
		return keyUnreachableSince, p + len(`"unreachableSince"`)
	}
	return keyOther, 0
}

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
// plain, len(b) when b ends first, or p when b[p] is not '"'.
func plainEnd(b []byte, p int) (int, bool) {
	if p >= len(b) || b[p] != '"' {
		return p, false
	}
	i := p + 1
	for ; i+8 <= len(b); i += 8 {
		if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			if b[i] == '"' {
				return i + 1, true
			}
			return i, false
		}
	}
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
