package state

import (
	"testing"
	"time"

	"pushform/message"
)

// send is an intent and a delivered outcome of content c to ids under addr.
func send(at time.Time, addr, fp, rid string, c message.Content, ids ...string) []Entry {
	outs := make([]*Target, len(ids))
	for i := range outs {
		outs[i] = &Target{Outcome: Delivered, DeviceCount: 1}
	}
	return []Entry{
		{Type: EntryIntent, Time: at, Items: []Item{{Address: addr, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Fingerprint: fp, Content: &c, Targets: ids}}},
		{Type: EntryOutcome, Time: at, RequestID: rid, Items: []Item{{Address: addr, Fingerprint: fp, Targets: ids, Outcomes: outs}}},
	}
}

func forget(at time.Time, addr string, ids ...string) Entry {
	return Entry{Type: EntryForget, Time: at, Items: []Item{{Address: addr, Targets: ids}}}
}

type seen struct {
	addr, title, rid string
	forgotten        bool
	current          bool
}

// TestLedgerKeepsDeliveries: forgetting an address or targets, and
// changing an address's content, never drops what reached whom.
func TestLedgerKeepsDeliveries(t *testing.T) {
	coupon := message.Content{Title: "Coupon", Body: "Your 10% coupon"}
	coupon2 := message.Content{Title: "Coupon", Body: "Your 15% coupon"}
	flash := message.Content{Title: "Flash sale", Body: "Now"}
	day := func(d int) time.Time { return t0.Add(time.Duration(d) * 24 * time.Hour) }
	tests := []struct {
		name    string
		entries [][]Entry
		compact bool
		want    map[string][]seen // target -> history, oldest first
	}{
		{"forgotten address", [][]Entry{
			send(day(0), "notification.y", "fp1", "req-1", coupon, "alice", "bob"),
			{forget(day(1), "notification.y")},
		}, false, map[string][]seen{
			"bob":   {{"notification.y", "Coupon", "req-1", true, false}},
			"alice": {{"notification.y", "Coupon", "req-1", true, false}},
			"carol": nil,
		}},
		{"re-added address", [][]Entry{
			send(day(0), "notification.y", "fp1", "req-1", coupon, "bob"),
			{forget(day(1), "notification.y")},
			send(day(2), "notification.y", "fp1", "req-2", coupon, "bob"),
		}, true, map[string][]seen{
			"bob": {{"notification.y", "Coupon", "req-1", true, false}, {"notification.y", "Coupon", "req-2", false, true}},
		}},
		{"content replaced", [][]Entry{
			send(day(0), "notification.y", "fp1", "req-1", coupon, "alice", "bob"),
			send(day(1), "notification.y", "fp2", "req-2", coupon2, "bob"),
		}, true, map[string][]seen{
			"bob":   {{"notification.y", "Coupon", "req-1", false, false}, {"notification.y", "Coupon", "req-2", false, true}},
			"alice": {{"notification.y", "Coupon", "req-1", false, true}},
		}},
		{"targets forgotten", [][]Entry{
			send(day(0), "notification.y", "fp1", "req-1", coupon, "alice", "bob"),
			{forget(day(1), "notification.y", "bob")},
			send(day(2), "notification.f", "fp3", "req-3", flash, "bob"),
		}, false, map[string][]seen{
			"bob":   {{"notification.y", "Coupon", "req-1", true, false}, {"notification.f", "Flash sale", "req-3", false, true}},
			"alice": {{"notification.y", "Coupon", "req-1", false, true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("test")
			s.Compact = tt.compact
			for _, es := range tt.entries {
				for _, e := range es {
					if err := s.ApplyEntry(e); err != nil {
						t.Fatal(err)
					}
				}
			}
			for id, want := range tt.want {
				got := s.TargetHistory(message.TargetUsers, id)
				if len(got) != len(want) {
					t.Fatalf("%s: %d records %+v, want %d", id, len(got), got, len(want))
				}
				for i, d := range got {
					w := want[i]
					if d.Address != w.addr || d.Content.Title != w.title || !d.ContentKnown || d.RequestID != w.rid ||
						d.Forgotten != w.forgotten || d.Current != w.current || d.Outcome != Delivered {
						t.Errorf("%s record %d = %+v, want %+v", id, i, d, w)
					}
					if d.Forgotten && d.ForgottenAt.IsZero() {
						t.Errorf("%s record %d forgotten without a time", id, i)
					}
				}
			}
		})
	}
}

// TestLedgerForkIsolated: a fork's forgets and edits reach neither the
// state it was made from nor its ledger.
func TestLedgerForkIsolated(t *testing.T) {
	s := New("test")
	s.Compact = true
	for _, e := range send(t0, "a", "fp1", "r1", message.Content{Title: "A"}, "u1", "u2") {
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	f := s.Fork()
	for _, e := range append(send(t0.Add(time.Hour), "a", "fp2", "r2", message.Content{Title: "B"}, "u1"), forget(t0.Add(2*time.Hour), "a")) {
		if err := f.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Ledger) != 0 || s.Messages["a"] == nil || s.Messages["a"].Target("u1").RequestID != "r1" {
		t.Fatalf("the original changed: ledger %d, a = %+v", len(s.Ledger), s.Messages["a"])
	}
	if got := f.TargetHistory(message.TargetUsers, "u1"); len(got) != 2 || got[0].RequestID != "r1" || got[1].RequestID != "r2" || !got[1].Forgotten {
		t.Fatalf("fork history of u1 = %+v", got)
	}
}

// TestAddressHistory: one event per request and content, one per forget.
func TestAddressHistory(t *testing.T) {
	s := New("test")
	var entries []Entry
	entries = append(entries, send(t0, "n", "fp1", "r1", message.Content{Title: "A"}, "u1", "u2")...)
	entries = append(entries, send(t0.Add(time.Hour), "n", "fp1", "r2", message.Content{Title: "A"}, "u3")...)
	entries = append(entries, forget(t0.Add(2*time.Hour), "n"))
	for _, e := range entries {
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	evs, current := s.AddressHistory("n")
	if current || len(evs) != 3 {
		t.Fatalf("events %+v current %v", evs, current)
	}
	if evs[0].RequestID != "r1" || evs[0].Targets != 2 || evs[0].Outcomes[Delivered] != 2 || evs[0].Content.Title != "A" ||
		evs[1].RequestID != "r2" || evs[1].Targets != 1 || !evs[2].Forgot || evs[2].Targets != 3 {
		t.Fatalf("events %+v", evs)
	}
	if evs, _ := s.AddressHistory("other"); len(evs) != 0 {
		t.Fatalf("unknown address: %+v", evs)
	}
}

// TestPrune: only ledger records older than the cut go; the addresses'
// view stays whole; LedgerCount says beforehand what goes.
func TestPrune(t *testing.T) {
	for _, compact := range []bool{false, true} {
		s := New("test")
		s.Compact = compact
		var entries []Entry
		entries = append(entries, send(t0, "old", "fp1", "r1", message.Content{Title: "A"}, "u1", "u2")...)
		entries = append(entries, send(t0.Add(48*time.Hour), "old", "fp1", "r2", message.Content{Title: "A"}, "u3")...)
		entries = append(entries, forget(t0.Add(72*time.Hour), "old"))
		entries = append(entries, send(t0, "live", "fp2", "r3", message.Content{Title: "B"}, "u1")...)
		for _, e := range entries {
			if err := s.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
		cut := t0.Add(24 * time.Hour)
		if n := s.LedgerCount(time.Time{}, cut); n != 2 {
			t.Fatalf("LedgerCount = %d, want 2", n)
		}
		if n := s.LedgerCount(t0.Add(time.Hour), cut); n != 0 {
			t.Fatalf("LedgerCount from an hour on = %d, want 0", n)
		}
		if n := s.Prune(cut); n != 2 {
			t.Fatalf("Prune dropped %d, want 2", n)
		}
		if h := s.TargetHistory(message.TargetUsers, "u1"); len(h) != 1 || h[0].Address != "live" {
			t.Fatalf("u1 after prune: %+v", h)
		}
		if h := s.TargetHistory(message.TargetUsers, "u3"); len(h) != 1 || h[0].RequestID != "r2" {
			t.Fatalf("u3 after prune: %+v", h)
		}
		if n := s.Prune(t0.Add(100 * time.Hour)); n != 1 || len(s.Ledger) != 0 {
			t.Fatalf("second prune dropped %d, ledger %d", n, len(s.Ledger))
		}
	}
}

// TestMergeLedger: pushing an older copy over a newer one keeps what the
// newer one recorded reached whom; records both hold are not doubled.
func TestMergeLedger(t *testing.T) {
	c := message.Content{Title: "Sale", Body: "50k users"}
	older := New("test")
	for _, e := range send(t0, "campaign.a", "fp-a", "r1", c, "u1") {
		if err := older.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	newer := New("test")
	for _, e := range append(send(t0, "campaign.a", "fp-a", "r1", c, "u1"), send(t0.Add(time.Hour), "campaign.big", "fp-b", "r2", c, "u1", "u2", "u3")...) {
		if err := newer.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(2 * time.Hour)
	if n := older.MergeLedger(newer, at); n != 3 {
		t.Fatalf("added %d records, want 3", n)
	}
	if older.RecordCount() != 4 || len(older.Messages) != 1 {
		t.Fatalf("%d records, %d addresses", older.RecordCount(), len(older.Messages))
	}
	h := older.TargetHistory(message.TargetUsers, "u2")
	if len(h) != 1 || h[0].Address != "campaign.big" || h[0].RequestID != "r2" || !h[0].Forgotten || !h[0].ForgottenAt.Equal(at) {
		t.Fatalf("u2 after the merge: %+v", h)
	}
	if n := older.MergeLedger(newer, at); n != 0 {
		t.Fatalf("a second merge added %d", n)
	}
}

// TestRecordEntry: a record entry sets the address's content and each
// target's record (already delivered, pointing at the earlier delivery),
// keeps what it replaces in the ledger, and needs an outcome per target.
func TestRecordEntry(t *testing.T) {
	s := New("test")
	old := message.Content{Title: "Old"}
	for _, e := range send(t0, "n", "fp-old", "r1", old, "u1") {
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	c := message.Content{Title: "Coupon"}
	rec := Target{Outcome: AlreadyDelivered, RequestID: "r0", Time: t0.Add(-time.Hour), Reason: "other"}
	e := Entry{Type: EntryRecord, Time: t0.Add(time.Hour), Items: []Item{{Address: "n", Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: "fp-c", Content: &c, Targets: []string{"u1", "u2"}, Outcomes: []*Target{&rec, &rec}}}}
	if err := s.ApplyEntry(e); err != nil {
		t.Fatal(err)
	}
	m := s.Messages["n"]
	if m.Fingerprint != "fp-c" || m.Content.Title != "Coupon" || m.Target("u1") != m.Target("u2") || m.Target("u2").Fingerprint != "fp-c" || m.Target("u2").Reason != "other" {
		t.Fatalf("after the record: %+v, u2 %+v", m, m.Target("u2"))
	}
	// Oldest first: the record carries the time of the delivery it points at.
	if h := s.TargetHistory(message.TargetUsers, "u1"); len(h) != 2 || h[1].RequestID != "r1" || h[1].Content.Title != "Old" || h[0].Outcome != AlreadyDelivered || h[0].RequestID != "r0" {
		t.Fatalf("history of u1: %+v", h)
	}
	e.Items[0].Outcomes = e.Items[0].Outcomes[:1]
	if err := s.ApplyEntry(e); err == nil {
		t.Fatal("a record with an outcome missing was applied")
	}
}
