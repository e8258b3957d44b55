package statefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// richState has a part of every kind the format encodes.
func richState() *state.State {
	s := state.New("test")
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600))
	two := 2
	s.Recipients = &state.Snapshot{FetchedAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), UserIDs: []string{"u1", "u2"}}
	shared := &state.Target{Outcome: state.Delivered, Fingerprint: "fp", RequestID: "r1", DeviceCount: 1}
	s.Messages["a"] = &state.Message{Address: "a", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp",
		Content: message.Content{Title: "T", Body: "B", Tag: "t", OpenToURL: "https://x", BadgeCount: &two, SilentInForeground: true},
		Targets: map[string]*state.Target{
			"u1": shared, "u2": shared,
			"u3":                       {Outcome: state.Skipped, Reason: "no_active_device", UnreachableSince: &since},
			"u4":                       {Outcome: state.Failed, Message: "m"},
			"u5":                       {Outcome: "odd"},
			"user-with-a-long-id-0001": {Outcome: ""},
		}}
	return s
}

// rewrap returns a snapshot of header h around body, with a valid
// checksum: damage inside it reaches the body decoder.
func rewrap(h string, body []byte) []byte {
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc32.Checksum(body, castagnoli))
	out := append([]byte(h+"\n"), body...)
	out = append(out, sum[:]...)
	return append(out, snapshotTrailer...)
}

// TestDecodeDamagedBodies: every truncation of a snapshot's body, and
// every byte of it changed, with a checksum that matches (as a bug, not a
// disk, would write it), is refused or decodes to a state the encoder
// reproduces: never a panic, never a state that cannot be written back.
func TestDecodeDamagedBodies(t *testing.T) {
	good := encodeStateBytes(t, richState())
	nl := bytes.IndexByte(good, '\n')
	header := string(good[:nl])
	body := good[nl+1 : len(good)-4-len(snapshotTrailer)]
	refused := 0
	try := func(b []byte) {
		s, err := Decode(bytes.NewReader(rewrap(header, b)))
		if err != nil {
			refused++
			return
		}
		back, err := Decode(bytes.NewReader(encodeStateBytes(t, s)))
		if err != nil {
			t.Fatalf("a decoded state does not re-encode: %v", err)
		}
		if d := diffState(s, back); d != "" {
			t.Fatalf("a decoded state reads back differently: %s", d)
		}
	}
	for cut := range len(body) {
		try(body[:cut])
	}
	for i := range body {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte{}, body...)
			b[i] ^= x
			try(b)
		}
	}
	if refused < len(body) {
		t.Errorf("only %d damaged bodies refused; every truncation must be", refused)
	}
}

// TestDecodeDamagedEntries does the same for journal entries.
func TestDecodeDamagedEntries(t *testing.T) {
	lines := bytes.Split(sampleJournal(t, 2), []byte("\n"))[1:]
	for _, line := range lines {
		if len(line) < 10 {
			continue
		}
		payload := line[9:]
		for cut := range len(payload) {
			if _, err := decodeEntry(payload[:cut], JournalFormat); err == nil {
				t.Errorf("entry cut at %d of %d bytes decoded", cut, len(payload))
			}
		}
		for i := range payload {
			b := append([]byte{}, payload...)
			b[i] ^= 0x80
			if e, err := decodeEntry(b, JournalFormat); err == nil {
				checkEntryRoundTrip(t, e)
			}
		}
	}
	if _, err := decodeEntry([]byte(`a\`), JournalFormat); err == nil {
		t.Error("a line ending in a lone backslash decoded")
	}
	if _, err := decodeEntry([]byte(`a\x`), JournalFormat); err == nil {
		t.Error("an unknown escape decoded")
	}
}

func TestDecodeStateErrors(t *testing.T) {
	good := encodeStateBytes(t, richState())
	for name, data := range map[string]string{
		"empty":                  "  \n",
		"v1 trailing data":       `{"version":1,"lineage":"x","messages":{}} {}`,
		"v1 null message":        `{"version":1,"lineage":"x","messages":{"a":null}}`,
		"v1 null target":         `{"version":1,"lineage":"x","messages":{"a":{"targets":{"u1":null}}}}`,
		"v1 no version":          `{"lineage":"x","messages":{}}`,
		"v1 newer":               `{"version":7,"lineage":"x","messages":{}}`,
		"v1 claims version 2":    `{"version":2,"lineage":"x","messages":{}} `,
		"v1 no lineage":          `{"version":1,"messages":{}}`,
		"not JSON":               "\x00garbage",
		"current newer":          strings.Replace(string(good), fmt.Sprintf(`"version":%d`, state.FormatVersion), fmt.Sprintf(`"version":%d`, state.FormatVersion+1), 1),
		"v2 no lineage":          string(rewrap(`{"version":2,"lineage":"","serial":1}`, []byte{0, 0})),
		"v2 short":               `{"version":2,"lineage":"x"}` + "\n\x00",
		"v2 bad recipients flag": string(rewrap(`{"version":2,"lineage":"x"}`, []byte{7, 0})),
		"v2 trailing body":       string(rewrap(`{"version":2,"lineage":"x"}`, []byte{0, 0, 0})),
	} {
		if s, err := Decode(strings.NewReader(data)); err == nil {
			t.Errorf("%s: decoded %+v", name, s)
		}
	}
	// A v1 state without messages or targets reads as empty ones.
	s, err := Decode(strings.NewReader(`{"version":1,"lineage":"x","messages":{"a":{}}}`))
	if err != nil || s.Messages["a"].Targets == nil || s.Messages["a"].Address != "a" {
		t.Fatalf("v1 = %+v, %v", s, err)
	}
	s, err = Decode(strings.NewReader(`{"version":1,"lineage":"x"}`))
	if err != nil || s.Messages == nil {
		t.Fatalf("v1 without messages = %+v, %v", s, err)
	}
}

func TestDecodeHeader(t *testing.T) {
	h, err := DecodeHeader(bytes.NewReader(encodeStateBytes(t, richState())))
	if err != nil || h.Version != state.FormatVersion || h.Environment != "test" || h.Lineage == "" {
		t.Fatalf("DecodeHeader = %+v, %v", h, err)
	}
	// Other fields first, as a hand-edited v1 file may have them.
	h, err = DecodeHeader(strings.NewReader(`{"messages":{},"serial":4,"version":1,"lineage":"x","environment":"e"}`))
	if err != nil || h.Serial != 4 || h.Lineage != "x" {
		t.Fatalf("DecodeHeader v1 = %+v, %v", h, err)
	}
	for name, data := range map[string]string{
		"not an object": `[1]`,
		"bad field":     `{"version":"one"}`,
		"no lineage":    `{"version":1,"serial":1}`,
		"no version":    `{"lineage":"x"}`,
		"cut":           `{"version":1,"lin`,
	} {
		if _, err := DecodeHeader(strings.NewReader(data)); err == nil {
			t.Errorf("%s: DecodeHeader accepted %q", name, data)
		}
	}
}

func TestCheckEndV1(t *testing.T) {
	for data, ok := range map[string]bool{`{"version":1}`: true, `{"version":1}` + "\n": true, `{"version":1`: false, ``: false} {
		if err := CheckEnd(strings.NewReader(data), int64(len(data))); (err == nil) != ok {
			t.Errorf("CheckEnd(%q) = %v", data, err)
		}
	}
}

func TestJournalFormatOf(t *testing.T) {
	for _, format := range []int{1, 2} {
		if got := JournalFormatOf(sampleJournal(t, format)); got != format {
			t.Errorf("format %d journal: JournalFormatOf = %d", format, got)
		}
	}
	good := sampleJournal(t, 2)
	nl := bytes.IndexByte(good, '\n')
	bad := append([]byte{}, good...)
	bad[0] ^= 1
	for name, start := range map[string][]byte{"no newline": good[:nl], "bad checksum": bad, "empty": nil, "not a header": []byte("00000000 {}\n")} {
		if got := JournalFormatOf(start); got != 0 {
			t.Errorf("%s: JournalFormatOf = %d, want 0", name, got)
		}
	}
}

func TestReadJournalErrors(t *testing.T) {
	good := sampleJournal(t, 2)
	nl := bytes.IndexByte(good, '\n')
	newer, _ := AppendJournalLine(nil, JournalHeader{Journal: JournalFormat + 1, Lineage: "l"})
	if _, _, err := ReadJournal(bytes.NewReader(newer), func(state.Entry) error { return nil }); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a newer journal format: %v", err)
	}
	stop := errors.New("stop")
	if _, _, err := ReadJournal(bytes.NewReader(good), func(state.Entry) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
	// A line that is intact but not an entry, followed by another.
	junk := appendLine(nil, []byte("\xff\xff\xff"))
	data := append(append(append([]byte{}, good[:nl+1]...), junk...), good[nl+1:]...)
	if _, _, err := ReadJournal(bytes.NewReader(data), func(state.Entry) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("an intact line that is no entry: %v", err)
	}
	// A line longer than the read buffer is gathered whole.
	h := JournalHeader{Journal: 2, Lineage: "l"}
	b, _ := AppendJournalLine(nil, h)
	long := state.Entry{Type: state.EntryForget, Items: []state.Item{{Address: "a", Targets: manyIDs(100000)}}}
	b, _ = AppendEntryLine(b, long, 2)
	var got []state.Entry
	if _, valid, err := ReadJournal(bytes.NewReader(b), func(e state.Entry) error { got = append(got, e); return nil }); err != nil || valid != int64(len(b)) || len(got) != 1 {
		t.Fatalf("a %d-byte line: %d entries, valid %d, %v", len(b), len(got), valid, err)
	}
	if d := diffEntry(long, got[0]); d != "" {
		t.Fatalf("the long entry read back differs: %s", d)
	}
	if _, err := AppendJournalLine(nil, func() {}); err == nil {
		t.Error("AppendJournalLine encoded a func")
	}
	if _, err := AppendEntryLine(nil, state.Entry{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, 1); err == nil {
		t.Error("a format-1 entry with a year JSON cannot hold was written")
	}
}

// TestTrailingData: bytes appended after a whole snapshot are reported as
// what they are, with where the state ends; a cut snapshot, or a state
// whose checksum does not match before the marker, is not.
func TestTrailingData(t *testing.T) {
	good := encodeStateBytes(t, richState())
	end := int64(len(good))
	for _, tt := range []struct {
		name     string
		data     []byte
		trailing bool
	}{
		{"garbage appended", append(append([]byte{}, good...), "garbage here\n"...), true},
		{"one byte appended", append(append([]byte{}, good...), 'x'), true},
		{"the snapshot twice", append(append([]byte{}, good...), good...), true},
		{"a newline appended", append(append([]byte{}, good...), '\n'), true},
		{"cut", good[:len(good)-3], false},
		{"cut, then garbage", append(append([]byte{}, good[:len(good)-3]...), "garbage"...), false},
		{"a body byte changed, then garbage", append(flip(good, len(good)/2), "garbage"...), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(tt.data))
			var td *TrailingDataError
			switch {
			case err == nil:
				t.Fatal("decoded")
			case errors.As(err, &td) != tt.trailing:
				t.Fatalf("err = %v", err)
			case tt.trailing && (td.End != end || td.Size != int64(len(tt.data))):
				t.Errorf("trailing data at %d of %d, want %d of %d", td.End, td.Size, end, len(tt.data))
			case tt.trailing && !strings.Contains(err.Error(), fmt.Sprintf("%d bytes of trailing data after the end marker of its state, which ends whole at byte %d", td.Size-td.End, end)) && td.Size-td.End > 1:
				t.Errorf("message %q", err)
			case !tt.trailing && !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "checksum"):
				t.Errorf("message %q", err)
			}
			if cerr := CheckEnd(bytes.NewReader(tt.data), int64(len(tt.data))); tt.trailing && (cerr == nil || !strings.Contains(cerr.Error(), "data after its end")) && tt.name != "the snapshot twice" {
				t.Errorf("CheckEnd = %v", cerr)
			}
		})
	}
}

// flip returns b with the byte at i changed.
func flip(b []byte, i int) []byte {
	out := append([]byte{}, b...)
	out[i] ^= 0x80
	return out
}
