package statefile_test

import (
	"bytes"
	"errors"
	"testing"

	"pushform/state"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// TestJournalZeroTail reads format-3 journals written over zeros laid down
// ahead: the journal ends where the zeros start, after a torn write or
// none, and data after zeros is a gap, reported as damage. A format-2 line
// may hold a NUL as data.
func TestJournalZeroTail(t *testing.T) {
	intent, outcome := statetest.BatchEntries(7, 500)
	lines := func(format int) (header, l1, l2 []byte) {
		header, _ = statefile.AppendJournalLine(nil, statefile.JournalHeader{Journal: format, Lineage: "l", Serial: 1})
		l1, _ = statefile.AppendEntryLine(nil, intent, format)
		l2, _ = statefile.AppendEntryLine(nil, outcome, format)
		return
	}
	h3, a3, b3 := lines(3)
	h2, a2, b2 := lines(2)
	if bytes.IndexByte(a2, 0) < 0 && bytes.IndexByte(b2, 0) < 0 {
		t.Fatal("the format-2 lines hold no NUL: the last case tests nothing")
	}
	if bytes.IndexByte(a3, 0) >= 0 || bytes.IndexByte(b3, 0) >= 0 {
		t.Fatal("a format-3 line holds a NUL")
	}
	zeros := make([]byte, 5000)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name    string
		data    []byte
		entries int
		valid   int
		damaged bool
		dropped int // lines ScanJournal reports after the valid prefix
	}{
		{"zeros after the lines", cat(h3, a3, b3, zeros), 2, len(h3) + len(a3) + len(b3), false, 0},
		{"no zeros", cat(h3, a3, b3), 2, len(h3) + len(a3) + len(b3), false, 0},
		{"torn line, then zeros", cat(h3, a3, b3[:len(b3)/2], zeros), 1, len(h3) + len(a3), false, 1},
		{"torn line ending in its own bytes, then zeros", cat(h3, a3, b3[:len(b3)-1], zeros), 1, len(h3) + len(a3), false, 1},
		{"torn header, then zeros", cat(h3[:5], zeros), 0, 0, false, 1},
		{"only zeros", zeros, 0, 0, false, 0},
		{"a gap of zeros, then a line", cat(h3, a3[:100], zeros, b3, zeros), 0, len(h3), true, 1},
		{"zeros, then a line", cat(h3, zeros, b3), 0, len(h3), true, 1},
		{"format 2: NULs are data", cat(h2, a2, b2), 2, len(h2) + len(a2) + len(b2), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			_, valid, err := statefile.ReadJournal(bytes.NewReader(tc.data), func(state.Entry) error { n++; return nil })
			var le *statefile.JournalLineError
			if tc.damaged != errors.As(err, &le) || !tc.damaged && err != nil {
				t.Fatalf("err = %v, want damage: %v", err, tc.damaged)
			}
			if !tc.damaged && n != tc.entries {
				t.Errorf("read %d entries, want %d", n, tc.entries)
			}
			if valid != int64(tc.valid) {
				t.Errorf("valid = %d, want %d", valid, tc.valid)
			}
			_, _, _, dropped := statefile.ScanJournal(tc.data)
			if len(dropped) != tc.dropped {
				t.Errorf("ScanJournal dropped %d lines, want %d", len(dropped), tc.dropped)
			}
			for _, d := range dropped {
				if bytes.HasSuffix(d.Bytes, []byte{0}) {
					t.Errorf("dropped line %d ends in zeros laid down ahead", d.Line)
				}
			}
		})
	}
}
