package state

import (
	"testing"
	"time"

	"pushform/message"
)

// TestTestSendIsNotADelivery: a test send entry goes to the ledger as
// test-send records, whatever outcome the entry carries, and never to the
// addresses' view; history lists it.
func TestTestSendIsNotADelivery(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for _, compact := range []bool{false, true} {
		s := New("test")
		s.Compact = compact
		c := message.Content{Title: "Spring sale", Body: "20% off"}
		e := Entry{Type: EntryTestSend, Time: at, RequestID: "req-t1", Items: []Item{{
			Address: "notification.spring", Kind: message.KindNotification, TargetKind: message.TargetDevices,
			Fingerprint: "fp1", Content: &c, Targets: []string{"dev-b", "dev-a", "dev-a"},
			Outcomes: []*Target{{Outcome: Delivered, Reason: "delivered"}, {Outcome: TestSend, Reason: "failed", Message: "bad token"}, {Outcome: TestSend}},
		}}}
		if err := s.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
		if len(s.Messages) != 0 {
			t.Errorf("compact %v: a test send reached the addresses' view: %v", compact, s.Addresses())
		}
		h := s.TargetHistory(message.TargetDevices, "dev-b")
		if len(h) != 1 || h[0].Outcome != TestSend || h[0].RequestID != "req-t1" || !h[0].Time.Equal(at) || h[0].Address != "notification.spring" ||
			h[0].Reason != "delivered" || !h[0].ContentKnown {
			t.Errorf("compact %v: history of dev-b: %+v", compact, h)
		}
		if h := s.TargetHistory(message.TargetDevices, "dev-a"); len(h) != 1 || h[0].Message != "bad token" {
			t.Errorf("compact %v: history of dev-a: %+v", compact, h)
		}
	}
	bad := Entry{Type: EntryTestSend, Items: []Item{{Address: "notification.x", Targets: []string{"a"}}}}
	if err := New("test").ApplyEntry(bad); err == nil {
		t.Error("a test send without outcomes was accepted")
	}
}
