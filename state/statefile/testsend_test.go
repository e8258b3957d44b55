package statefile

import (
	"bytes"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// TestTestSendAndHoldoutRoundTrip: a test send entry survives the journal
// codec, and the ledger's test-send records and an address's holdout
// records survive the state codec, outcomes and reasons intact.
func TestTestSendAndHoldoutRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	c := message.Content{Title: "Spring sale", Body: "20% off", Tag: "spring"}
	ts := state.Entry{Type: state.EntryTestSend, Time: at, RequestID: "req-t1", Status: 200, Items: []state.Item{{
		Address: "notification.spring.variant.a", Kind: message.KindNotification, TargetKind: message.TargetDevices, Fingerprint: "fp1",
		Content: &c, Targets: []string{"dev-1"}, Outcomes: []*state.Target{{Outcome: state.TestSend, Fingerprint: "fp1", RequestID: "req-t1", Time: at, Reason: "delivered", DeviceCount: 1}},
	}}}
	got, err := DecodeEntry(AppendEntry(nil, ts))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffEntry(ts, got); d != "" {
		t.Fatalf("test send entry: %s", d)
	}
	hold := state.Entry{Type: state.EntryRecord, Time: at, Items: []state.Item{{
		Address: "notification.spring.holdout", Kind: message.KindNotification, TargetKind: message.TargetUsers, Fingerprint: "fp0",
		Content: &message.Content{Tag: "spring"}, Targets: []string{"u1", "u2"},
		Outcomes: []*state.Target{{Outcome: state.Holdout, Fingerprint: "fp0", Time: at, Reason: "notification.spring"}, {Outcome: state.Holdout, Fingerprint: "fp0", Time: at, Reason: "notification.spring"}},
	}}}
	for _, compact := range []bool{false, true} {
		s := state.New("test")
		s.Compact = compact
		for _, e := range []state.Entry{ts, hold} {
			if err := s.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffState(s, back); !compact && d != "" { // diffState reads the map form
			t.Fatalf("compact %v: %s", compact, d)
		}
		if h := back.TargetHistory(message.TargetDevices, "dev-1"); len(h) != 1 || h[0].Outcome != state.TestSend || h[0].Reason != "delivered" {
			t.Errorf("compact %v: test send after the round trip: %+v", compact, h)
		}
		if r := back.Messages["notification.spring.holdout"].Target("u2"); r == nil || r.Outcome != state.Holdout || r.Reason != "notification.spring" {
			t.Errorf("compact %v: holdout record after the round trip: %+v", compact, r)
		}
	}
}
