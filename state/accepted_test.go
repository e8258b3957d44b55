package state

import (
	"maps"
	"testing"
)

// TestAcceptEntry: an accept entry sets and drops accepted shapes, a move
// carries them, and a fork's entries leave the state it was made from as
// it was.
func TestAcceptEntry(t *testing.T) {
	s := New("test")
	s.Messages["notification.a"] = &Message{Address: "notification.a", Targets: map[string]*Target{}}
	apply := func(s *State, e Entry) {
		t.Helper()
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	apply(s, Entry{Type: EntryAccept, Items: []Item{{Address: "notification.a", Fingerprint: "s1"}, {Address: "notification.b", Fingerprint: "s2"}}})
	f := s.Fork()
	apply(f, Entry{Type: EntryMove, Items: []Item{{Address: "notification.a", To: "notification.c"}}})
	apply(f, Entry{Type: EntryAccept, Items: []Item{{Address: "notification.b"}}})
	if want := map[string]string{"notification.c": "s1"}; !maps.Equal(f.Accepted, want) {
		t.Errorf("fork: %v, want %v", f.Accepted, want)
	}
	if want := map[string]string{"notification.a": "s1", "notification.b": "s2"}; !maps.Equal(s.Accepted, want) {
		t.Errorf("the state the fork was made from: %v, want %v", s.Accepted, want)
	}
	if fp, ok := f.AcceptedShape("notification.c"); !ok || fp != "s1" {
		t.Errorf("AcceptedShape = %q, %v", fp, ok)
	}
	if err := s.ApplyEntry(Entry{Type: EntryAccept, Items: []Item{{Fingerprint: "s3"}}}); err == nil {
		t.Error("an accept entry without an address was applied")
	}
}
