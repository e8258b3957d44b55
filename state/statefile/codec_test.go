package statefile

import (
	"bytes"
	"fmt"
	"pushform/message"
	"pushform/state"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func manyIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%d", i)
	}
	return ids
}

func sampleJournal(t testing.TB, format int) []byte {
	var b []byte
	var err error
	b, err = AppendJournalLine(b, JournalHeader{Journal: format, Lineage: "l", Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []state.Entry{
		{Type: state.EntryIntent, Batch: 1, Time: t0, Items: []state.Item{{Address: "a", Fingerprint: "fp", Content: &message.Content{Title: "t"}, Targets: []string{"u1", "u2"}}}},
		{Type: state.EntryOutcome, Batch: 1, Time: t0, RequestID: "r", Items: []state.Item{{Address: "a", Targets: []string{"u1", "u2"}, Outcomes: []*state.Target{{Outcome: state.Delivered}, {Outcome: state.Failed}}}}},
		{Type: state.EntryForget, Items: []state.Item{{Address: "a", Targets: []string{"u2"}}}},
		{Type: state.EntrySnapshot, Time: t0, Items: []state.Item{{Targets: []string{"u1"}}}},
		// Many alike outcomes: their runs take fewer bytes than targets.
		{Type: state.EntryIntent, Batch: 2, Time: t0, Items: []state.Item{{Address: "b", Targets: manyIDs(40)}}},
		{Type: state.EntryOutcome, Batch: 2, Time: t0, RequestID: "r2", Items: []state.Item{{Address: "b", Targets: manyIDs(40), Outcomes: slices.Repeat([]*state.Target{{}}, 40)}}},
		// A move: the state of b now belongs to c.
		{Type: state.EntryMove, Time: t0, Items: []state.Item{{Address: "b", To: "c"}}},
		// Long shared prefixes at the very end of an entry.
		{Type: state.EntryForget, Items: []state.Item{{Address: "a", Targets: []string{"user-with-a-long-id-0001", "user-with-a-long-id-0002"}}}},
	} {
		if b, err = AppendEntryLine(b, e, format); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// v1State is a state as format 1 (plain JSON) wrote it.
const v1State = `{"version":1,"lineage":"x","serial":3,"environment":"test",` +
	`"recipients":{"fetched_at":"2026-05-01T00:00:00Z","user_ids":["u1","u2"]},` +
	`"messages":{"a":{"address":"a","kind":"notification","target_kind":"user_ids","fingerprint":"fp",` +
	`"content":{"title":"T","body":"B","badge_count":0},"targets":{` +
	`"u1":{"outcome":"delivered","fingerprint":"fp","request_id":"r1","time":"2026-05-01T00:00:00Z","device_count":2},` +
	`"u2":{"outcome":"skipped","fingerprint":"fp","request_id":"r1","time":"2026-05-01T00:00:00+02:00","reason":"no_active_device","unreachable_since":"2026-04-01T00:00:00Z"}}}}}`

// currentHeader starts a snapshot of the format Encode writes.
var currentHeader = []byte(fmt.Sprintf(`{"version":%d,`, state.FormatVersion))

func encodeStateBytes(t testing.TB, s *state.State) []byte {
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeStateV1Migrates(t *testing.T) {
	s, err := Decode(strings.NewReader(v1State))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.Serial != 3 || len(s.Recipients.UserIDs) != 2 || s.Messages["a"].Targets["u2"].UnreachableSince == nil {
		t.Fatalf("decoded v1 state = %+v", s)
	}
	data := encodeStateBytes(t, s)
	if !bytes.HasPrefix(data, currentHeader) {
		t.Fatalf("re-encoded state does not start with a version %d header: %q", state.FormatVersion, data[:min(len(data), 40)])
	}
	back, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range s.Messages["a"].Targets {
		got := back.Messages["a"].Targets[id]
		if got.Outcome != want.Outcome || !got.Time.Equal(want.Time) || got.RequestID != want.RequestID ||
			got.DeviceCount != want.DeviceCount || (got.UnreachableSince == nil) != (want.UnreachableSince == nil) {
			t.Errorf("target %s after migration = %+v; want %+v", id, got, want)
		}
	}
	if c := back.Messages["a"].Content; c.BadgeCount == nil || *c.BadgeCount != 0 || c.Title != "T" {
		t.Errorf("content after migration = %+v", c)
	}
}

// fidelityState has what format 3 added: unanswered counts and the tags of
// earlier content, one of them no longer held by any target.
func fidelityState() *state.State {
	s := state.New("test")
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s.Messages["a"] = &state.Message{Address: "a", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp3",
		Content:     message.Content{Title: "T", Body: "B", Tag: "promo-c"},
		EarlierTags: map[string]string{"fp1": "promo-a", "fp2": "", "gone": "promo-x"},
		Targets: map[string]*state.Target{
			"u1": {Outcome: state.Delivered, Fingerprint: "fp1", RequestID: "r1", Time: t0, DeviceCount: 1},
			"u2": {Outcome: state.Delivered, Fingerprint: "fp2", RequestID: "r2", Time: t0, DeviceCount: 1},
			"u3": {Outcome: state.Unknown, Fingerprint: "fp3", RequestID: "r3", Time: t0, Unanswered: 2},
			"u4": {Outcome: state.Unknown, Fingerprint: "fp3", Time: t0},
		}}
	return s
}

func TestSnapshotFormat3(t *testing.T) {
	s := fidelityState()
	data := encodeStateBytes(t, s)
	if !bytes.HasPrefix(data, currentHeader) {
		t.Fatalf("header %q", data[:min(len(data), 40)])
	}
	back, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	m := back.Messages["a"]
	if want := map[string]string{"fp1": "promo-a", "fp2": ""}; !reflect.DeepEqual(m.EarlierTags, want) {
		t.Errorf("earlier tags %v, want %v (the tag no target holds is dropped)", m.EarlierTags, want)
	}
	for id, want := range s.Messages["a"].Targets {
		if got := m.Targets[id]; *got != *want {
			t.Errorf("%s = %+v, want %+v", id, got, want)
		}
	}
}

// TestSnapshotFormat2StillRead: a format-2 snapshot (no unanswered counts,
// no earlier tags) reads with zero counts and unknown earlier tags, and is
// written back as format 3.
func TestSnapshotFormat2StillRead(t *testing.T) {
	s := fidelityState()
	var buf bytes.Buffer
	if err := encode(&buf, s, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte(`{"version":2,`)) {
		t.Fatalf("header %q", buf.Bytes()[:40])
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	m := back.Messages["a"]
	if back.Version != 2 || m.EarlierTags != nil || m.Targets["u3"].Unanswered != 0 || m.Targets["u3"].RequestID != "r3" {
		t.Fatalf("format 2 decoded as %+v, %+v", back, m.Targets["u3"])
	}
	if tag, ok := m.TagOf("fp1"); ok {
		t.Errorf("the tag of earlier content is not in format 2, got %q", tag)
	}
	if tag, ok := m.TagOf("fp3"); !ok || tag != "promo-c" {
		t.Errorf("TagOf(current) = %q, %v", tag, ok)
	}
	if data := encodeStateBytes(t, back); !bytes.HasPrefix(data, currentHeader) {
		t.Errorf("not migrated: %q", data[:40])
	}
}

func TestDecodeStateDamaged(t *testing.T) {
	s := state.New("test")
	s.Messages["a"] = &state.Message{Address: "a", Targets: map[string]*state.Target{"u1": {Outcome: state.Delivered}, "u2": {Outcome: state.Failed, Message: "m"}}}
	good := encodeStateBytes(t, s)
	nl := bytes.IndexByte(good, '\n')
	flipped := append([]byte(nil), good...)
	flipped[nl+3] ^= 0x40
	for name, data := range map[string][]byte{
		"truncated":      good[:len(good)-1],
		"body bit flip":  flipped,
		"header only":    good[:nl+1],
		"newer version":  bytes.Replace(good, currentHeader, []byte(`{"version":9,`), 1),
		"trailing bytes": append(append([]byte(nil), good...), 'x'),
	} {
		if _, err := Decode(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
	if err := CheckEnd(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Errorf("CheckEnd of a whole snapshot: %v", err)
	}
	if err := CheckEnd(bytes.NewReader(good[:len(good)-3]), int64(len(good)-3)); err == nil {
		t.Error("CheckEnd accepted a truncated snapshot")
	}
}

func FuzzReadState(f *testing.F) {
	s := state.New("test")
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600))
	s.Recipients = &state.Snapshot{UserIDs: []string{"u1", "u10", "user-with-a-long-id-0001", "user-with-a-long-id-0002"}}
	s.Messages["a"] = &state.Message{Address: "a", Kind: "notification", Targets: map[string]*state.Target{
		"u1":  {Outcome: state.Delivered, DeviceCount: -1, RequestID: "r"},
		"u10": {Outcome: state.Skipped, Reason: "no_active_device", UnreachableSince: &since},
		"u2":  {Outcome: "odd"},
	}}
	f.Add(encodeStateBytes(f, s))
	f.Add(encodeStateBytes(f, state.New("test")))
	f.Add(encodeStateBytes(f, fidelityState()))
	var v2 bytes.Buffer
	encode(&v2, fidelityState(), 2)
	f.Add(v2.Bytes())
	f.Add([]byte(v1State))
	f.Add([]byte(`{"version":1,"lineage":"x","messages":{"a":null}}`))
	f.Add([]byte(`{"version":1,"lineage":"x","messages":{"a":{"targets":null}}}`))
	f.Add([]byte(`{"version":1,"lineage":"x"} {}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data))
		if err != nil {
			if s != nil {
				t.Fatal("state returned with an error")
			}
		} else {
			if s.Lineage == "" || s.Messages == nil {
				t.Fatalf("decoded state without lineage or messages: %+v", s)
			}
			// Whatever decodes re-encodes, and reads back as what was
			// decoded: nothing is lost or bent on the way.
			back, err := Decode(bytes.NewReader(encodeStateBytes(t, s)))
			if err != nil {
				t.Fatalf("re-encoded state does not decode: %v", err)
			}
			if d := diffState(s, back); d != "" {
				t.Fatalf("re-encoded state differs from the one decoded: %s", d)
			}
			if back.Version != state.FormatVersion {
				t.Fatalf("re-encoded state has version %d, want %d", back.Version, state.FormatVersion)
			}
			// A decoded state must take journal entries without panicking.
			s.ApplyEntry(state.Entry{Type: state.EntryIntent, Items: []state.Item{{Address: "a", Targets: []string{"u"}}}})
			s.ApplyEntry(state.Entry{Type: state.EntryOutcome, Items: []state.Item{{Address: "a", Targets: []string{"u"}, Outcomes: []*state.Target{{}}}}})
		}
		DecodeHeader(bytes.NewReader(data))
		CheckEnd(bytes.NewReader(data), int64(len(data)))
	})
}

// checkEntryRoundTrip checks that a decoded entry re-encodes and reads
// back as itself.
func checkEntryRoundTrip(t *testing.T, e state.Entry) {
	line, err := AppendEntryLine(nil, e, JournalFormat)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeEntry(line[9:len(line)-1], JournalFormat)
	if err != nil {
		t.Fatalf("re-encoded entry does not decode: %v", err)
	}
	if d := diffEntry(e, back); d != "" {
		t.Fatalf("re-encoded entry differs from the one decoded: %s", d)
	}
}

func FuzzReadJournal(f *testing.F) {
	for _, format := range []int{1, 2} {
		good := sampleJournal(f, format)
		f.Add(good)
		f.Add(good[:len(good)-7])
		f.Add(append(append([]byte{}, good...), "\x00\x00garbage"...))
	}
	for _, line := range bytes.Split(sampleJournal(f, 2), []byte("\n"))[1:] {
		if len(line) > 9 {
			f.Add(line[9:]) // a bare entry, for the direct decode
		}
	}
	f.Add([]byte("00000000 {}\n"))
	f.Add([]byte("zzzzzzzz {\"journal\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := state.New("test")
		h, valid, err := ReadJournal(bytes.NewReader(data), func(e state.Entry) error {
			checkEntryRoundTrip(t, e)
			return s.ApplyEntry(e)
		})
		// The checksums keep most inputs from the entry decoder: feed it
		// directly too.
		if e, err := decodeEntry(data, JournalFormat); err == nil {
			checkEntryRoundTrip(t, e)
			state.New("test").ApplyEntry(e)
		}
		if valid < 0 || valid > int64(len(data)) {
			t.Fatalf("valid = %d for %d bytes", valid, len(data))
		}
		if err == nil && valid > 0 && h.Journal == 0 {
			t.Fatal("intact lines without a header")
		}
	})
}

func TestReadJournal(t *testing.T) {
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) { testReadJournal(t, format) })
	}
}

func testReadJournal(t *testing.T, format int) {
	good := sampleJournal(t, format)
	s := state.New("test")
	h, valid, err := ReadJournal(bytes.NewReader(good), s.ApplyEntry)
	if err != nil || valid != int64(len(good)) || h.Lineage != "l" || h.Serial != 1 {
		t.Fatalf("ReadJournal = %+v, %d, %v; want the header and all %d bytes", h, valid, err, len(good))
	}
	if got := s.Messages["a"].Targets; len(got) != 1 || got["u1"].Outcome != state.Delivered || got["u1"].RequestID != "r" {
		t.Errorf("targets after replay = %+v", got)
	}
	if s.Messages["b"] != nil || s.Messages["c"] == nil || len(s.Messages["c"].Targets) != 40 || s.Messages["c"].Address != "c" {
		t.Errorf("after the move of b to c: b %v, c %+v", s.Messages["b"], s.Messages["c"])
	}
	if s.Recipients == nil || len(s.Recipients.UserIDs) != 1 {
		t.Errorf("recipients after replay = %+v", s.Recipients)
	}

	// Every cut of the last line is a torn write: the rest is kept.
	lastStart := bytes.LastIndexByte(good[:len(good)-1], '\n') + 1
	for cut := lastStart + 1; cut < len(good); cut++ {
		_, valid, err := ReadJournal(bytes.NewReader(good[:cut]), func(state.Entry) error { return nil })
		if err != nil || valid != int64(lastStart) {
			t.Fatalf("cut at %d: valid %d, err %v; want %d, nil", cut, valid, err, lastStart)
		}
	}

	if _, _, err := ReadJournal(strings.NewReader(`{"type":"intent"}`+"\n"+`{"type":"intent"}`+"\n"), func(state.Entry) error { return nil }); err == nil {
		t.Error("lines without checksums accepted")
	}
	bad, _ := AppendJournalLine(nil, map[string]int{"nojournal": 1})
	if _, _, err := ReadJournal(bytes.NewReader(append(bad, good...)), func(state.Entry) error { return nil }); err == nil {
		t.Error("journal without a header accepted")
	}
}
