package statefile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"pushform/state"
)

// sameState fails unless the compact state c holds what the map state m
// holds, message by message and target by target.
func sameState(t *testing.T, c, m *state.State) {
	t.Helper()
	if !c.Compact || m.Compact {
		t.Fatalf("Compact = %v and %v", c.Compact, m.Compact)
	}
	if c.Lineage != m.Lineage || c.Serial != m.Serial || c.Environment != m.Environment {
		t.Fatalf("headers differ: %+v, %+v", c, m)
	}
	if (c.Recipients == nil) != (m.Recipients == nil) ||
		c.Recipients != nil && !slices.Equal(c.Recipients.UserIDs, m.Recipients.UserIDs) {
		t.Fatalf("recipients differ")
	}
	if len(c.Messages) != len(m.Messages) {
		t.Fatalf("%d messages, want %d", len(c.Messages), len(m.Messages))
	}
	for addr, mm := range m.Messages {
		cm := c.Messages[addr]
		if cm == nil || !cm.Compact() || cm.Targets != nil {
			t.Fatalf("%s: not a compact message: %+v", addr, cm)
		}
		if cm.TargetCount() != len(mm.Targets) {
			t.Fatalf("%s: %d targets, want %d", addr, cm.TargetCount(), len(mm.Targets))
		}
		for id, want := range mm.Targets {
			if got := cm.Target(id); got == nil || *got != *want {
				t.Fatalf("%s %s = %+v, want %+v", addr, id, got, want)
			}
		}
	}
}

// TestDecodeCompact: a compact decode holds what Decode holds, and
// encodes to the same bytes.
func TestDecodeCompact(t *testing.T) {
	big := state.New("test")
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ids := manyIDs(3000)
	slices.Sort(ids)
	big.Recipients = &state.Snapshot{FetchedAt: t0, UserIDs: ids}
	all := &state.Message{Address: "all", Targets: map[string]*state.Target{}}
	some := &state.Message{Address: "some", Targets: map[string]*state.Target{}}
	for i, id := range ids {
		rec := &state.Target{Outcome: state.Delivered, RequestID: "r" + string(rune('a'+i/500)), Time: t0}
		all.Targets[id] = rec
		if i%3 == 0 {
			some.Targets[id] = rec
		}
	}
	big.Messages["all"], big.Messages["some"] = all, some
	for name, s := range map[string]*state.State{"fidelity": fidelityState(), "empty": state.New("test"), "big": big} {
		t.Run(name, func(t *testing.T) {
			data := encodeStateBytes(t, s)
			m, err := Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			c, err := DecodeCompact(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			sameState(t, c, m)
			if again := encodeStateBytes(t, c); !bytes.Equal(again, data) {
				t.Error("the compact state encodes differently")
			}
		})
	}
	// The message sent to exactly the recipients shares their ids.
	c, err := DecodeCompact(bytes.NewReader(encodeStateBytes(t, big)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.Messages["all"].SortedTargets()
	if &got[0] != &c.Recipients.UserIDs[0] {
		t.Error("the targets of a message sent to the whole recipients list are a copy")
	}
	// Writing to it leaves the recipients alone.
	c.Messages["all"].DeleteTarget(ids[0])
	c.Messages["all"].SetTarget("zz", &state.Target{})
	c.Messages["all"].SortedTargets()
	if !slices.Equal(c.Recipients.UserIDs, ids) {
		t.Error("changing the targets changed the recipients list")
	}
}

// TestDecodeCompactUnsorted: ids written out of order (not by Encode) are
// sorted; ids repeated are refused, as Decode refuses them.
func TestDecodeCompactUnsorted(t *testing.T) {
	body := func(ids ...string) []byte {
		var e encoder
		e.snapshot = 3
		e.b = append(e.b, 0) // no recipients
		e.uvarint(1)
		e.str("a")
		for range 3 {
			e.str("")
		}
		e.content(fidelityState().Messages["a"].Content)
		e.ids(ids)
		recs := make([]*state.Target, len(ids))
		for i := range recs {
			recs[i] = &state.Target{Outcome: state.Delivered, DeviceCount: i}
		}
		e.outcomeList(recs)
		e.uvarint(0) // earlier tags
		var sum [4]byte
		binary.LittleEndian.PutUint32(sum[:], crc32.Checksum(e.b, castagnoli))
		out := []byte(`{"version":3,"lineage":"l","serial":1,"environment":"test"}` + "\n")
		out = append(out, e.b...)
		out = append(out, sum[:]...)
		return append(out, snapshotTrailer...)
	}
	c, err := DecodeCompact(bytes.NewReader(body("u3", "u1", "u2")))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Messages["a"]
	ids, recs := m.SortedTargets()
	if !slices.Equal(ids, []string{"u1", "u2", "u3"}) || recs[0].DeviceCount != 1 || recs[2].DeviceCount != 0 {
		t.Errorf("sorted to %v with %+v %+v %+v", ids, recs[0], recs[1], recs[2])
	}
	for _, dec := range []func(*bytes.Reader) (*state.State, error){
		func(r *bytes.Reader) (*state.State, error) { return Decode(r) },
		func(r *bytes.Reader) (*state.State, error) { return DecodeCompact(r) },
	} {
		if _, err := dec(bytes.NewReader(body("u2", "u1", "u2"))); err == nil {
			t.Error("repeated ids decoded")
		}
	}
}

// FuzzDecodeCompact: whatever Decode reads, DecodeCompact reads the same,
// and both encode to the same bytes; what one refuses the other refuses.
func FuzzDecodeCompact(f *testing.F) {
	f.Add(encodeStateBytes(f, fidelityState()))
	f.Add(encodeStateBytes(f, state.New("test")))
	f.Add([]byte(v1State))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, merr := Decode(bytes.NewReader(data))
		c, cerr := DecodeCompact(bytes.NewReader(data))
		if (merr == nil) != (cerr == nil) {
			t.Fatalf("Decode: %v; DecodeCompact: %v", merr, cerr)
		}
		if merr != nil {
			return
		}
		if !bytes.Equal(encodeStateBytes(t, m), encodeStateBytes(t, c)) {
			t.Fatal("the compact state encodes differently")
		}
		// It takes journal entries as the map state does.
		for _, s := range []*state.State{m, c} {
			s.ApplyEntry(state.Entry{Type: state.EntryIntent, Items: []state.Item{{Address: "a", Targets: []string{"u", "a"}}}})
			s.ApplyEntry(state.Entry{Type: state.EntryOutcome, Items: []state.Item{{Address: "a", Targets: []string{"a", "u"}, Outcomes: []*state.Target{{}, {Outcome: state.Unknown}}}}})
		}
		if !bytes.Equal(encodeStateBytes(t, m), encodeStateBytes(t, c)) {
			t.Fatal("after the same entries the states differ")
		}
	})
}
