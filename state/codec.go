package state

// Every byte format of the file backend is encoded and decoded here, so a
// compact encoding can replace plain JSON in one place.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
)

// stateHeader is the part of a snapshot that Persist and Append need; it is
// written first so it can be read without decoding every target.
type stateHeader struct {
	Version     int    `json:"version"`
	Lineage     string `json:"lineage"`
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment"`
}

// encodeState writes s as a snapshot.
func encodeState(w io.Writer, s *State) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	return bw.Flush()
}

// decodeState reads a snapshot written by encodeState and checks it is whole
// and usable: decoders see files damaged by crashes, disks and people.
func decodeState(r io.Reader) (*State, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	var s State
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the state object")
	}
	if err := checkVersion(s.Version); err != nil {
		return nil, err
	}
	if s.Lineage == "" {
		return nil, errors.New("no lineage")
	}
	if s.Messages == nil {
		s.Messages = map[string]*Message{}
	}
	for addr, m := range s.Messages {
		if m == nil {
			return nil, fmt.Errorf("message %q is null", addr)
		}
		m.Address = addr
		if m.Targets == nil {
			m.Targets = map[string]Target{}
		}
	}
	return &s, nil
}

func checkVersion(v int) error {
	switch {
	case v < 1:
		return fmt.Errorf("missing or invalid format version %d", v)
	case v > FormatVersion:
		return fmt.Errorf("format version %d is newer than this pushform supports (%d); upgrade pushform", v, FormatVersion)
	}
	return nil
}

// decodeStateHeader reads the header fields of a snapshot, stopping as soon
// as it has them (they come first in files encodeState wrote).
func decodeStateHeader(r io.Reader) (stateHeader, error) {
	var h stateHeader
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

// journalHeader is the first line of a journal: the snapshot it extends.
// A journal whose serial is older than the snapshot's was already folded
// into it (a crash between the snapshot rename and the journal removal).
type journalHeader struct {
	Journal     int    `json:"journal"` // format version
	Lineage     string `json:"lineage"`
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment,omitempty"`
}

const journalFormat = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendJournalLine appends one journal line for v: eight hex digits of the
// CRC-32C of the JSON, a space, the JSON, a newline.
func appendJournalLine(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	payload := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	dst = fmt.Appendf(dst, "%08x ", crc32.Checksum(payload, castagnoli))
	dst = append(dst, payload...)
	return append(dst, '\n'), nil
}

// checkLine returns the JSON of a whole, intact journal line.
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

// readJournal reads a journal, calling fn for each entry in order. valid is
// the length of the intact prefix. A damaged last line is a write torn by a
// crash and is ignored (it was never acknowledged); a damaged line followed
// by others is an error. A journal without an intact header has no entries.
func readJournal(r io.Reader, fn func(Entry) error) (h journalHeader, valid int64, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return h, valid, rerr
		}
		if len(line) == 0 {
			return h, valid, nil
		}
		payload, ok := checkLine(line)
		if !ok {
			if rerr == io.EOF {
				return h, valid, nil // torn: no newline
			}
			if _, perr := br.Peek(1); perr == io.EOF {
				return h, valid, nil // torn: last line
			} else if perr != nil {
				return h, valid, perr
			}
			return h, valid, fmt.Errorf("line %d is corrupt (checksum mismatch) and is not the last line", n)
		}
		if n == 1 {
			if err := json.Unmarshal(payload, &h); err != nil || h.Journal == 0 {
				return journalHeader{}, 0, errors.New("line 1 is not a journal header")
			}
			if h.Journal > journalFormat {
				return journalHeader{}, 0, fmt.Errorf("journal format %d is newer than this pushform supports (%d)", h.Journal, journalFormat)
			}
		} else {
			var e Entry
			if err := json.Unmarshal(payload, &e); err != nil {
				return h, valid, fmt.Errorf("line %d: %w", n, err)
			}
			if err := fn(e); err != nil {
				return h, valid, fmt.Errorf("line %d: %w", n, err)
			}
		}
		valid += int64(len(line))
	}
}

// checkStateEnd cheaply checks that a snapshot of the given size was not
// truncated, without decoding it: a JSON state ends with a closing brace.
func checkStateEnd(r io.ReaderAt, size int64) error {
	end := make([]byte, min(size, 64))
	if _, err := r.ReadAt(end, size-int64(len(end))); err != nil {
		return err
	}
	end = bytes.TrimRight(end, " \t\r\n")
	if len(end) == 0 || end[len(end)-1] != '}' {
		return errors.New("truncated (it does not end with a closing brace)")
	}
	return nil
}
