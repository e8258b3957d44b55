package state

import (
	"testing"
	"time"

	"pushform/message"
)

var t0 = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

func intent(fp, tag string, ids ...string) Entry {
	return Entry{Type: EntryIntent, Time: t0, Items: []Item{{Address: "a", Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: fp, Content: &message.Content{Title: "T", Tag: tag}, Targets: ids}}}
}

func outcome(rid string, o Outcome, ids ...string) Entry {
	outs := make([]*Target, len(ids))
	for i := range outs {
		outs[i] = &Target{Outcome: o}
	}
	return Entry{Type: EntryOutcome, Time: t0, RequestID: rid, Items: []Item{{Address: "a", Targets: ids, Outcomes: outs}}}
}

// TestUnansweredCount: each request that sends a target and gets no usable
// answer adds one; an intent (a crash may leave one that never left) adds
// nothing and keeps the count; any known outcome clears it.
func TestUnansweredCount(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    map[string]int // target -> unanswered
		outcome Outcome        // of u1
	}{
		{"intent alone counts nothing", []Entry{intent("fp", "t", "u1")}, map[string]int{"u1": 0}, Unknown},
		{"unknown answer counts one", []Entry{intent("fp", "t", "u1"), outcome("r1", Unknown, "u1")}, map[string]int{"u1": 1}, Unknown},
		{"counts add up across sends", []Entry{
			intent("fp", "t", "u1", "u2"), outcome("r1", Unknown, "u1", "u2"),
			intent("fp", "t", "u1", "u2"), outcome("r2", Unknown, "u1"), outcome("r2b", Delivered, "u2"),
			intent("fp", "t", "u1"), outcome("r3", Unknown, "u1"),
		}, map[string]int{"u1": 3, "u2": 0}, Unknown},
		{"a crash between keeps the count", []Entry{
			intent("fp", "t", "u1"), outcome("r1", Unknown, "u1"),
			intent("fp", "t", "u1"), // killed here
			intent("fp", "t", "u1"), outcome("r3", Unknown, "u1"),
		}, map[string]int{"u1": 2}, Unknown},
		{"delivered clears it", []Entry{
			intent("fp", "t", "u1"), outcome("r1", Unknown, "u1"),
			intent("fp", "t", "u1"), outcome("r2", Delivered, "u1"),
		}, map[string]int{"u1": 0}, Delivered},
		{"failed clears it", []Entry{
			intent("fp", "t", "u1"), outcome("r1", Unknown, "u1"),
			intent("fp", "t", "u1"), outcome("r2", Failed, "u1"),
		}, map[string]int{"u1": 0}, Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("test")
			for _, e := range tt.entries {
				if err := s.ApplyEntry(e); err != nil {
					t.Fatal(err)
				}
			}
			for id, want := range tt.want {
				if got := s.Messages["a"].Targets[id].Unanswered; got != want {
					t.Errorf("%s: unanswered %d, want %d", id, got, want)
				}
			}
			if got := s.Messages["a"].Targets["u1"].Outcome; got != tt.outcome {
				t.Errorf("u1: %s, want %s", got, tt.outcome)
			}
		})
	}
}

// TestEarlierTags: when new content is sent to some targets, the others keep
// the earlier content, and its tag is remembered for them.
func TestEarlierTags(t *testing.T) {
	s := New("test")
	for _, e := range []Entry{
		intent("fp1", "promo-a", "u1", "u2"), outcome("r1", Delivered, "u1", "u2"),
		intent("fp2", "promo-b", "u3"), outcome("r2", Delivered, "u3"), // new target, new tag
		intent("fp3", "", "u2"), // untagged now
	} {
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	m := s.Messages["a"]
	for fp, want := range map[string]string{"fp1": "promo-a", "fp2": "promo-b", "fp3": ""} {
		if got, ok := m.TagOf(fp); !ok || got != want {
			t.Errorf("TagOf(%s) = %q, %v; want %q", fp, got, ok, want)
		}
	}
	if _, ok := m.TagOf("fp-never-sent"); ok {
		t.Error("a fingerprint never sent has a known tag")
	}
	// Sending fp1 again makes it current: it leaves the earlier tags.
	s.ApplyEntry(intent("fp1", "promo-a", "u3"))
	if _, ok := m.EarlierTags["fp1"]; ok || m.Fingerprint != "fp1" || m.EarlierTags["fp3"] != "" {
		t.Errorf("earlier tags after sending fp1 again: %v (current %s)", m.EarlierTags, m.Fingerprint)
	}
}

// TestMove: a move entry re-keys recorded addresses, all or none, and
// refuses an address that is not recorded or a new address that has state.
func TestMove(t *testing.T) {
	mk := func(addrs ...string) *State {
		s := New("test")
		for _, a := range addrs {
			e := intent("fp", "t", "u1")
			e.Items[0].Address = a
			if err := s.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	move := func(pairs ...string) Entry {
		e := Entry{Type: EntryMove, Time: t0}
		for i := 0; i < len(pairs); i += 2 {
			e.Items = append(e.Items, Item{Address: pairs[i], To: pairs[i+1]})
		}
		return e
	}
	tests := []struct {
		name  string
		have  []string
		entry Entry
		want  []string // addresses after; nil when refused
	}{
		{"rename", []string{"a", "x"}, move("a", "b"), []string{"b", "x"}},
		{"two at once", []string{"a", "b"}, move("a", "c", "b", "d"), []string{"c", "d"}},
		{"swap", []string{"a", "b"}, move("a", "b", "b", "a"), []string{"a", "b"}},
		{"onto state", []string{"a", "b"}, move("a", "b"), nil},
		{"unknown from", []string{"a"}, move("z", "b"), nil},
		{"two onto one", []string{"a", "b"}, move("a", "c", "b", "c"), nil},
		{"one moved twice", []string{"a"}, move("a", "c", "a", "d"), nil},
		{"no new address", []string{"a"}, move("a", ""), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mk(tt.have...)
			err := s.ApplyEntry(tt.entry)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("move accepted: %v", s.Addresses())
				}
				if got := s.Addresses(); len(got) != len(tt.have) {
					t.Errorf("a refused move changed the state: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := s.Addresses()
			if len(got) != len(tt.want) {
				t.Fatalf("addresses %v, want %v", got, tt.want)
			}
			for i, a := range got {
				if a != tt.want[i] || s.Messages[a].Address != a {
					t.Errorf("addresses %v, want %v", got, tt.want)
				}
			}
		})
	}
	// The targets travel with the address.
	s := mk("a")
	if err := s.ApplyEntry(move("a", "campaign.c.notification.a")); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages["campaign.c.notification.a"]; m == nil || m.Targets["u1"] == nil || m.Fingerprint != "fp" {
		t.Errorf("moved message %+v", m)
	}
}
