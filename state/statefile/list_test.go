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

// TestEncodeWithList: a snapshot written with the recipients list a
// journal line encoded (EncodeWith) is byte for byte Encode's, and copies
// the list exactly where the state holds its very strings: as the
// recipients list, and as the targets of a message sent to all of them,
// whose runs come from other slices (the pieces of the list as it
// arrived) over the same strings. A copy of the list, or the list changed
// in place since (the very slice the journal line was encoded from), is
// encoded afresh, and so are the message's targets then.
func TestEncodeWithList(t *testing.T) {
	const n = 60_000 // about 180 KB encoded: more than spillAt
	tests := []struct {
		name string
		// sent is how many ids of the list the message is sent to.
		sent int
		// copied: the message is sent to equal ids in other memory.
		copied bool
		// change alters the state after the list was journaled.
		change func(st *state.State)
		// copies is how often the list's encoding is copied.
		copies int
	}{
		{"a message sent to the whole list", n, false, nil, 2},
		{"a message sent to part of it", n / 2, false, nil, 1},
		{"a message sent to a copy of the list", n, true, nil, 1},
		{"the list copied to other memory", n, false, func(st *state.State) {
			ids := make([]string, len(st.Recipients.UserIDs))
			for i, id := range st.Recipients.UserIDs {
				ids[i] = strings.Clone(id)
			}
			st.Recipients = &state.Snapshot{FetchedAt: st.Recipients.FetchedAt, UserIDs: ids}
		}, 0},
		{"the list changed in place", n, false, func(st *state.State) { st.Recipients.UserIDs[n/3] = "u9999999" }, 0},
		{"no recipients list", n, false, func(st *state.State) { st.Recipients = nil }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, list := listState(t, n, tt.sent, tt.copied)
			if tt.change != nil {
				tt.change(st)
			}
			var want, got bytes.Buffer
			if err := Encode(&want, st); err != nil {
				t.Fatal(err)
			}
			if err := EncodeWith(&got, st, list); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("EncodeWith wrote %d bytes that differ from Encode's %d", got.Len(), want.Len())
			}
			// The same list with its encoding marked shows where it is
			// copied rather than encoded.
			marked := &EncodedList{ids: list.ids, enc: slices.Clone(list.enc), sum: list.sum}
			marked.enc[len(marked.enc)-1] ^= 0xff
			var out bytes.Buffer
			if err := EncodeWith(&out, st, marked); err != nil {
				t.Fatal(err)
			}
			if c := bytes.Count(out.Bytes(), marked.enc); c != tt.copies {
				t.Errorf("the list's encoding was copied %d times, want %d", c, tt.copies)
			}
			if tt.copies == 0 {
				return
			}
			back, err := Decode(bytes.NewReader(got.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.Recipients.UserIDs, st.Recipients.UserIDs) || back.Messages["notification.launch"].TargetCount() != tt.sent {
				t.Fatalf("read back %d recipients and %d targets", len(back.Recipients.UserIDs), back.Messages["notification.launch"].TargetCount())
			}
		})
	}
}

// TestTakeList: a snapshot entry of a long list leaves its encoding to
// TakeList, once; a short list, an intent and no IDReuse leave none.
func TestTakeList(t *testing.T) {
	ids := make([]string, listFrom)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	entry := func(typ state.EntryType, ids []string) state.Entry {
		return state.Entry{Type: typ, Time: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Items: []state.Item{{Targets: ids}}}
	}
	for _, tt := range []struct {
		name string
		e    state.Entry
		want bool
	}{
		{"a recipients list", entry(state.EntrySnapshot, ids), true},
		{"a short list", entry(state.EntrySnapshot, ids[:listFrom-1]), false},
		{"an intent", entry(state.EntryIntent, ids), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r IDReuse
			line, err := AppendEntryLineReusing(nil, tt.e, JournalFormat, &r)
			if err != nil {
				t.Fatal(err)
			}
			if plain, _ := AppendEntryLine(nil, tt.e, JournalFormat); !bytes.Equal(line, plain) {
				t.Fatal("the line differs from the one written without an IDReuse")
			}
			l := r.TakeList()
			if (l != nil) != tt.want {
				t.Fatalf("TakeList kept a list: %v, want %v", l != nil, tt.want)
			}
			if l != nil {
				e := encoder{}
				e.ids(ids)
				if !bytes.Equal(l.enc, e.b) || !theseIDs(l.ids, ids) {
					t.Fatal("the kept encoding is not the list's")
				}
			}
			if r.TakeList() != nil {
				t.Fatal("TakeList returned the list twice")
			}
		})
	}
}

// listState is the state a run leaves after sending one notification to
// the first sent ids of a recipients list of n, in requests of 500 taken
// from the list's pieces as they arrived (4,096 ids each; with copied, a
// copy of each in other memory), and the list's encoding as the run
// journaled it.
func listState(t *testing.T, n, sent int, copied bool) (*state.State, *EncodedList) {
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
	list := state.Entry{Type: state.EntrySnapshot, Time: at, Items: []state.Item{{Targets: all}}}
	var r IDReuse
	if _, err := AppendEntryLineReusing(nil, list, JournalFormat, &r); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyEntry(list); err != nil {
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
	l := r.TakeList()
	if l == nil {
		t.Fatal("the journal line kept no list")
	}
	return st, l
}
