package statefile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// noParallel and noShare make encodeBody the reference: each part on one
// goroutine, each list encoded where it is written.
func noParallel(*state.State) (int, bool) { return 0, false }
func noShare(*state.State) *encodedList   { return nil }
func encodeRef(t testing.TB, st *state.State) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encodeBody(&b, st, state.FormatVersion, noParallel, noShare); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSharedList: a snapshot whose recipients list a message was sent to
// in full encodes the list once and copies it for the message, and is
// byte for byte the reference's, its two parts on one goroutine or two;
// where no message holds exactly the list's ids (part of them, or other
// ids since), the message's are encoded. Ids are compared as strings:
// equal ids in other memory are the same ids.
func TestSharedList(t *testing.T) {
	const n = 60_000 // about 180 KB encoded: more than spillAt
	tests := []struct {
		name string
		// sent is how many ids of the list the message is sent to.
		sent int
		// copied: the message is sent to equal ids in other memory.
		copied bool
		// change alters the state after the message was sent.
		change func(st *state.State)
		// copies is how often the list's encoding, made once, is written
		// (0: not made).
		copies int
	}{
		{"a message sent to the whole list", n, false, nil, 2},
		{"a message sent to part of it", n / 2, false, nil, 0},
		{"a message sent to a copy of the list", n, true, nil, 2},
		{"the list copied to other memory", n, false, func(st *state.State) {
			ids := make([]string, len(st.Recipients.UserIDs))
			for i, id := range st.Recipients.UserIDs {
				ids[i] = strings.Clone(id)
			}
			st.Recipients = &state.Snapshot{FetchedAt: st.Recipients.FetchedAt, UserIDs: ids}
		}, 2},
		{"the list changed in place", n, false, func(st *state.State) { st.Recipients.UserIDs[n/3] = "u9999999" }, 1},
		{"a target changed", n, false, func(st *state.State) {
			st.Messages["notification.launch"].SetTarget("u0000017", &state.Target{Outcome: state.Failed})
		}, 2},
		{"a target removed", n, false, func(st *state.State) { st.Messages["notification.launch"].DeleteTarget("u0000017") }, 0},
		{"no recipients list", n, false, func(st *state.State) { st.Recipients = nil }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := listState(t, n, tt.sent, tt.copied)
			if tt.change != nil {
				tt.change(st)
			}
			want := encodeRef(t, st)
			var got bytes.Buffer
			if err := Encode(&got, st); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Encode wrote %d bytes that differ from the reference's %d", got.Len(), len(want))
			}
			// The list's encoding marked shows where it is copied rather
			// than encoded.
			var enc []byte
			marked := func(s *state.State) *encodedList {
				l := sharedList(s)
				if l != nil {
					l.encode()
					l.enc[len(l.enc)-1] ^= 0xff
					enc = l.enc
				}
				return l
			}
			for _, parallel := range []bool{false, true} {
				par := func(*state.State) (int, bool) { return n, parallel }
				var got bytes.Buffer
				if err := encodeBody(&got, st, state.FormatVersion, par, sharedList); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("parallel %v: %d bytes that differ from the reference's %d", parallel, got.Len(), len(want))
				}
				enc = nil
				var out bytes.Buffer
				if err := encodeBody(&out, st, state.FormatVersion, par, marked); err != nil {
					t.Fatal(err)
				}
				if c := bytes.Count(out.Bytes(), enc); enc == nil && tt.copies != 0 || enc != nil && c != tt.copies {
					t.Errorf("parallel %v: the list's encoding was written %d times (made: %v), want %d", parallel, c, enc != nil, tt.copies)
				}
			}
			back, err := Decode(bytes.NewReader(got.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if m := back.Messages["notification.launch"]; st.Recipients != nil && !slices.Equal(back.Recipients.UserIDs, st.Recipients.UserIDs) ||
				m.TargetCount() != st.Messages["notification.launch"].TargetCount() {
				t.Fatalf("read back %d targets", m.TargetCount())
			}
		})
	}
}

// listState is the state a run leaves after sending one notification to
// the first sent ids of a recipients list of n, in requests of 500 taken
// from the list's pieces as they arrived (4,096 ids each; with copied, a
// copy of each in other memory).
func listState(t testing.TB, n, sent int, copied bool) *state.State {
	t.Helper()
	var pieces [][]string
	var all []string
	for start := 0; start < n; start += 4096 {
		piece := make([]string, min(4096, n-start))
		for i := range piece {
			piece[i] = fmt.Sprintf("u%07d", start+i)
		}
		pieces = append(pieces, piece)
		all = append(all, piece...) // the headers joined, the strings shared
	}
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	st := state.New("test")
	st.Lineage = "list"
	st.Compact = true
	if err := st.ApplyEntry(state.Entry{Type: state.EntrySnapshot, Time: at, Items: []state.Item{{Targets: all}}}); err != nil {
		t.Fatal(err)
	}
	content := message.Content{Title: "Launch", Body: "It is here"}
	batch := 0
	left := sent
	for _, piece := range pieces {
		if copied {
			piece = slices.Clone(piece)
			for i, id := range piece {
				piece[i] = strings.Clone(id)
			}
		}
		for len(piece) > 0 && left > 0 {
			ids := piece[:min(500, len(piece), left)]
			piece, left = piece[len(ids):], left-len(ids)
			rec := &state.Target{Outcome: state.Delivered, DeviceCount: 1, RequestID: fmt.Sprintf("req-%d", batch), Time: at}
			outs := make([]*state.Target, len(ids))
			for i := range outs {
				outs[i] = rec
			}
			for _, e := range []state.Entry{
				{Type: state.EntryIntent, Batch: int64(batch), Time: at, Items: []state.Item{{Address: "notification.launch", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &content, Targets: ids}}},
				{Type: state.EntryOutcome, Batch: int64(batch), Time: at, RequestID: rec.RequestID, Status: 200, Items: []state.Item{{Address: "notification.launch", Fingerprint: "fp", Targets: ids, Outcomes: outs}}},
			} {
				if err := st.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
			}
			batch++
		}
	}
	return st
}

// FuzzSharedList: a snapshot that encodes its recipients list once for
// the messages sent to it (sharedList, encoder.targets) is byte for byte
// the reference's, which encodes each list where it is written, whatever
// was done to the list or the message since the message was sent, on one
// goroutine or two.
func FuzzSharedList(f *testing.F) {
	f.Add(uint16(0), uint16(0), false, byte(0), uint16(0), false)
	f.Add(uint16(100), uint16(100), true, byte(1), uint16(17), true)
	f.Add(uint16(100), uint16(0), false, byte(1), uint16(17), false)
	f.Add(uint16(100), uint16(0), true, byte(5), uint16(17), true)
	f.Add(uint16(300), uint16(0), false, byte(2), uint16(4000), false)
	f.Add(uint16(0), uint16(0), false, byte(6), uint16(0), true)
	f.Fuzz(func(t *testing.T, extra, unsent uint16, copied bool, change byte, at uint16, parallel bool) {
		n := listFrom + int(extra)%2000
		st := listState(t, n, n-int(unsent)%8, copied)
		list, m := st.Recipients.UserIDs, st.Messages["notification.launch"]
		i := int(at) % n
		switch change % 8 {
		case 1: // the list changed in place
			list[i] = "u9999999"
		case 2: // the list's first id changed in place
			list[0] = "a"
		case 3: // a copy of the list in other memory
			c := make([]string, n)
			for k, id := range list {
				c[k] = strings.Clone(id)
			}
			st.Recipients = &state.Snapshot{FetchedAt: st.Recipients.FetchedAt, UserIDs: c}
		case 4: // a target removed
			m.DeleteTarget(list[i])
		case 5: // a target's record changed
			m.SetTarget(list[i], &state.Target{Outcome: state.Failed})
		case 6: // a target added out of order
			m.SetTarget(list[i]+"x", &state.Target{Outcome: state.Unknown})
		case 7: // the list one id shorter
			st.Recipients = &state.Snapshot{FetchedAt: st.Recipients.FetchedAt, UserIDs: list[:n-1]}
		}
		want := encodeRef(t, st)
		var got bytes.Buffer
		if err := encodeBody(&got, st, state.FormatVersion, func(*state.State) (int, bool) { return n, parallel }, sharedList); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d bytes that differ from the reference's %d", got.Len(), len(want))
		}
	})
}
