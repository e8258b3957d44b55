package state

import (
	"testing"
	"time"

	"pushform/message"
)

// TestTexts: what personalised sends recorded is found by fingerprint,
// kind and target, the later text of a target winning; a fork writes its
// own; prune drops the texts of contents no record holds; a merged
// ledger brings its texts.
func TestTexts(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	ann, bob := message.Text{Title: "Hi Ann"}, message.Text{Title: "Hi Bob"}
	intent := func(addr, fp string, ids []string, texts []message.Text, of []int32) Entry {
		c := message.Content{Title: "Hi ${user.name}", Template: "user"}
		return Entry{Type: EntryIntent, Time: at, Items: []Item{{Address: addr, Kind: message.KindNotification, TargetKind: message.TargetUsers,
			Fingerprint: fp, Content: &c, Targets: ids, Texts: texts, TextOf: of}}}
	}
	s := New("test")
	for _, e := range []Entry{intent("notification.a", "fpA", []string{"u1", "u2"}, []message.Text{ann, bob}, []int32{0, 1}),
		intent("notification.a", "fpA", []string{"u2"}, []message.Text{ann}, nil)} {
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s *State, fp, id string) string {
		tx, _ := s.TextOf(fp, message.TargetUsers, id)
		return tx.Title
	}
	if text(s, "fpA", "u1") != "Hi Ann" || text(s, "fpA", "u2") != "Hi Ann" {
		t.Errorf("u1 %q, u2 %q", text(s, "fpA", "u1"), text(s, "fpA", "u2"))
	}
	if _, ok := s.TextOf("fpA", message.TargetDevices, "u1"); ok {
		t.Error("a text for another kind of target")
	}
	f := s.Fork()
	if err := f.ApplyEntry(intent("notification.a", "fpA", []string{"u1"}, []message.Text{bob}, nil)); err != nil {
		t.Fatal(err)
	}
	if text(f, "fpA", "u1") != "Hi Bob" || text(s, "fpA", "u1") != "Hi Ann" {
		t.Errorf("fork %q, original %q", text(f, "fpA", "u1"), text(s, "fpA", "u1"))
	}
	other := New("test")
	if err := other.ApplyEntry(intent("notification.b", "fpB", []string{"u3"}, []message.Text{bob}, nil)); err != nil {
		t.Fatal(err)
	}
	s.MergeLedger(other, at)
	if text(s, "fpB", "u3") != "Hi Bob" {
		t.Error("a merged ledger's texts are missing")
	}
	if err := s.ApplyEntry(Entry{Type: EntryForget, Time: at, Items: []Item{{Address: "notification.b"}}}); err != nil {
		t.Fatal(err)
	}
	s.Prune(at.Add(time.Hour))
	if text(s, "fpB", "u3") != "" || text(s, "fpA", "u1") != "Hi Ann" {
		t.Errorf("after prune: fpB %q, fpA %q", text(s, "fpB", "u3"), text(s, "fpA", "u1"))
	}
}
