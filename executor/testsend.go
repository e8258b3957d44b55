package executor

import (
	"context"
	"fmt"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
)

// TestSend is a test send of one address's content: to Users and Devices
// only, whatever the address's own targets.
type TestSend struct {
	Address string
	Kind    message.Kind
	Content message.Content
	// Text is, when Content is a template (message.Content.Personal),
	// the text filled in that the test sends; the ledger records the
	// test under the template's fingerprint.
	Text    *message.Text
	Users   []string
	Devices []string
}

// TestSendResult is what a test send got back: one entry per target, in
// the order sent (users, then devices), and the entry the journal records.
type TestSendResult struct {
	RequestID string
	Status    int
	Targets   []TestSendTarget
	Entry     state.Entry
}

// Delivered reports whether every target was delivered.
func (r *TestSendResult) Delivered() bool {
	for _, t := range r.Targets {
		if t.Outcome != state.Delivered {
			return false
		}
	}
	return true
}

// TestSendTarget is one target's answer to a test send.
type TestSendTarget struct {
	Kind    message.TargetKind
	ID      string
	Outcome state.Outcome // delivered, skipped, failed or unknown
	Detail  string        // the skip reason or failure message
}

// SendTest sends ts in one request, one object per kind of target, and
// returns the answer with the journal entry that records it: a test send,
// which the ledger keeps apart from deliveries. It is sent once; a
// request that fails is an error (nothing is recorded: nothing reached a
// device, or it cannot be told).
func SendTest(ctx context.Context, s Sender, ts TestSend, now time.Time) (*TestSendResult, error) {
	if len(ts.Users)+len(ts.Devices) == 0 {
		return nil, fmt.Errorf("a test send needs at least one target")
	}
	fp := planner.Fingerprint(ts.Kind, ts.Content)
	sent := ts.Content
	if ts.Text != nil {
		sent = sent.Filled(*ts.Text)
	}
	type part struct {
		kind message.TargetKind
		ids  []string
	}
	var parts []part
	var batch []pushapi.Notification
	for _, p := range []part{{message.TargetUsers, ts.Users}, {message.TargetDevices, ts.Devices}} {
		if len(p.ids) == 0 {
			continue
		}
		parts = append(parts, p)
		batch = append(batch, notification(sent, p.kind, p.ids))
	}
	resp, err := s.Send(ctx, batch)
	if err != nil {
		return nil, fmt.Errorf("test send of %s: %w", ts.Address, err)
	}
	res := &TestSendResult{RequestID: resp.RequestID, Status: resp.StatusCode}
	res.Entry = state.Entry{Type: state.EntryTestSend, Time: now, RequestID: resp.RequestID, Status: resp.StatusCode}
	content := ts.Content
	for i, p := range parts {
		var results []pushapi.Result
		if i < len(resp.Results) {
			results = resp.Results[i]
		}
		it := state.Item{Address: ts.Address, Kind: ts.Kind, TargetKind: p.kind, Fingerprint: fp, Content: &content,
			Targets: p.ids, Outcomes: make([]*state.Target, len(p.ids))}
		if ts.Text != nil {
			it.Texts = []message.Text{*ts.Text}
		}
		for j, id := range p.ids {
			t := toTarget(resultFor(results, j, p.kind), fp, resp.RequestID, now)
			detail := t.Reason
			if t.Outcome == state.Failed {
				detail = t.Message
			}
			res.Targets = append(res.Targets, TestSendTarget{Kind: p.kind, ID: id, Outcome: t.Outcome, Detail: detail})
			// The ledger's record: a test send, the service's outcome
			// as its reason.
			if t.Outcome == state.Skipped {
				t.Message = t.Reason
			}
			t.Reason, t.Outcome = string(t.Outcome), state.TestSend
			it.Outcomes[j] = &t
		}
		res.Entry.Items = append(res.Entry.Items, it)
	}
	return res, nil
}
