package state

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sampleJournal(t testing.TB) []byte {
	var b []byte
	var err error
	b, err = appendJournalLine(b, journalHeader{Journal: journalFormat, Lineage: "l", Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []Entry{
		{Type: EntryIntent, Batch: 1, Time: t0, Items: []Item{{Address: "a", Fingerprint: "fp", Content: &Content{Title: "t"}, Targets: []string{"u1", "u2"}}}},
		{Type: EntryOutcome, Batch: 1, Time: t0, RequestID: "r", Items: []Item{{Address: "a", Targets: []string{"u1", "u2"}, Outcomes: []Target{{Outcome: Delivered}, {Outcome: Failed}}}}},
		{Type: EntryForget, Items: []Item{{Address: "a", Targets: []string{"u2"}}}},
		{Type: EntrySnapshot, Time: t0, Items: []Item{{Targets: []string{"u1"}}}},
	} {
		if b, err = appendJournalLine(b, e); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func FuzzReadState(f *testing.F) {
	var buf bytes.Buffer
	s := New("test")
	s.Messages["a"] = &Message{Address: "a", Targets: map[string]Target{"u1": {Outcome: Delivered}}}
	if err := encodeState(&buf, s); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"version":1,"lineage":"x","messages":{"a":null}}`))
	f.Add([]byte(`{"version":1,"lineage":"x","messages":{"a":{"targets":null}}}`))
	f.Add([]byte(`{"version":1,"lineage":"x"} {}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeState(bytes.NewReader(data))
		if err != nil {
			if s != nil {
				t.Fatal("state returned with an error")
			}
		} else {
			if s.Lineage == "" || s.Messages == nil {
				t.Fatalf("decoded state without lineage or messages: %+v", s)
			}
			// A decoded state must take journal entries without panicking.
			s.ApplyEntry(Entry{Type: EntryIntent, Items: []Item{{Address: "a", Targets: []string{"u"}}}})
			s.ApplyEntry(Entry{Type: EntryOutcome, Items: []Item{{Address: "a", Targets: []string{"u"}, Outcomes: []Target{{}}}}})
		}
		decodeStateHeader(bytes.NewReader(data))
		checkStateEnd(bytes.NewReader(data), int64(len(data)))
	})
}

func FuzzReadJournal(f *testing.F) {
	good := sampleJournal(f)
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Add(append(append([]byte{}, good...), "\x00\x00garbage"...))
	f.Add([]byte("00000000 {}\n"))
	f.Add([]byte("zzzzzzzz {\"journal\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New("test")
		h, valid, err := readJournal(bytes.NewReader(data), func(e Entry) error { return s.ApplyEntry(e) })
		if valid < 0 || valid > int64(len(data)) {
			t.Fatalf("valid = %d for %d bytes", valid, len(data))
		}
		if err == nil && valid > 0 && h.Journal == 0 {
			t.Fatal("intact lines without a header")
		}
	})
}

func TestReadJournal(t *testing.T) {
	good := sampleJournal(t)
	s := New("test")
	h, valid, err := readJournal(bytes.NewReader(good), s.ApplyEntry)
	if err != nil || valid != int64(len(good)) || h.Lineage != "l" || h.Serial != 1 {
		t.Fatalf("readJournal = %+v, %d, %v; want the header and all %d bytes", h, valid, err, len(good))
	}
	if got := s.Messages["a"].Targets; len(got) != 1 || got["u1"].Outcome != Delivered || got["u1"].RequestID != "r" {
		t.Errorf("targets after replay = %+v", got)
	}
	if s.Recipients == nil || len(s.Recipients.UserIDs) != 1 {
		t.Errorf("recipients after replay = %+v", s.Recipients)
	}

	// Every cut of the last line is a torn write: the rest is kept.
	lastStart := bytes.LastIndexByte(good[:len(good)-1], '\n') + 1
	for cut := lastStart + 1; cut < len(good); cut++ {
		_, valid, err := readJournal(bytes.NewReader(good[:cut]), func(Entry) error { return nil })
		if err != nil || valid != int64(lastStart) {
			t.Fatalf("cut at %d: valid %d, err %v; want %d, nil", cut, valid, err, lastStart)
		}
	}

	if _, _, err := readJournal(strings.NewReader(`{"type":"intent"}`+"\n"+`{"type":"intent"}`+"\n"), func(Entry) error { return nil }); err == nil {
		t.Error("lines without checksums accepted")
	}
	bad, _ := appendJournalLine(nil, map[string]int{"nojournal": 1})
	if _, _, err := readJournal(bytes.NewReader(append(bad, good...)), func(Entry) error { return nil }); err == nil {
		t.Error("journal without a header accepted")
	}
}
