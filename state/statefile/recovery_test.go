package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/message"

	"pushform/state"
)

// TestSnapshotHeaderUnderChecksum: from format 4 the header line is
// checksummed with the body, so an edited serial, lineage, environment or
// version is refused (issue 16 item 5; format 3 accepted an edited serial).
func TestSnapshotHeaderUnderChecksum(t *testing.T) {
	s := fidelityState()
	s.Serial = 41
	good := encodeStateBytes(t, s)
	if _, err := Decode(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	lin := []byte(s.Lineage)
	other := append([]byte(nil), lin...)
	other[0] ^= 1
	for name, edit := range map[string][2]string{
		"serial":      {`"serial":41`, `"serial":42`},
		"serial down": {`"serial":41`, `"serial":4`},
		"lineage":     {string(lin), string(other)},
		"environment": {`"environment":"test"`, `"environment":"prod"`},
		"version":     {string(curVersion), `{"version":3,`},
	} {
		t.Run(name, func(t *testing.T) {
			bad := bytes.Replace(good, []byte(edit[0]), []byte(edit[1]), 1)
			if bytes.Equal(bad, good) {
				t.Fatalf("%q not in the header %q", edit[0], good[:bytes.IndexByte(good, '\n')])
			}
			_, err := Decode(bytes.NewReader(bad))
			if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
				t.Fatalf("edited %s: err = %v, want a checksum mismatch", name, err)
			}
		})
	}
}

// TestFormat3StillRead: a format-3 snapshot (header outside the checksum)
// is read, and Encode writes it back as the current format.
func TestFormat3StillRead(t *testing.T) {
	s := fidelityState()
	var buf bytes.Buffer
	if err := encode(&buf, s, 3); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("format 3: %v", err)
	}
	if back.Version != 3 || back.Messages["a"].Targets["u3"].Unanswered != 2 {
		t.Fatalf("format 3 decoded as %+v", back)
	}
	if data := encodeStateBytes(t, back); !bytes.HasPrefix(data, curVersion) {
		t.Errorf("not migrated: %q", data[:40])
	}
}

// TestNewerFormatIsNotCorrupt: files of a newer format are named as such,
// for snapshots of either shape and for journals (issue 16 item 5).
func TestNewerFormatIsNotCorrupt(t *testing.T) {
	good := encodeStateBytes(t, state.New("test"))
	journal, _ := AppendJournalLine(nil, JournalHeader{Journal: 4, Lineage: "l", Serial: 1})
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"snapshot":       {bytes.Replace(good, curVersion, nextVersion, 1), fmt.Sprintf("written by a newer pushform (state format %d; this pushform reads formats 1 to %d)", state.FormatVersion+1, state.FormatVersion)},
		"plain JSON":     {[]byte(`{"version":9,"lineage":"x","serial":1,"messages":{}}`), "written by a newer pushform (state format 9;"},
		"journal header": {journal, "written by a newer pushform (journal format 4; this pushform reads formats 1 to 3)"},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if name == "journal header" {
				_, _, err = ReadJournal(bytes.NewReader(tc.data), func(state.Entry) error { return nil })
			} else {
				_, err = Decode(bytes.NewReader(tc.data))
			}
			var nf *NewerFormatError
			if !errors.As(err, &nf) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("err = %v, want a *NewerFormatError saying %q", err, tc.want)
			}
		})
	}
	if _, err := DecodeHeader(bytes.NewReader(bytes.Replace(good, curVersion, nextVersion, 1))); err == nil || !strings.Contains(err.Error(), "newer pushform") {
		t.Errorf("DecodeHeader: %v", err)
	}
}

// flipIn flips a bit in the payload of line n (from 1) of a journal,
// keeping its newline.
func flipIn(t testing.TB, journal []byte, n int) []byte {
	t.Helper()
	out := append([]byte(nil), journal...)
	start := 0
	for range n - 1 {
		start += bytes.IndexByte(out[start:], '\n') + 1
	}
	out[start+12] ^= 0x01
	return out
}

// TestReadJournalCompleteLastLineReported: a complete last line (newline
// included) that fails its checksum was written whole and may have been
// acknowledged: it is reported with its number, not dropped silently as a
// torn write (issue 16 item 5). A last line without its newline is torn
// and still ignored.
func TestReadJournalCompleteLastLineReported(t *testing.T) {
	for _, format := range []int{1, 2} {
		good := sampleJournal(t, format)
		n := bytes.Count(good, []byte("\n"))
		lastStart := int64(bytes.LastIndexByte(good[:len(good)-1], '\n') + 1)
		for name, tc := range map[string]struct {
			data []byte
			line int
		}{
			"last":   {flipIn(t, good, n), n},
			"middle": {flipIn(t, good, 3), 3},
			"header": {flipIn(t, good, 1), 1},
		} {
			_, valid, err := ReadJournal(bytes.NewReader(tc.data), func(state.Entry) error { return nil })
			var le *JournalLineError
			if !errors.As(err, &le) || le.Line != tc.line || le.Lines != n || le.Offset != valid {
				t.Fatalf("format %d, %s line damaged: valid %d, err %v; want line %d of %d", format, name, valid, err, tc.line, n)
			}
			if tc.line == n && (valid != lastStart || !strings.Contains(err.Error(), fmt.Sprintf("line %d, its last, is corrupt", n))) {
				t.Errorf("format %d: valid %d (want %d), err %v", format, valid, lastStart, err)
			}
		}
		// Torn: the same line without its newline is cut silently.
		if _, valid, err := ReadJournal(bytes.NewReader(flipIn(t, good, n)[:len(good)-1]), func(state.Entry) error { return nil }); err != nil || valid != lastStart {
			t.Errorf("format %d, torn last line: valid %d, err %v", format, valid, err)
		}
	}
}

// TestScanJournal: the lines past the intact prefix are returned as they
// are, decoded as far as they can be, for repair to count.
func TestScanJournal(t *testing.T) {
	good := sampleJournal(t, 2)
	data := append(flipIn(t, good, 3), "0123"...) // and a torn tail
	h, valid, bad, dropped := ScanJournal(data)
	var le *JournalLineError
	if h.Lineage != "l" || !errors.As(bad, &le) || le.Line != 3 {
		t.Fatalf("header %+v, bad %v", h, bad)
	}
	var rest []byte
	for _, d := range dropped {
		rest = append(rest, d.Bytes...)
	}
	if !bytes.Equal(rest, data[valid:]) {
		t.Fatal("the dropped lines are not the bytes after the intact prefix")
	}
	// Every line from 3 on, the last one torn.
	last := dropped[len(dropped)-1]
	if want := bytes.Count(good, []byte("\n")) - 2 + 1; len(dropped) != want || dropped[0].Line != 3 || dropped[0].Verified || !dropped[1].Verified || !last.Torn || last.Readable() {
		t.Fatalf("dropped %+v", dropped)
	}
	// Line 3 holds the delivered/failed outcome; the bit flipped is in its
	// time, so it still decodes.
	if e := dropped[0].Entry; e == nil || e.Type != state.EntryOutcome || e.Items[0].Outcomes[0].Outcome != state.Delivered {
		t.Errorf("line 3 = %+v", dropped[0].Entry)
	}

	// A damaged header: the entries after it are still decoded.
	_, valid, _, dropped = ScanJournal(flipIn(t, good, 1))
	if valid != 0 || len(dropped) != bytes.Count(good, []byte("\n")) || dropped[1].Entry == nil || dropped[1].Entry.Type != state.EntryIntent {
		t.Fatalf("damaged header: valid %d, dropped %+v", valid, dropped)
	}
	// A newer journal is left whole.
	newer, _ := AppendJournalLine(nil, JournalHeader{Journal: 9, Lineage: "l"})
	if _, _, bad, dropped := ScanJournal(newer); dropped != nil || bad == nil {
		t.Errorf("newer journal: %v, %v", bad, dropped)
	}
}

func FuzzScanJournal(f *testing.F) {
	good := sampleJournal(f, 2)
	f.Add(good)
	f.Add(flipIn(f, good, 3))
	f.Add(append(append([]byte{}, good...), "\x00\x00garbage"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, valid, bad, dropped := ScanJournal(data)
		var nf *NewerFormatError
		if errors.As(bad, &nf) {
			return
		}
		var rest []byte
		for i, d := range dropped {
			if d.Torn && i != len(dropped)-1 {
				t.Fatal("torn line not last")
			}
			rest = append(rest, d.Bytes...)
		}
		if valid < 0 || valid > int64(len(data)) || !bytes.Equal(rest, data[valid:]) {
			t.Fatalf("valid %d of %d, dropped bytes differ", valid, len(data))
		}
		var le *JournalLineError
		if bad != nil && errors.As(bad, &le) && (le.Offset != valid || le.Line > le.Lines) {
			t.Fatalf("line error %+v, valid %d", le, valid)
		}
	})
}

// TestFormat4Migrated: a format-4 snapshot (no ledger) is read, each
// recorded target is in the ledger with its address, content, request id
// and time, and the next write is format 5.
func TestFormat4Migrated(t *testing.T) {
	s := state.New("test")
	c := message.Content{Title: "Coupon", Body: "Your 10% coupon"}
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s.Messages["notification.y"] = &state.Message{Address: "notification.y", Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: "fp", Content: c, Targets: map[string]*state.Target{
			"bob":   {Outcome: state.Delivered, Fingerprint: "fp", RequestID: "req-1", Time: at, DeviceCount: 1},
			"carol": {Outcome: state.Unknown, Fingerprint: "fp", Time: at},
		}}
	var buf bytes.Buffer
	if err := encode(&buf, s, 4); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeCompact(bytes.NewReader(buf.Bytes()))
	if err != nil || back.Version != 4 {
		t.Fatalf("format 4: %v", err)
	}
	for id, want := range map[string]state.Outcome{"bob": state.Delivered, "carol": state.Unknown} {
		h := back.TargetHistory(message.TargetUsers, id)
		if len(h) != 1 || h[0].Outcome != want || h[0].Address != "notification.y" || h[0].Content.Body != c.Body || !h[0].Time.Equal(at) {
			t.Fatalf("history of %s after migration: %+v", id, h)
		}
	}
	if h := back.TargetHistory(message.TargetUsers, "bob"); h[0].RequestID != "req-1" {
		t.Fatalf("request id lost: %+v", h)
	}
	if data := encodeStateBytes(t, back); !bytes.HasPrefix(data, curVersion) {
		t.Errorf("not migrated: %q", data[:40])
	}
}

// curVersion and nextVersion start the header of a snapshot of the
// current format and of the next one.
var (
	curVersion  = []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion))
	nextVersion = []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion+1))
)
