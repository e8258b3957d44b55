package statefile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// TestSnapshotSpillSameBytes checks that a snapshot written as it is
// encoded (spilling every spillAt bytes, its two parts on two goroutines
// or on one) is byte for byte the snapshot gathered whole, and reads back, for a state whose recipients, messages
// and ledger each span several spills.
func TestSnapshotSpillSameBytes(t *testing.T) {
	st, all := spillState(t, true)
	if _, ok := inParallel(st); !ok {
		t.Fatal("the state is too small for the parallel encoding this test checks")
	}
	var got bytes.Buffer
	if err := Encode(&got, st); err != nil {
		t.Fatal(err)
	}
	want := wholeSnapshot(t, st)
	if len(want) < 4*spillAt {
		t.Fatalf("the snapshot is %d bytes: too small to spill several times", len(want))
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("spilled snapshot differs from the whole one (%d vs %d bytes)", got.Len(), len(want))
	}
	var seq bytes.Buffer
	if err := encodeBody(&seq, st, state.FormatVersion, func(*state.State) (int, bool) { return 0, false }, sharedList); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seq.Bytes(), want) {
		t.Fatalf("the snapshot encoded on one goroutine differs from the whole one (%d vs %d bytes)", seq.Len(), len(want))
	}
	// Compact tables are written run by run (Message.TargetRuns), maps
	// target by target: the bytes are the same.
	maps, _ := spillState(t, false)
	if m := wholeSnapshot(t, maps); !bytes.Equal(m, want) {
		t.Fatalf("the snapshot of the state held in maps differs (%d vs %d bytes)", len(m), len(want))
	}
	back, err := Decode(bytes.NewReader(got.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if n, m := len(back.Recipients.UserIDs), back.Messages["notification.kept"].TargetCount(); n != len(all) || m != 150_000 ||
		len(back.Ledger) != 1 || back.Ledger[0].TargetCount() != 150_000 {
		t.Fatalf("read back %d recipients, %d targets and %d ledger entries", n, m, len(back.Ledger))
	}
}

// spillState is a state of two messages of 150,000 targets each, one of
// them forgotten into the ledger, with the recipients of both.
func spillState(t *testing.T, compact bool) (*state.State, []string) {
	t.Helper()
	st := state.New("test")
	st.Lineage = "spill"
	st.Compact = compact
	var all []string
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	content := message.Content{Title: "Launch", Body: "It is here"}
	rec := &state.Target{Outcome: state.Delivered, DeviceCount: 1, RequestID: "req-1", Time: at}
	for batch := range 600 {
		addr := "notification.kept"
		if batch >= 300 { // a second message, forgotten below into the ledger
			addr = "notification.gone"
		}
		ids, outs := make([]string, 500), make([]*state.Target, 500)
		for i := range ids {
			ids[i], outs[i] = fmt.Sprintf("u%07d", batch*500+i), rec
		}
		all = append(all, ids...)
		for _, e := range []state.Entry{
			{Type: state.EntryIntent, Batch: int64(batch), Time: at, Items: []state.Item{{Address: addr, Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &content, Targets: ids}}},
			{Type: state.EntryOutcome, Batch: int64(batch), Time: at, RequestID: "req-1", Status: 200, Items: []state.Item{{Address: addr, Fingerprint: "fp", Targets: ids, Outcomes: outs}}},
		} {
			if err := st.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.ApplyEntry(state.Entry{Type: state.EntryForget, Time: at, Items: []state.Item{{Address: "notification.gone"}}}); err != nil {
		t.Fatal(err)
	}
	if len(st.Ledger) != 1 {
		t.Fatalf("ledger has %d entries, want 1", len(st.Ledger))
	}
	st.Recipients = &state.Snapshot{FetchedAt: at, UserIDs: all}
	return st, all
}

// wholeSnapshot is the snapshot of s encoded into memory first, as
// Encode wrote it before it spilled.
func wholeSnapshot(t *testing.T, s *state.State) []byte {
	t.Helper()
	hdr, err := json.Marshal(Header{Version: state.FormatVersion, Lineage: s.Lineage, Serial: s.Serial, Environment: s.Environment})
	if err != nil {
		t.Fatal(err)
	}
	hdr = append(hdr, '\n')
	e := encoder{snapshot: state.FormatVersion}
	e.stateBody(s)
	var b strings.Builder
	b.Write(hdr)
	b.Write(e.b)
	b.Write(binary.LittleEndian.AppendUint32(nil, crc32.Update(crc32.Checksum(hdr, castagnoli), castagnoli, e.b)))
	b.WriteString(snapshotTrailer)
	return []byte(b.String())
}
