package statefile

// Every byte format of the file backend is encoded and decoded here.
//
// Snapshot, format 5: one JSON header line ({"version":5,"lineage":...}),
// a binary body, the CRC-32C of the header line and the body (4 bytes,
// little endian) and snapshotTrailer. The body is columnar per message so
// a million targets cost a few bytes each: a string table (fingerprints,
// request ids, reasons, messages), the distinct outcome records, the
// target ids sorted and front-coded, and runs of (record, count) over
// those ids. Format 5 adds the ledger after the messages (see
// encoder.ledger): entries shaped like messages, each with the time it
// was forgotten, the fingerprints its records hold and its targets as a
// section of known length that a reader decodes only when asked (so a
// plan never decodes a forgotten campaign it does not need). Format 4 is
// format 3 with the header under the checksum, so
// an edited serial or lineage is refused; format 3 added to format 2 each
// record's unanswered count and each message's earlier tags. Formats 3, 2
// and 1 (one plain JSON object) are still read; the next write migrates
// them.
//
// Journal: checksummed lines. The first is a JSON header naming the
// snapshot the journal extends and its format; entries follow, as JSON in
// format 1 and, in format 2, as the binary entry encoding with '\n' and
// '\\' escaped, so a line is still a line. A move entry (type 4) adds
// each item's new address after the item; journals without moves read as
// before.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"maps"
	"math"
	"os"
	"pushform/message"
	"pushform/state"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Header is the part of a snapshot that Persist and Append need; it is
// written first so it can be read without decoding every target.
type Header struct {
	Version     int    `json:"version"`
	Lineage     string `json:"lineage"`
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment"`
}

// snapshotTrailer ends every snapshot of format 2 and later, after the
// body's checksum.
const snapshotTrailer = "\n# end of pushform state\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode writes s as a snapshot of format state.FormatVersion.
func Encode(w io.Writer, s *state.State) error {
	return encode(w, s, state.FormatVersion)
}

// encode writes s as a snapshot of format version (2 to 5; tests write
// older ones to check they are still read).
func encode(w io.Writer, s *state.State, version int) error {
	hdr, err := json.Marshal(Header{Version: version, Lineage: s.Lineage, Serial: s.Serial, Environment: s.Environment})
	if err != nil {
		return err
	}
	hdr = append(hdr, '\n')
	e := encoder{snapshot: version}
	e.b = make([]byte, 0, 64<<10)
	e.stateBody(s)
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], snapshotSum(version, hdr, e.b))
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(hdr)
	bw.Write(e.b)
	bw.Write(sum[:])
	bw.WriteString(snapshotTrailer)
	return bw.Flush()
}

// snapshotSum is the checksum a snapshot of format version stores: from
// format 4 on it covers the header line (newline included) too.
func snapshotSum(version int, hdrLine, body []byte) uint32 {
	if version < 4 {
		return crc32.Checksum(body, castagnoli)
	}
	return crc32.Update(crc32.Checksum(hdrLine, castagnoli), castagnoli, body)
}

// NewerFormatError is a file written by a newer pushform: not damaged,
// only not readable by this one.
type NewerFormatError struct {
	// What is "state" (a snapshot) or "journal".
	What string
	// Format is the file's format; Newest the newest this pushform reads.
	Format, Newest int
}

func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("written by a newer pushform (%s format %d; this pushform reads formats 1 to %d): upgrade pushform to use it", e.What, e.Format, e.Newest)
}

// Decode reads a snapshot of format 1 to 4 and checks it is whole and
// usable: decoders see files damaged by crashes, disks and people. A
// snapshot of a newer format is a *NewerFormatError.
func Decode(r io.Reader) (*state.State, error) {
	return decode(r, false)
}

// DecodeCompact is Decode returning a compact state (state.State.Compact):
// the targets of each message are held sorted in a table, never in a map,
// which is what plan and apply need at millions of targets.
func DecodeCompact(r io.Reader) (*state.State, error) {
	return decode(r, true)
}

func decode(r io.Reader, compact bool) (*state.State, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file")
	}
	var s *state.State
	if h, hdrLine, body, ok := splitV2(data); ok {
		s, err = decodeStateV2(h, hdrLine, body, compact)
	} else {
		s, err = decodeStateV1(data)
	}
	if err != nil {
		return nil, err
	}
	if err := checkVersion(s.Version); err != nil {
		return nil, err
	}
	if s.Lineage == "" {
		return nil, errors.New("no lineage")
	}
	s.Compact = compact
	return s, nil
}

// readAll reads r whole, into one buffer of the right size when r can say
// its size (a file): a snapshot of ten million targets is tens of MiB.
func readAll(r io.Reader) ([]byte, error) {
	size := int64(-1)
	switch f := r.(type) {
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	case interface{ Size() int64 }: // a bytes.Reader, as pg's snapshot is read
		size = f.Size()
	}
	if size > 0 {
		buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
		_, err := buf.ReadFrom(r)
		return buf.Bytes(), err
	}
	return io.ReadAll(r)
}

// splitV2 recognises a snapshot of format 2 or later by its short JSON
// header line, which it returns with its newline, and the rest.
func splitV2(data []byte) (h Header, hdrLine, rest []byte, ok bool) {
	nl := bytes.IndexByte(data[:min(len(data), 4096)], '\n')
	if nl < 0 || json.Unmarshal(data[:nl], &h) != nil || h.Version < 2 {
		return h, nil, nil, false
	}
	return h, data[:nl+1], data[nl+1:], true
}

func decodeStateV1(data []byte) (*state.State, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var s state.State
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the state object")
	}
	if s.Version != 1 {
		if err := checkVersion(s.Version); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("format version %d is not plain JSON", s.Version)
	}
	if s.Messages == nil {
		s.Messages = map[string]*state.Message{}
	}
	for addr, m := range s.Messages {
		if m == nil {
			return nil, fmt.Errorf("message %q is null", addr)
		}
		m.Address = addr
		if m.Targets == nil {
			m.Targets = map[string]*state.Target{}
		}
		for id, t := range m.Targets {
			if t == nil {
				return nil, fmt.Errorf("target %q of %q is null", id, addr)
			}
		}
	}
	return &s, nil
}

func decodeStateV2(h Header, hdrLine, body []byte, compact bool) (*state.State, error) {
	if err := checkVersion(h.Version); err != nil {
		return nil, err
	}
	if len(body) < 4+len(snapshotTrailer) || !bytes.HasSuffix(body, []byte(snapshotTrailer)) {
		return nil, errors.New("truncated (no end marker)")
	}
	body = body[:len(body)-len(snapshotTrailer)]
	sum := binary.LittleEndian.Uint32(body[len(body)-4:])
	body = body[:len(body)-4]
	if snapshotSum(h.Version, hdrLine, body) != sum {
		if h.Version >= 4 {
			return nil, errors.New("checksum mismatch (the header, with serial and lineage, or the body was changed)")
		}
		return nil, errors.New("checksum mismatch")
	}
	s := &state.State{Version: h.Version, Lineage: h.Lineage, Serial: h.Serial, Environment: h.Environment}
	d := decoder{b: body, snapshot: h.Version, compact: compact}
	d.stateBody(s)
	if d.err == nil && d.off != len(d.b) {
		d.fail("unexpected data after the state")
	}
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

func checkVersion(v int) error {
	switch {
	case v < 1:
		return fmt.Errorf("missing or invalid format version %d", v)
	case v > state.FormatVersion:
		return &NewerFormatError{What: "state", Format: v, Newest: state.FormatVersion}
	}
	return nil
}

// DecodeHeader reads the header fields of a snapshot, stopping as soon
// as it has them (they come first in files Encode wrote).
func DecodeHeader(r io.Reader) (Header, error) {
	var h Header
	dec := json.NewDecoder(bufio.NewReader(r))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, errors.New("not a JSON object")
	}
	seen := 0
	for seen < 4 && dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, err
		}
		var dst any
		switch t {
		case "version":
			dst = &h.Version
		case "lineage":
			dst = &h.Lineage
		case "serial":
			dst = &h.Serial
		case "environment":
			dst = &h.Environment
		default:
			dst = new(json.RawMessage)
			seen-- // not a header field
		}
		if err := dec.Decode(dst); err != nil {
			return h, fmt.Errorf("field %v: %w", t, err)
		}
		seen++
	}
	if err := checkVersion(h.Version); err != nil {
		return h, err
	}
	if h.Lineage == "" {
		return h, errors.New("no lineage")
	}
	return h, nil
}

// CheckEnd cheaply checks that a snapshot of the given size was not
// truncated, without decoding it: format 2 ends with snapshotTrailer, a
// format-1 JSON state with a closing brace.
func CheckEnd(r io.ReaderAt, size int64) error {
	end := make([]byte, min(size, 64))
	if _, err := r.ReadAt(end, size-int64(len(end))); err != nil {
		return err
	}
	if bytes.HasSuffix(end, []byte(snapshotTrailer)) {
		return nil
	}
	end = bytes.TrimRight(end, " \t\r\n")
	if len(end) == 0 || end[len(end)-1] != '}' {
		return errors.New("truncated (it does not end with a closing brace or the end marker)")
	}
	return nil
}

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
const JournalFormat = 2

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
	if format == 1 {
		return AppendJournalLine(dst, e)
	}
	var enc encoder
	enc.entry(e)
	start := len(dst)
	dst = append(dst, "00000000 "...)
	for _, c := range enc.b {
		switch c {
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\\':
			dst = append(dst, '\\', '\\')
		default:
			dst = append(dst, c)
		}
	}
	sum := crc32.Checksum(dst[start+9:], castagnoli)
	hex := strconv.AppendUint(nil, uint64(sum)|1<<32, 16) // leading 1 keeps zeros
	copy(dst[start:start+8], hex[1:])
	return append(dst, '\n'), nil
}

func appendLine(dst, payload []byte) []byte {
	dst = fmt.Appendf(dst, "%08x ", crc32.Checksum(payload, castagnoli))
	dst = append(dst, payload...)
	return append(dst, '\n')
}

// unescapeLine undoes the escaping of a format-2 entry line.
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
			default:
				return nil, fmt.Errorf("bad escape \\%c", p[i])
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// AppendEntry appends the binary encoding of e to dst: the payload of a
// format-2 journal line before its escaping, for backends that store each
// entry as a record of its own.
func AppendEntry(dst []byte, e state.Entry) []byte {
	enc := encoder{b: dst}
	enc.entry(e)
	return enc.b
}

// DecodeEntry decodes one entry that AppendEntry encoded.
func DecodeEntry(b []byte) (state.Entry, error) {
	d := decoder{b: b}
	e := d.entry()
	if d.err == nil && d.off != len(d.b) {
		d.fail("unexpected data after the entry")
	}
	return e, d.err
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
		if line[len(line)-1] != '\n' {
			return h, valid, nil // torn: the write never finished
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
	for rest := data[valid:]; len(rest) > 0; {
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

// The binary encoding.

// encoder appends the binary encoding to b.
type encoder struct {
	b []byte
	// snapshot is the format of the snapshot body being written; 0 for a
	// journal entry. From 3 on, outcome records carry Unanswered (journal
	// entries leave it to ApplyEntry) and messages their earlier tags.
	snapshot int
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

func (e *encoder) boolean(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// time keeps the instant and the zone offset; a zero offset reads back as
// UTC.
func (e *encoder) time(t time.Time) {
	_, off := t.Zone()
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
	e.varint(int64(off))
}

// ids front-codes a list: per id the length of the prefix it shares with
// the previous one and the rest. Prefix and rest lengths below 15 and 16
// share one byte; 0xff escapes to two varints.
func (e *encoder) ids(ids []string) {
	e.idSeq(len(ids), slices.Values(ids))
}

// idSeq is ids for the n ids of seq.
func (e *encoder) idSeq(n int, seq iter.Seq[string]) {
	e.uvarint(uint64(n))
	prev := ""
	for id := range seq {
		p := 0
		for p < len(prev) && p < len(id) && prev[p] == id[p] {
			p++
		}
		s := len(id) - p
		if p < 15 && s < 16 {
			e.b = append(e.b, byte(p<<4|s))
		} else {
			e.b = append(e.b, 0xff)
			e.uvarint(uint64(p))
			e.uvarint(uint64(s))
		}
		e.b = append(e.b, id[p:]...)
		prev = id
	}
}

func (e *encoder) content(c message.Content) {
	e.str(c.Title)
	e.str(c.Body)
	e.str(c.OpenToURL)
	e.str(c.Tag)
	e.boolean(c.SilentInForeground)
	e.boolean(c.BadgeCount != nil)
	if c.BadgeCount != nil {
		e.varint(int64(*c.BadgeCount))
	}
}

// Outcome codes; outcomeOther is followed by the outcome as a string.
const (
	outcomeDelivered byte = iota
	outcomeSkipped
	outcomeFailed
	outcomeUnknown
	outcomeNone // the empty outcome
	outcomeOther
)

// recordKey identifies a distinct outcome record (Target holds a pointer).
type recordKey struct {
	t        state.Target
	hasSince bool
	since    time.Time
}

func keyOf(t state.Target) recordKey {
	k := recordKey{t: t}
	if t.UnreachableSince != nil {
		k.hasSince, k.since = true, *t.UnreachableSince
		k.t.UnreachableSince = nil
	}
	return k
}

// outcomes encodes targets[i] for i in order as a string table, the
// distinct records and runs of record indexes. It returns the distinct
// records. Targets that share one record (the same pointer) are one run
// without comparing the records.
func (e *encoder) outcomes(n int, target func(i int) *state.Target) []state.Target {
	return e.outcomeSeq(func(yield func(*state.Target) bool) {
		for i := range n {
			if !yield(target(i)) {
				return
			}
		}
	})
}

// outcomeSeq is outcomes for the targets of seq, in order.
func (e *encoder) outcomeSeq(seq iter.Seq[*state.Target]) []state.Target {
	strs := map[string]uint64{"": 0}
	var strList []string
	idx := func(s string) uint64 {
		i, ok := strs[s]
		if !ok {
			i = uint64(len(strs))
			strs[s] = i
			strList = append(strList, s)
		}
		return i
	}
	recs := map[recordKey]uint64{}
	var recList []state.Target
	type run struct{ rec, n uint64 }
	var runs []run
	var prev state.Target
	var prevPtr *state.Target
	var prevRec uint64
	i := -1
	for p := range seq {
		i++
		if i > 0 && p == prevPtr {
			runs[len(runs)-1].n++
			continue
		}
		prevPtr = p
		t := *p
		rec := prevRec
		if i == 0 || t != prev {
			k := keyOf(t)
			var ok bool
			if rec, ok = recs[k]; !ok {
				rec = uint64(len(recList))
				recs[k] = rec
				recList = append(recList, t)
				idx(t.Fingerprint)
				idx(t.RequestID)
				idx(t.Reason)
				idx(t.Message)
				if outcomeCode(t.Outcome) == outcomeOther {
					idx(string(t.Outcome))
				}
			}
			prev, prevRec = t, rec
		}
		if len(runs) > 0 && runs[len(runs)-1].rec == rec {
			runs[len(runs)-1].n++
		} else {
			runs = append(runs, run{rec, 1})
		}
	}
	e.uvarint(uint64(len(strList)))
	for _, s := range strList {
		e.str(s)
	}
	e.uvarint(uint64(len(recList)))
	for _, t := range recList {
		c := outcomeCode(t.Outcome)
		e.b = append(e.b, c)
		if c == outcomeOther {
			e.uvarint(strs[string(t.Outcome)])
		}
		e.uvarint(strs[t.Fingerprint])
		e.uvarint(strs[t.RequestID])
		e.time(t.Time)
		e.varint(int64(t.DeviceCount))
		e.uvarint(strs[t.Reason])
		e.uvarint(strs[t.Message])
		e.boolean(t.UnreachableSince != nil)
		if t.UnreachableSince != nil {
			e.time(*t.UnreachableSince)
		}
		if e.snapshot >= 3 {
			e.uvarint(uint64(max(t.Unanswered, 0)))
		}
	}
	e.uvarint(uint64(len(runs)))
	for _, r := range runs {
		e.uvarint(r.rec)
		e.uvarint(r.n)
	}
	return recList
}

func outcomeCode(o state.Outcome) byte {
	switch o {
	case state.Delivered:
		return outcomeDelivered
	case state.Skipped:
		return outcomeSkipped
	case state.Failed:
		return outcomeFailed
	case state.Unknown:
		return outcomeUnknown
	case "":
		return outcomeNone
	}
	return outcomeOther
}

func (e *encoder) stateBody(s *state.State) {
	if s.Recipients == nil {
		e.b = append(e.b, 0)
	} else {
		e.b = append(e.b, 1)
		e.time(s.Recipients.FetchedAt)
		e.boolean(s.Recipients.UserIDs != nil)
		e.ids(s.Recipients.UserIDs)
	}
	addrs := s.Addresses()
	e.uvarint(uint64(len(addrs)))
	for _, a := range addrs {
		m := s.Messages[a]
		e.str(a)
		if m == nil {
			m = &state.Message{}
		}
		e.str(string(m.Kind))
		e.str(string(m.TargetKind))
		e.str(m.Fingerprint)
		e.content(m.Content)
		// A compact message yields its targets in order, without
		// gathering them into one list.
		n, all := m.TargetCount(), m.AllTargets()
		if !m.Compact() {
			ids, targets := m.SortedTargets()
			all = func(yield func(string, *state.Target) bool) {
				for i, id := range ids {
					if !yield(id, targets[i]) {
						return
					}
				}
			}
		}
		e.idSeq(n, func(yield func(string) bool) {
			for id := range all {
				if !yield(id) {
					return
				}
			}
		})
		recs := e.outcomeSeq(func(yield func(*state.Target) bool) {
			for _, t := range all {
				if !yield(t) {
					return
				}
			}
		})
		if e.snapshot >= 3 {
			e.earlierTags(m, recs)
		}
	}
	if e.snapshot >= 5 {
		e.ledger(s)
	}
}

// ledger writes the ledger entries. Their target ids come first, as a
// table of distinct lists (campaigns to one recipients list share one),
// each front-coded with its count and prefixed by its length in bytes;
// then the entries: address, kind, target kind, fingerprint, content,
// whether and when it was forgotten, earlier tags, the fingerprints its
// records hold, its target count, the index of its ids in the table, and
// its records (a message's outcome encoding) prefixed by their length. An
// entry read lazily and never decoded is written back from the bytes it
// was read from.
func (e *encoder) ledger(s *state.State) {
	type entryIDs struct {
		list int
		recs []byte
	}
	var lists [][]byte
	seen := map[uint32][]int{}
	refs := make([]entryIDs, len(s.Ledger))
	for i, m := range s.Ledger {
		ids, recs, ok := m.RawTargets()
		if !ok {
			sec := encoder{snapshot: e.snapshot}
			n, all := m.TargetCount(), m.AllTargets()
			if !m.Compact() {
				sorted, targets := m.SortedTargets()
				all = func(yield func(string, *state.Target) bool) {
					for i, id := range sorted {
						if !yield(id, targets[i]) {
							return
						}
					}
				}
			}
			sec.idSeq(n, func(yield func(string) bool) {
				for id := range all {
					if !yield(id) {
						return
					}
				}
			})
			ids, sec.b = sec.b, nil
			sec.outcomeSeq(func(yield func(*state.Target) bool) {
				for _, t := range all {
					if !yield(t) {
						return
					}
				}
			})
			recs = sec.b
		}
		h := crc32.Checksum(ids, castagnoli)
		k := -1
		for _, j := range seen[h] {
			if bytes.Equal(lists[j], ids) {
				k = j
				break
			}
		}
		if k < 0 {
			k = len(lists)
			lists = append(lists, ids)
			seen[h] = append(seen[h], k)
		}
		refs[i] = entryIDs{k, recs}
	}
	size := 0
	for _, l := range lists {
		size += len(l) + binary.MaxVarintLen64
	}
	for _, r := range refs {
		size += len(r.recs) + 256
	}
	e.b = slices.Grow(e.b, size) // once, rather than doubling as it goes
	e.uvarint(uint64(len(lists)))
	for _, l := range lists {
		e.uvarint(uint64(len(l)))
		e.b = append(e.b, l...)
	}
	e.uvarint(uint64(len(s.Ledger)))
	for i, m := range s.Ledger {
		e.str(m.Address)
		e.str(string(m.Kind))
		e.str(string(m.TargetKind))
		e.str(m.Fingerprint)
		e.content(m.Content)
		e.boolean(!m.ForgottenAt.IsZero())
		if !m.ForgottenAt.IsZero() {
			e.time(m.ForgottenAt)
		}
		tags := slices.Sorted(maps.Keys(m.EarlierTags))
		e.uvarint(uint64(len(tags)))
		for _, fp := range tags {
			e.str(fp)
			e.str(m.EarlierTags[fp])
		}
		fps := m.Fingerprints()
		e.uvarint(uint64(len(fps)))
		for _, fp := range fps {
			e.str(fp)
		}
		e.uvarint(uint64(m.TargetCount()))
		e.uvarint(uint64(refs[i].list))
		e.uvarint(uint64(len(refs[i].recs)))
		e.b = append(e.b, refs[i].recs...)
	}
}

// earlierTags writes the tags of the earlier fingerprints some record still
// holds, sorted; the others no target needs.
func (e *encoder) earlierTags(m *state.Message, recs []state.Target) {
	tags := m.EarlierTags
	var fps []string
	for _, r := range recs {
		if _, ok := tags[r.Fingerprint]; ok && r.Fingerprint != m.Fingerprint && !slices.Contains(fps, r.Fingerprint) {
			fps = append(fps, r.Fingerprint)
		}
	}
	slices.Sort(fps)
	e.uvarint(uint64(len(fps)))
	for _, fp := range fps {
		e.str(fp)
		e.str(tags[fp])
	}
}

func (e *encoder) entry(en state.Entry) {
	switch en.Type {
	case state.EntryIntent:
		e.b = append(e.b, 0)
	case state.EntryOutcome:
		e.b = append(e.b, 1)
	case state.EntryForget:
		e.b = append(e.b, 2)
	case state.EntrySnapshot:
		e.b = append(e.b, 3)
	case state.EntryMove:
		e.b = append(e.b, 4)
	case state.EntryRecord:
		e.b = append(e.b, 5)
	default:
		e.b = append(e.b, 0xff)
		e.str(string(en.Type))
	}
	e.varint(en.Batch)
	e.time(en.Time)
	e.str(en.RequestID)
	e.varint(int64(en.Status))
	e.uvarint(uint64(len(en.Items)))
	for _, it := range en.Items {
		e.str(it.Address)
		e.str(string(it.Kind))
		e.str(string(it.TargetKind))
		e.str(it.Fingerprint)
		e.boolean(it.Content != nil)
		if it.Content != nil {
			e.content(*it.Content)
		}
		e.ids(it.Targets)
		e.uvarint(uint64(len(it.Outcomes)))
		if len(it.Outcomes) > 0 {
			e.outcomes(len(it.Outcomes), func(i int) *state.Target { return &it.Outcomes[i] })
		}
		if en.Type == state.EntryMove {
			e.str(it.To)
		}
	}
}

// decoder reads the binary encoding from b. The first error sticks; every
// read after it returns zero values, so callers check err once.
type decoder struct {
	b   []byte
	off int
	err error
	// snapshot is the format of the snapshot body being read; 0 for a
	// journal entry.
	snapshot int
	// compact: messages hold their targets in sorted tables, not maps.
	compact bool
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, msg)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail("unexpected end")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// int reads a varint that must fit an int.
func (d *decoder) int() int {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("number out of range")
		return 0
	}
	return int(v)
}

// count reads a length of items taking at least minSize bytes each, so a
// damaged count cannot make the decoder allocate more than the input.
func (d *decoder) count(minSize int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)-d.off)/uint64(minSize) {
		d.fail("count larger than the data")
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.b)-d.off {
		d.fail("unexpected end")
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) str() string { return string(d.bytes(d.count(1))) }

func (d *decoder) boolean() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad boolean")
	return false
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	off := d.varint()
	if nsec >= 1e9 || off <= -1<<20 || off >= 1<<20 {
		d.fail("bad time")
	}
	if d.err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(off)))
}

// ids decodes a front-coded list into substrings of one string, so a
// million ids cost three allocations rather than a million: a first pass
// sizes the bytes exactly, the second fills them.
func (d *decoder) ids() []string {
	n := d.count(1)
	if d.err != nil || n == 0 {
		return nil
	}
	start, total, prevLen := d.off, 0, 0
	for range n {
		p, s := d.idHead()
		if d.err == nil && p > prevLen {
			d.fail("id prefix longer than the previous id")
		}
		d.bytes(s)
		if d.err != nil {
			return nil
		}
		prevLen = p + s
		total += prevLen
	}
	d.off = start
	arena := make([]byte, 0, total)
	out := make([]string, n)
	prevStart := 0
	for i := range n {
		p, s := d.idHead()
		at := len(arena)
		arena = append(arena, arena[prevStart:prevStart+p]...)
		arena = append(arena, d.bytes(s)...)
		prevStart = at
		// The arena is never written again, so its bytes can back strings
		// without a copy.
		if len(arena) > at {
			out[i] = unsafe.String(&arena[at], len(arena)-at)
		}
	}
	return out
}

// idHead reads the prefix and suffix lengths of one front-coded id.
func (d *decoder) idHead() (p, s int) {
	c := d.byte()
	if c == 0xff {
		// The prefix is not read from the data: the caller bounds it by
		// the previous id.
		p := d.uvarint()
		if p > math.MaxInt32 {
			d.fail("id prefix too long")
			return 0, 0
		}
		return int(p), d.count(1)
	}
	return int(c >> 4), int(c & 15)
}

func (d *decoder) content() message.Content {
	c := message.Content{Title: d.str(), Body: d.str(), OpenToURL: d.str(), Tag: d.str(), SilentInForeground: d.boolean()}
	if d.boolean() {
		n := d.int()
		c.BadgeCount = &n
	}
	return c
}

// outcomes decodes what encoder.outcomes wrote for n targets, calling set
// for each target in order.
func (d *decoder) outcomes(n int, set func(i int, t *state.Target)) {
	strs := []string{""}
	for range d.count(1) {
		strs = append(strs, d.str())
	}
	str := func() string {
		i := d.uvarint()
		if i >= uint64(len(strs)) {
			d.fail("string index out of range")
			return ""
		}
		return strs[i]
	}
	recs := make([]state.Target, d.count(8))
	for i := range recs {
		var t state.Target
		switch c := d.byte(); c {
		case outcomeDelivered:
			t.Outcome = state.Delivered
		case outcomeSkipped:
			t.Outcome = state.Skipped
		case outcomeFailed:
			t.Outcome = state.Failed
		case outcomeUnknown:
			t.Outcome = state.Unknown
		case outcomeNone:
		case outcomeOther:
			t.Outcome = state.Outcome(str())
		default:
			d.fail("bad outcome code")
		}
		t.Fingerprint = str()
		t.RequestID = str()
		t.Time = d.time()
		t.DeviceCount = d.int()
		t.Reason = str()
		t.Message = str()
		if d.boolean() {
			u := d.time()
			t.UnreachableSince = &u
		}
		if d.snapshot >= 3 {
			n := d.uvarint()
			if n > math.MaxInt32 {
				d.fail("unanswered count out of range")
			}
			t.Unanswered = int(n)
		}
		recs[i] = t
	}
	i := 0
	for range d.count(2) {
		rec, k := d.uvarint(), d.uvarint()
		if d.err != nil {
			return
		}
		if rec >= uint64(len(recs)) || k == 0 || k > uint64(n-i) {
			d.fail("bad outcome run")
			return
		}
		t := &recs[rec]
		for range int(k) {
			set(i, t)
			i++
		}
	}
	if d.err == nil && i != n {
		d.fail("outcome runs do not cover every target")
	}
}

func (d *decoder) stateBody(s *state.State) {
	// The recipients list as encoded: a message sent to exactly that list
	// (the usual campaign) shares its decoded ids.
	var recipients []byte
	switch d.byte() {
	case 0:
	case 1:
		snap := &state.Snapshot{FetchedAt: d.time()}
		isSet := d.boolean()
		start := d.off
		snap.UserIDs = d.ids()
		recipients = d.b[start:d.off]
		if isSet && snap.UserIDs == nil {
			snap.UserIDs = []string{}
		}
		s.Recipients = snap
	default:
		d.fail("bad recipients flag")
	}
	n := d.count(1)
	s.Messages = make(map[string]*state.Message, n)
	for range n {
		m := &state.Message{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str(), Content: d.content()}
		var ids []string
		if d.compact && len(recipients) > 1 && bytes.HasPrefix(d.b[d.off:], recipients) {
			ids = s.Recipients.UserIDs
			d.off += len(recipients)
		} else {
			ids = d.ids()
		}
		if d.err != nil {
			return
		}
		if _, dup := s.Messages[m.Address]; dup {
			d.fail("address " + strconv.Quote(m.Address) + " repeated")
			return
		}
		if d.compact {
			d.compactTargets(m, ids)
		} else {
			m.Targets = make(map[string]*state.Target, len(ids))
			// Targets with equal records share one: a million delivered
			// targets of a few requests cost a pointer each.
			d.outcomes(len(ids), func(i int, t *state.Target) { m.Targets[ids[i]] = t })
			if d.err == nil && len(m.Targets) != len(ids) {
				d.fail("target ids of " + strconv.Quote(m.Address) + " repeated")
			}
		}
		if d.snapshot >= 3 {
			d.earlierTags(m)
		}
		s.Messages[m.Address] = m
	}
	if d.snapshot >= 5 {
		d.ledger(s, recipients)
	}
}

// idList is one list of the ledger's table of target ids, decoded once
// however many entries hold it.
type idList struct {
	once sync.Once
	raw  []byte
	ids  []string
	err  error
}

// get decodes the list: the recipients' ids when it is their very
// encoding (recipients), else a list of its own.
func (l *idList) get(recipients []byte, recipientIDs []string) ([]string, error) {
	l.once.Do(func() {
		if len(recipients) > 1 && bytes.Equal(l.raw, recipients) {
			l.ids = recipientIDs
			return
		}
		d := decoder{b: l.raw}
		l.ids = d.ids()
		if d.err == nil && d.off != len(d.b) {
			d.fail("unexpected data after the ids")
		}
		l.err = d.err
	})
	return l.ids, l.err
}

// ledger reads what encoder.ledger wrote. A compact state decodes each
// entry's targets on first use (state.Message.SetLazyTargets); the
// snapshot's checksum has been verified, so only a file written wrongly
// can fail then (state.Message.LoadErr).
func (d *decoder) ledger(s *state.State, recipients []byte) {
	var recipientIDs []string
	if s.Recipients != nil {
		recipientIDs = s.Recipients.UserIDs
	}
	lists := make([]*idList, d.count(1))
	for i := range lists {
		lists[i] = &idList{raw: d.bytes(d.count(1))}
	}
	n := d.count(8)
	if n > 0 {
		s.Ledger = make([]*state.Message, 0, n)
	}
	for range n {
		m := &state.Message{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str(), Content: d.content()}
		if d.boolean() {
			m.ForgottenAt = d.time()
		}
		for range d.count(2) {
			fp, tag := d.str(), d.str()
			if m.EarlierTags == nil {
				m.EarlierTags = map[string]string{}
			}
			m.EarlierTags[fp] = tag
		}
		var fps []string
		for range d.count(1) {
			fps = append(fps, d.str())
		}
		targets, li := d.uvarint(), d.uvarint()
		recs := d.bytes(d.count(1))
		if d.err != nil {
			return
		}
		if li >= uint64(len(lists)) || targets > uint64(len(lists[li].raw)) {
			d.fail("ledger entry of " + strconv.Quote(m.Address) + " names ids it does not have")
			return
		}
		list := lists[li]
		load := func(m *state.Message) error {
			ids, err := list.get(recipients, recipientIDs)
			if err == nil && len(ids) != int(targets) {
				err = errors.New("target count does not match")
			}
			if err != nil {
				return fmt.Errorf("ledger entry of %s: %w", m.Address, err)
			}
			sd := decoder{b: recs, snapshot: d.snapshot, compact: true}
			sd.compactTargets(m, ids)
			if sd.err == nil && sd.off != len(sd.b) {
				sd.fail("unexpected data after the records")
			}
			if sd.err != nil {
				return fmt.Errorf("ledger entry of %s: %w", m.Address, sd.err)
			}
			return nil
		}
		if d.compact {
			m.SetLazyTargets(int(targets), fps, list.raw, recs, load)
		} else {
			ids, err := list.get(recipients, recipientIDs)
			if err != nil {
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": " + err.Error())
				return
			}
			m.Targets = make(map[string]*state.Target, len(ids))
			sd := decoder{b: recs, snapshot: d.snapshot}
			sd.outcomes(len(ids), func(i int, t *state.Target) { m.Targets[ids[i]] = t })
			switch {
			case sd.err != nil:
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": " + sd.err.Error())
			case sd.off != len(sd.b):
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": unexpected data after the records")
			case len(m.Targets) != len(ids) || len(ids) != int(targets):
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": target ids repeated or miscounted")
			}
		}
		s.Ledger = append(s.Ledger, m)
	}
}

// compactTargets reads the records of ids into a sorted table. Encode
// writes ids sorted; a file that does not is sorted here.
func (d *decoder) compactTargets(m *state.Message, ids []string) {
	sorted := true
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			sorted = false
			break
		}
	}
	if sorted {
		m.SetSortedTargetsFunc(ids, func(set func(int, *state.Target)) { d.outcomes(len(ids), set) })
		return
	}
	recs := make([]*state.Target, len(ids))
	d.outcomes(len(ids), func(i int, t *state.Target) { recs[i] = t })
	if d.err != nil {
		return
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	sids, srecs := make([]string, len(ids)), make([]*state.Target, len(ids))
	for i, o := range order {
		sids[i], srecs[i] = ids[o], recs[o]
		if i > 0 && sids[i] == sids[i-1] {
			d.fail("target ids of " + strconv.Quote(m.Address) + " repeated")
			return
		}
	}
	m.SetSortedTargets(sids, srecs)
}

func (d *decoder) earlierTags(m *state.Message) {
	n := d.count(2)
	for range n {
		fp, tag := d.str(), d.str()
		if d.err != nil {
			return
		}
		if m.EarlierTags == nil {
			m.EarlierTags = make(map[string]string, n)
		}
		if _, dup := m.EarlierTags[fp]; dup || fp == m.Fingerprint {
			d.fail("earlier tag of " + strconv.Quote(m.Address) + " repeated")
			return
		}
		m.EarlierTags[fp] = tag
	}
}

func (d *decoder) entry() state.Entry {
	var e state.Entry
	switch c := d.byte(); c {
	case 0:
		e.Type = state.EntryIntent
	case 1:
		e.Type = state.EntryOutcome
	case 2:
		e.Type = state.EntryForget
	case 3:
		e.Type = state.EntrySnapshot
	case 4:
		e.Type = state.EntryMove
	case 5:
		e.Type = state.EntryRecord
	case 0xff:
		e.Type = state.EntryType(d.str())
	default:
		d.fail("bad entry type")
	}
	e.Batch = d.varint()
	e.Time = d.time()
	e.RequestID = d.str()
	e.Status = d.int()
	n := d.count(7) // an item takes at least seven bytes
	if n > 0 {
		e.Items = make([]state.Item, n)
	}
	for i := range e.Items {
		it := state.Item{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str()}
		if d.boolean() {
			c := d.content()
			it.Content = &c
		}
		it.Targets = d.ids()
		// Outcomes are run-length coded, so their count is not bounded by
		// the data; they parallel the targets.
		if k := d.uvarint(); k > 0 {
			if k != uint64(len(it.Targets)) {
				d.fail("outcomes do not match targets")
			}
			if d.err != nil {
				return e
			}
			it.Outcomes = make([]state.Target, len(it.Targets))
			d.outcomes(len(it.Targets), func(j int, t *state.Target) { it.Outcomes[j] = *t })
		}
		if e.Type == state.EntryMove {
			it.To = d.str()
		}
		e.Items[i] = it
	}
	return e
}
