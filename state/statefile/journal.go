package statefile

// Journals: checksummed lines, a JSON header first, then entries as JSON
// (format 1) or the binary entry encoding (format 2, entry.go) escaped so
// a line is still a line.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"slices"
	"strconv"

	"pushform/state"
)

// JournalHeader is the first line of a journal: the snapshot it extends.
// A journal whose serial is older than the snapshot's was already folded
// into it (a crash between the snapshot rename and the journal removal).
type JournalHeader struct {
	Journal     int    `json:"journal"` // format version
	Lineage     string `json:"lineage"`
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment,omitempty"`
}

// JournalFormat is the journal format new journals are written in.
//
// Format 3 is format 2 with NUL bytes escaped too ("\\0"), so a line never
// holds one: a journal may then be written over a tail of zeros laid down
// ahead of it (see ReadJournalWith), which spares each fsync a metadata
// commit.
const JournalFormat = 3

// AppendJournalLine appends one journal line holding v as JSON: eight hex
// digits of the CRC-32C of the payload, a space, the payload, a newline.
// Headers and format-1 entries are written this way.
func AppendJournalLine(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return appendLine(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// AppendEntryLine appends entry e as a line of a journal of the given
// format.
func AppendEntryLine(dst []byte, e state.Entry, format int) ([]byte, error) {
	return AppendEntryLineReusing(dst, e, format, nil)
}

// AppendEntryLineReusing is AppendEntryLine, keeping the id lists of
// intents in r (when not nil) and copying them into the outcomes that
// name the same ones.
func AppendEntryLineReusing(dst []byte, e state.Entry, format int, r *IDReuse) ([]byte, error) {
	if format == 1 {
		return AppendJournalLine(dst, e)
	}
	start := len(dst)
	dst = appendEntry(append(dst, "00000000 "...), e, r)
	// Escaped in place from the first byte that needs it: most of an
	// entry is ids, and most entries hold no such byte.
	if i := escapeAt(dst[start+9:], format >= 3); i >= 0 {
		dst = escapeFrom(dst, start+9+i, format >= 3)
	}
	sum := crc32.Checksum(dst[start+9:], castagnoli)
	var hb [9]byte
	hex := strconv.AppendUint(hb[:0], uint64(sum)|1<<32, 16) // leading 1 keeps zeros
	copy(dst[start:start+8], hex[1:])
	return append(dst, '\n'), nil
}

// escapeFrom escapes '\n', '\\' and (with nul) NUL in dst from at on,
// where the first of them is, widening dst in place: the bytes to escape
// are found first, then the runs between them are moved back to front,
// each once (a format-3 line often needs an escape in its first bytes).
func escapeFrom(dst []byte, at int, nul bool) []byte {
	var buf [64]int
	pos := buf[:0]
	for p := at; ; {
		pos = append(pos, p)
		next := escapeAt(dst[p+1:], nul)
		if next < 0 {
			break
		}
		p += 1 + next
	}
	end := len(dst)
	dst = slices.Grow(dst, len(pos))[:end+len(pos)]
	for k := len(pos) - 1; k >= 0; k-- {
		p, next := pos[k], end
		if k+1 < len(pos) {
			next = pos[k+1]
		}
		copy(dst[p+k+2:next+k+1], dst[p+1:next]) // each byte after p moves k+1 on
		c := dst[p]
		dst[p+k] = '\\'
		switch c {
		case '\n':
			dst[p+k+1] = 'n'
		case 0:
			dst[p+k+1] = '0'
		default:
			dst[p+k+1] = '\\'
		}
	}
	return dst
}

// escapeAt is the offset of the first '\n' or '\\' in b, or of a NUL
// too when nul is set; -1 for none. It looks at eight bytes at a time
// (bytes.IndexAny goes byte by byte through a set, and took 1 ns a byte of
// every line apply writes).
func escapeAt(b []byte, nul bool) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	var nulMask uint64
	if nul {
		nulMask = high
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		nl, bs := w^(ones*'\n'), w^(ones*'\\')
		// The lowest marked byte is exact (a borrow only marks bytes
		// above a match).
		if m := ((nl-ones)&^nl | (bs-ones)&^bs | (w-ones)&^w&nulMask) & high; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\n' || c == '\\' || c == 0 && nul {
			return i
		}
	}
	return -1
}

func appendLine(dst, payload []byte) []byte {
	dst = fmt.Appendf(dst, "%08x ", crc32.Checksum(payload, castagnoli))
	dst = append(dst, payload...)
	return append(dst, '\n')
}

// unescapeLine undoes the escaping of a format-2 or format-3 entry line
// (no format-2 line holds "\\0").
func unescapeLine(p []byte) ([]byte, error) {
	if bytes.IndexByte(p, '\\') < 0 {
		return p, nil
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			i++
			if i == len(p) {
				return nil, errors.New("dangling escape")
			}
			switch p[i] {
			case 'n':
				c = '\n'
			case '\\':
				c = '\\'
			case '0':
				c = 0
			default:
				return nil, fmt.Errorf("bad escape \\%c", p[i])
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// decodeEntry decodes the payload of one journal entry line.
func decodeEntry(payload []byte, format int) (state.Entry, error) {
	var e state.Entry
	if format == 1 {
		err := json.Unmarshal(payload, &e)
		return e, err
	}
	raw, err := unescapeLine(payload)
	if err != nil {
		return e, err
	}
	return DecodeEntry(raw)
}

// checkLine returns the payload of a whole, intact journal line.
func checkLine(line []byte) ([]byte, bool) {
	if len(line) < 10 || line[8] != ' ' || line[len(line)-1] != '\n' {
		return nil, false
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return nil, false
	}
	payload := line[9 : len(line)-1]
	return payload, crc32.Checksum(payload, castagnoli) == uint32(sum)
}

// JournalLineError is a complete journal line (it ends with a newline, so
// its write finished and may have been acknowledged) that cannot be used:
// its checksum does not match, or it does not decode. The records from it
// on are in doubt; those before it are intact.
type JournalLineError struct {
	// Line is its number, from 1; Lines the number of complete lines in
	// the journal.
	Line, Lines int
	// Offset is where it starts: the length of the intact prefix.
	Offset int64
	// Reason says what is wrong with it.
	Reason string
}

func (e *JournalLineError) Error() string {
	if e.Line == e.Lines {
		return fmt.Sprintf("line %d, its last, is corrupt (%s)", e.Line, e.Reason)
	}
	return fmt.Sprintf("line %d of %d is corrupt (%s)", e.Line, e.Lines, e.Reason)
}

// ReadJournal reads a journal, calling fn for each entry in order. valid is
// the length of the intact prefix. A last line without its newline is a
// write torn by a crash: it was never acknowledged, and is ignored. A
// complete line that fails its checksum or does not decode, wherever it
// is, is a *JournalLineError; a header of a newer format a
// *NewerFormatError. A journal without an intact header has no entries.
// A format-3 journal ends at the first NUL byte (written over zeros laid
// down ahead, its lines hold none), torn line or not, when only zeros
// follow; data after them is a *JournalLineError.
func ReadJournal(r io.Reader, fn func(state.Entry) error) (h JournalHeader, valid int64, err error) {
	return ReadJournalWith(r, nil, fn)
}

// ReadJournalWith is ReadJournal calling header (when not nil) with the
// journal's header before any entry, so a reader can check which snapshot
// the journal extends and then fold each entry as it is read, never
// holding them all; an error from header stops the read and is returned.
func ReadJournalWith(r io.Reader, header func(JournalHeader) error, fn func(state.Entry) error) (h JournalHeader, valid int64, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	for n := 1; ; n++ {
		line, rerr := readLine(br)
		if rerr != nil && rerr != io.EOF {
			return h, valid, rerr
		}
		if len(line) == 0 {
			return h, valid, nil
		}
		bad := func(reason string) error {
			e := &JournalLineError{Line: n, Lines: n, Offset: valid, Reason: reason}
			for {
				rest, rerr := readLine(br)
				if len(rest) > 0 && rest[len(rest)-1] == '\n' {
					e.Lines++
				}
				if rerr != nil {
					return e
				}
			}
		}
		if i := bytes.IndexByte(line, 0); i >= 0 && zeroEnded(h) {
			// No header and no format-3 line holds a NUL: this is where
			// the zeros laid down ahead of the writes start, and the
			// journal ends, after a torn write or none. Zeros must be all
			// that follows: data after them is a gap in the journal.
			if nonzero, err := zeroTail(line[i:], br); err != nil {
				return h, valid, err
			} else if nonzero {
				return h, valid, bad("zero bytes where a line should be, with data after them")
			}
			return h, valid, nil
		}
		if line[len(line)-1] != '\n' {
			return h, valid, nil // torn: the write never finished
		}
		payload, ok := checkLine(line)
		if !ok {
			return h, valid, bad("checksum mismatch")
		}
		if n == 1 {
			if err := json.Unmarshal(payload, &h); err != nil || h.Journal <= 0 {
				return JournalHeader{}, 0, bad("not a journal header")
			}
			if h.Journal > JournalFormat {
				return JournalHeader{}, 0, &NewerFormatError{What: "journal", Format: h.Journal, Newest: JournalFormat}
			}
			if header != nil {
				if err := header(h); err != nil {
					return h, valid, err
				}
			}
		} else {
			e, err := decodeEntry(payload, h.Journal)
			if err != nil {
				return h, valid, bad("it does not decode: " + err.Error())
			}
			if err := fn(e); err != nil {
				return h, valid, fmt.Errorf("line %d: %w", n, err)
			}
		}
		valid += int64(len(line))
	}
}

// zeroEnded reports whether a journal with header h (zero while none is
// read) may end in zeros laid down ahead: a NUL is never part of its
// header or, from format 3 on, of a line.
func zeroEnded(h JournalHeader) bool { return h.Journal == 0 || h.Journal >= 3 }

// zeroTail reports whether b or anything left in br is not a zero byte.
func zeroTail(b []byte, br *bufio.Reader) (nonzero bool, err error) {
	for {
		if len(bytes.TrimLeft(b, "\x00")) > 0 {
			return true, nil
		}
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err == io.EOF {
				return false, nil
			} else if err != nil {
				return false, err
			}
		}
		b, _ = br.Peek(br.Buffered())
		br.Discard(len(b))
	}
}

// readLine reads up to and including the next newline, however long the
// line; at the end of the input it returns what is left with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	long := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// DroppedLine is a journal line after its intact prefix, read as far as
// it can be: what cutting the journal there would lose.
type DroppedLine struct {
	// Line is its number, from 1.
	Line int
	// Entry is its entry when it decodes (its checksum may still fail);
	// nil otherwise, and for a header.
	Entry *state.Entry
	// Header is set when it is the journal's header line and reads as one.
	Header bool
	// Verified is set when its checksum matches.
	Verified bool
	// Torn is set on a last line without its newline: a write that never
	// finished, so never acknowledged.
	Torn bool
	// Bytes is the line as it is in the journal.
	Bytes []byte
}

// Readable reports whether the line's content is known.
func (d DroppedLine) Readable() bool { return d.Entry != nil || d.Header }

// ScanJournal reads a whole journal: its header, the length of the intact
// prefix, the first unusable line (a *JournalLineError, or a
// *NewerFormatError for a journal of a newer format, with nothing dropped)
// and every line after the prefix, decoded as far as possible.
func ScanJournal(data []byte) (h JournalHeader, valid int64, bad error, dropped []DroppedLine) {
	h, valid, bad = ReadJournal(bytes.NewReader(data), func(state.Entry) error { return nil })
	var nf *NewerFormatError
	if errors.As(bad, &nf) {
		return h, valid, bad, nil
	}
	n := bytes.Count(data[:valid], []byte("\n"))
	formats := []int{h.Journal}
	if h.Journal == 0 {
		formats = []int{JournalFormat, 1} // the header is among the dropped
	}
	rest := data[valid:]
	if zeroEnded(h) {
		rest = bytes.TrimRight(rest, "\x00") // laid down ahead of the writes: never a line
	}
	for len(rest) > 0 {
		n++
		end := bytes.IndexByte(rest, '\n') + 1
		d := DroppedLine{Line: n}
		if end == 0 {
			end, d.Torn = len(rest), true
		}
		d.Bytes = rest[:end]
		rest = rest[end:]
		payload, ok := checkLine(d.Bytes)
		d.Verified = ok
		if !ok && len(d.Bytes) > 9 && d.Bytes[8] == ' ' {
			payload = bytes.TrimSuffix(d.Bytes[9:], []byte("\n"))
		}
		if payload != nil {
			var jh JournalHeader
			if n == 1 && json.Unmarshal(payload, &jh) == nil && jh.Journal > 0 {
				d.Header = true
			} else {
				for _, f := range formats {
					if e, err := decodeEntry(payload, f); err == nil {
						d.Entry = &e
						break
					}
				}
			}
		}
		dropped = append(dropped, d)
	}
	return h, valid, bad, dropped
}

// JournalFormatOf returns the format of the journal whose start is given,
// or 0 when it has no intact header.
func JournalFormatOf(start []byte) int {
	nl := bytes.IndexByte(start, '\n')
	if nl < 0 {
		return 0
	}
	payload, ok := checkLine(start[:nl+1])
	var h JournalHeader
	if !ok || json.Unmarshal(payload, &h) != nil {
		return 0
	}
	return h.Journal
}
