package statefile

// The snapshot frame of formats 2 to 6: a JSON header line, the binary
// body (body.go), its CRC-32C and snapshotTrailer; reading any format.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"pushform/state"
)

// Header is the part of a snapshot that Persist and Append need; it is
// written first so it can be read without decoding every target.
type Header struct {
	Version     int    `json:"version"`
	Lineage     string `json:"lineage"`
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment"`
	// Service is the service the deliveries went to (format 6; see
	// state.State.Service).
	Service *state.ServiceRecord `json:"service,omitempty"`
}

// snapshotTrailer ends every snapshot of format 2 and later, after the
// body's checksum.
const snapshotTrailer = "\n# end of pushform state\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode writes s as a snapshot of format state.FormatVersion.
func Encode(w io.Writer, s *state.State) error {
	return encode(w, s, state.FormatVersion)
}

// encode writes s as a snapshot of format version (2 to 6; tests write
// older ones to check they are still read).
func encode(w io.Writer, s *state.State, version int) error {
	return encodeBody(w, s, version, inParallel, sharedList)
}

// encodeBody is encode, with the body's two parts on two goroutines when
// parallel says so, and the recipients list encoded once for the messages
// sent to exactly it when share returns it; the bytes are the same
// either way.
func encodeBody(w io.Writer, s *state.State, version int, parallel func(*state.State) (targets int, ok bool), share func(*state.State) *encodedList) error {
	hdr, err := json.Marshal(headerOf(s, version))
	if err != nil {
		return err
	}
	hdr = append(hdr, '\n')
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(hdr)
	// The body is written as it is encoded, not gathered first: a
	// million targets' would be 15 MB more of fresh memory.
	e := encoder{snapshot: version, spillTo: bw}
	if version >= 4 {
		e.sum = crc32.Checksum(hdr, castagnoli)
	}
	e.b = make([]byte, 0, spillAt+4<<10)
	list := share(s)
	if targets, ok := parallel(s); ok {
		// The recipients list and the messages are encoded on two cores:
		// at the end of an apply both are large, and nothing else runs.
		// The messages' part is gathered in memory, bounded by inParallel;
		// a delivered target takes about 2.2 bytes of it. A message sent
		// to the whole list leaves room for the list's encoding, made
		// meanwhile.
		rest := encoder{snapshot: version, b: make([]byte, 0, 3*targets+64<<10), list: list, listLater: true}
		done := make(chan struct{})
		go func() {
			defer close(done)
			rest.messagesBody(s)
		}()
		if list != nil {
			list.encode()
			e.list = list
		}
		e.recipientsBody(s)
		<-done
		e.spill()
		at := 0
		for _, to := range rest.listAt {
			e.encoded(rest.b[at:to])
			e.encoded(list.enc)
			at = to
		}
		e.b = rest.b[at:]
	} else {
		if list != nil {
			list.encode()
			e.list = list
		}
		e.stateBody(s)
	}
	e.spill()
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], e.sum)
	bw.Write(sum[:])
	bw.WriteString(snapshotTrailer)
	return bw.Flush()
}

// Bounds of the parallel encoding: a recipients list worth a second core,
// and messages whose part, gathered in memory, stays small next to what
// the apply already holds (at 20 bytes a target, 40 MB).
const (
	parallelMinIDs     = 100_000
	parallelMaxTargets = 2_000_000
)

// inParallel reports whether encode writes s's recipients list on one
// goroutine and its messages and ledger on another, and how many targets
// those hold.
func inParallel(s *state.State) (targets int, ok bool) {
	if s.Recipients == nil || len(s.Recipients.UserIDs) < parallelMinIDs {
		return 0, false
	}
	n := 0
	for _, m := range s.Messages {
		if m != nil {
			n += m.TargetCount()
		}
	}
	for _, l := range s.Ledger {
		n += l.TargetCount()
	}
	return n, n <= parallelMaxTargets
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

func decodeStateV2(h Header, hdrLine, body []byte, compact bool) (*state.State, error) {
	if err := checkVersion(h.Version); err != nil {
		return nil, err
	}
	whole := len(body) >= 4+len(snapshotTrailer) && bytes.HasSuffix(body, []byte(snapshotTrailer))
	var inner []byte // the body without its checksum and end marker
	sumOK := false
	if whole {
		inner = body[:len(body)-len(snapshotTrailer)-4]
		sumOK = snapshotSum(h.Version, hdrLine, inner) == binary.LittleEndian.Uint32(body[len(inner):])
	}
	if !sumOK {
		// Data appended after a whole snapshot (another snapshot even):
		// an earlier end marker ends a state whose checksum matches.
		if end, ok := intactEnd(h.Version, hdrLine, body); ok && end < len(body) {
			n := int64(len(hdrLine))
			return nil, &TrailingDataError{End: n + int64(end), Size: n + int64(len(body))}
		}
		switch {
		case !whole:
			return nil, errors.New("truncated (no end marker)")
		case h.Version >= 4:
			return nil, errors.New("checksum mismatch (the header, with serial and lineage, or the body was changed)")
		}
		return nil, errors.New("checksum mismatch")
	}
	body = inner
	s := &state.State{Version: h.Version, Lineage: h.Lineage, Serial: h.Serial, Environment: h.Environment, Service: h.Service}
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

// TrailingDataError is a snapshot with data after its end marker: the
// state up to End (a byte offset in the file) is whole and its checksum
// matches; Size-End bytes were appended after it.
type TrailingDataError struct {
	End, Size int64
}

func (e *TrailingDataError) Error() string {
	n := e.Size - e.End
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	return fmt.Sprintf("%d %s of trailing data after the end marker of its state, which ends whole at byte %d (its checksum matches)", n, unit, e.End)
}

// intactEnd finds, in a body that does not end with snapshotTrailer, the
// first end marker after which the state is whole: a checksum that
// matches the body before it. It returns the body's length up to the end
// of that marker.
func intactEnd(version int, hdrLine, body []byte) (int, bool) {
	trailer := []byte(snapshotTrailer)
	for from := 0; ; {
		i := bytes.Index(body[from:], trailer)
		if i < 0 {
			return 0, false
		}
		i += from
		if i >= 4 && snapshotSum(version, hdrLine, body[:i-4]) == binary.LittleEndian.Uint32(body[i-4:i]) {
			return i + len(trailer), true
		}
		from = i + 1
	}
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
		return errors.New("it does not end with the end marker (or, in format 1, a closing brace): truncated, or with data after its end")
	}
	return nil
}
