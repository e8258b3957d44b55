package state

import (
	"testing"
	"time"

	"pushform/message"
)

// TestRepeatKeepsEarlierDelivery: content sent again to a target that
// received it (repeat_after, --replace) leaves the earlier delivery in the
// ledger, so history lists both and caps count both; a retry of a failed
// send leaves one record, the last.
func TestRepeatKeepsEarlierDelivery(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	c := message.Content{Title: "Reminder", Body: "Your cart"}
	send := func(s *State, at time.Time, req string, outcomes map[string]Outcome) {
		t.Helper()
		it := Item{Address: "notification.r", Kind: message.KindNotification, TargetKind: message.TargetUsers, Fingerprint: "fp-r", Content: &c}
		out := Item{Address: "notification.r", Fingerprint: "fp-r"}
		for _, id := range []string{"alice", "bob"} {
			if o, ok := outcomes[id]; ok {
				it.Targets, out.Targets = append(it.Targets, id), append(out.Targets, id)
				out.Outcomes = append(out.Outcomes, &Target{Outcome: o})
			}
		}
		for _, e := range []Entry{{Type: EntryIntent, Time: at, Items: []Item{it}}, {Type: EntryOutcome, Time: at, RequestID: req, Items: []Item{out}}} {
			if err := s.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, compact := range []bool{false, true} {
		s := New("test")
		s.Compact = compact
		send(s, t0, "req-1", map[string]Outcome{"alice": Delivered, "bob": Failed})
		send(s, t0.Add(time.Hour), "req-2", map[string]Outcome{"bob": Delivered})     // a retry
		send(s, t0.Add(2*time.Hour), "req-3", map[string]Outcome{"alice": Delivered}) // a repeat
		for id, want := range map[string][]string{"alice": {"req-1", "req-3"}, "bob": {"req-2"}} {
			h := s.TargetHistory(message.TargetUsers, id)
			var got []string
			for _, d := range h {
				got = append(got, d.RequestID)
			}
			if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
				t.Errorf("compact %v: %s's history %v, want %v", compact, id, got, want)
			}
		}
	}
}
