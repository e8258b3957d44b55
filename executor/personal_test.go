package executor

import (
	"context"
	"slices"
	"testing"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// TestApplyPersonal: targets of one text share one notification object,
// each text is an object of its own in the same request, and the state
// keeps the text each target was sent, under the template's fingerprint.
func TestApplyPersonal(t *testing.T) {
	tmpl := message.Content{Title: "Hi ${user.first_name}", Body: "B", Template: "user"}
	ann := message.Text{Title: "Hi Ann", Body: "B"}
	bob := message.Text{Title: "Salut Bob", Body: "B", Locale: "fr"}
	c := &planner.Change{Address: "notification.n", Action: planner.ActionCreate, Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: planner.Fingerprint(message.KindNotification, tmpl), Content: tmpl, Send: []string{"u1", "u3", "u2"},
		Personal: &planner.Personal{Texts: []message.Text{ann, bob}, TextOf: []int32{0, 0, 1}}}
	plain := &planner.Change{Address: "notification.p", Action: planner.ActionCreate, Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: "fpP", Content: message.Content{Title: "T", Body: "B"}, Send: []string{"u9"}}
	p := &planner.Plan{Changes: []*planner.Change{c, plain}, Batches: []planner.Batch{{Parts: []planner.Part{{Change: 0, From: 0, To: 3}, {Change: 1, From: 0, To: 1}}}}}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	st := state.New("test")
	s := &fakeSender{reply: deliverAll(nil, nil)}
	var events []Event
	j := &memJournal{}
	res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 1, Sleep: noSleep,
		Now: func() time.Time { return now }, Events: func(e Event) { events = append(events, e) }})
	if err != nil || res.Counts.Delivered != 4 {
		t.Fatalf("apply: %v, %+v", err, res.Counts)
	}
	if len(s.requests) != 1 || len(s.requests[0]) != 3 {
		t.Fatalf("requests %+v: want one request of three objects", s.requests)
	}
	req := s.requests[0]
	if req[0].Title != "Hi Ann" || !slices.Equal(req[0].UserIDs, []string{"u1", "u3"}) || req[1].Title != "Salut Bob" || !slices.Equal(req[1].UserIDs, []string{"u2"}) || req[2].Title != "T" {
		t.Errorf("objects %+v", req)
	}
	// The journal records one item per address, with each target's text.
	for _, e := range j.entries {
		if len(e.Items) != 2 {
			t.Fatalf("%s entry of %d items, want 2: %+v", e.Type, len(e.Items), e.Items)
		}
		if it := e.Items[0]; e.Type == state.EntryIntent && (len(it.Texts) != 2 || !slices.Equal(it.TextOf, []int32{0, 0, 1})) {
			t.Errorf("intent item texts %+v %v", it.Texts, it.TextOf)
		}
	}
	if !slices.Equal(events[0].Addresses, []string{"notification.n", "notification.p"}) {
		t.Errorf("request event names %q", events[0].Addresses)
	}
	m := st.Messages["notification.n"]
	if m.Content != tmpl || m.Target("u2").Fingerprint != c.Fingerprint || m.Target("u2").Outcome != state.Delivered {
		t.Errorf("recorded %+v, u2 %+v", m.Content, m.Target("u2"))
	}
	for id, want := range map[string]message.Text{"u1": ann, "u2": bob, "u3": ann} {
		if got, ok := st.TextOf(c.Fingerprint, message.TargetUsers, id); !ok || got != want {
			t.Errorf("text of %s: %+v, %v", id, got, ok)
		}
	}
}

// TestApplyPersonalRefused: a 400 that blames one text's object fails
// its targets only; the other texts are sent again in a request of their
// own, and the state keeps what each target was sent.
func TestApplyPersonalRefused(t *testing.T) {
	tmpl := message.Content{Title: "Hi ${user.first_name}", Body: "B", Template: "user"}
	texts := []message.Text{{Title: "Hi Ann", Body: "B"}, {Title: "Hi \x00", Body: "B"}, {Title: "Hi Cy", Body: "B"}}
	c := &planner.Change{Address: "notification.n", Action: planner.ActionCreate, Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Fingerprint: planner.Fingerprint(message.KindNotification, tmpl), Content: tmpl, Send: []string{"u1", "u2", "u3"},
		Personal: &planner.Personal{Texts: texts, TextOf: []int32{0, 1, 2}}}
	p := &planner.Plan{Changes: []*planner.Change{c}, Batches: []planner.Batch{{Parts: []planner.Part{{Change: 0, From: 0, To: 3}}}}}
	st := state.New("test")
	deliver := deliverAll(nil, nil)
	s := &fakeSender{reply: func(call int, batch []pushapi.Notification) (*pushapi.SendResponse, error) {
		if call == 1 {
			return nil, &pushapi.ValidationError{RequestID: "req-400", Issues: []pushapi.Issue{{Index: 1, Field: "title", Message: "invalid character"}}}
		}
		return deliver(call, batch)
	}}
	res, err := Apply(context.Background(), p, state.NewRecorder(&memJournal{}, st), s, Options{Parallelism: 1, Sleep: noSleep, Now: func() time.Time { return now }})
	if err != nil || res.Counts.Delivered != 2 || res.Counts.Failed != 1 {
		t.Fatalf("apply: %v, %+v", err, res.Counts)
	}
	if len(s.requests) != 2 || len(s.requests[1]) != 2 || s.requests[1][0].Title != "Hi Ann" || s.requests[1][1].Title != "Hi Cy" {
		t.Fatalf("requests %+v", s.requests)
	}
	m := st.Messages["notification.n"]
	if r := m.Target("u2"); r.Outcome != state.Failed {
		t.Errorf("u2 %+v", r)
	}
	for id, want := range map[string]string{"u1": "Hi Ann", "u3": "Hi Cy"} {
		if r := m.Target(id); r.Outcome != state.Delivered {
			t.Errorf("%s %+v", id, r)
		}
		if tx, ok := st.TextOf(c.Fingerprint, message.TargetUsers, id); !ok || tx.Title != want {
			t.Errorf("text of %s: %+v", id, tx)
		}
	}
}
