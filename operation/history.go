package operation

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

// HistoryQuery says what History is asked about: one target (TargetKind
// and ID) or, with Address set, an address; in Window.
type HistoryQuery struct {
	TargetKind message.TargetKind
	ID         string
	Address    string
	Window     views.Window
	// Variants asks, with Address, which variant (or the holdout) each
	// target of the notification at Address got, instead of its applies.
	Variants bool
}

// HistoryResult is what History found: Target, Address or Variants, as
// the query asked.
type HistoryResult struct {
	Target   *views.TargetHistory
	Address  *views.AddressHistory
	Variants *views.VariantExport
	// Hint is set for an address the ledger does not know: what would
	// find the word.
	Hint *HistoryHint
}

// HistoryHint is what the ledger knows about a word asked for as an
// address and not known as one: "history alice" meant as "--user alice".
type HistoryHint struct {
	// TargetFlag is the option (--user, --device, --topic) whose target
	// the word names in the ledger; "" for none.
	TargetFlag string
	// Variant is an address recorded for a variant (or the holdout) of the
	// notification the word names; "" for none.
	Variant string
	// Addresses are the addresses the ledger records, to suggest one.
	Addresses []string
}

// historyApplyGap is the longest pause between two requests of one
// content under one address that history still shows as one apply: the
// ledger records requests, not runs, and one run sends an address one
// content in requests that follow each other closely.
const historyApplyGap = 10 * time.Minute

// History answers "what did this target receive" or "what did this
// address send" from the state's delivery ledger, read without locking
// (it only looks) and compact when the backend can: one target's history
// out of ten million targets then needs no map. No state reads as an
// empty ledger.
func History(ctx context.Context, o Options, q HistoryQuery) (*HistoryResult, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	s, err := readCompact(be)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = &state.State{}
	}
	switch {
	case q.Variants:
		x := variantExport(s, q.Address)
		return &HistoryResult{Variants: &x}, nil
	case q.Address != "":
		h := addressHistory(s, q.Address, q.Window)
		res := &HistoryResult{Address: &h}
		if !h.Known {
			res.Hint = historyHint(s, q.Address)
		}
		return res, nil
	}
	h := targetHistory(s, q.TargetKind, q.ID, q.Window)
	return &HistoryResult{Target: &h}, nil
}

// targetHistory gathers one target's deliveries in the window.
func targetHistory(s *state.State, kind message.TargetKind, id string, w views.Window) views.TargetHistory {
	all := s.TargetHistory(kind, id)
	h := views.TargetHistory{TargetKind: kind, ID: id, Window: w, Known: len(all) > 0}
	for _, d := range all {
		if !w.Contains(d.Time) {
			continue
		}
		vd := views.Delivery{Time: d.Time, Address: d.Address, Kind: d.Kind, Fingerprint: d.Fingerprint,
			Content: d.Content, Text: d.Text, Outcome: d.Outcome, RequestID: d.RequestID,
			DeviceCount: d.DeviceCount, Reason: d.Reason, Message: d.Message, Unreadable: d.Unreadable}
		if d.Forgotten {
			vd.ForgottenAt = d.ForgottenAt
		}
		h.Deliveries = append(h.Deliveries, vd)
	}
	return h
}

// addressHistory gathers an address's applies in the window: the ledger's
// request events of one content that follow each other within
// historyApplyGap, with no forgetting between them, make one apply.
func addressHistory(s *state.State, addr string, w views.Window) views.AddressHistory {
	events, current := s.AddressHistory(addr)
	h := views.AddressHistory{Address: addr, Window: w, Known: len(events) > 0 || current}
	for _, o := range s.OverridesOf(addr) {
		if w.Contains(o.Time) {
			h.Overrides = append(h.Overrides, o)
		}
	}
	var last *views.ApplyRecord
	for _, ev := range events {
		if ev.Forgot {
			// The latest forgetting is the one that holds, unless the
			// address is back in the configuration's view since.
			if !current && ev.Time.After(h.ForgottenAt) {
				h.ForgottenAt = ev.Time
			}
			if w.Contains(ev.Time) {
				h.Forgets = append(h.Forgets, views.ForgetRecord{Time: ev.Time, Targets: ev.Targets})
			}
			last = nil
			continue
		}
		if !w.Contains(ev.Time) {
			continue
		}
		if last == nil || last.Fingerprint != ev.Fingerprint || ev.Time.Sub(last.End) > historyApplyGap {
			h.Applies = append(h.Applies, views.ApplyRecord{Start: ev.Time, End: ev.Time, Kind: ev.Kind,
				Fingerprint: ev.Fingerprint, Content: ev.Content, Outcomes: map[state.Outcome]int{}})
			last = &h.Applies[len(h.Applies)-1]
		}
		last.End = ev.Time
		if ev.RequestID != "" { // one event per request and content
			last.RequestIDs = append(last.RequestIDs, ev.RequestID)
		}
		for o, n := range ev.Outcomes {
			last.Outcomes[o] += n
		}
	}
	return h
}

// historyHint says what the ledger knows of word, an address it does not
// know.
func historyHint(s *state.State, word string) *HistoryHint {
	for _, f := range []struct {
		flag string
		kind message.TargetKind
	}{{"--user", message.TargetUsers}, {"--device", message.TargetDevices}, {"--topic", message.TargetTopics}} {
		if len(s.TargetHistory(f.kind, word)) > 0 {
			return &HistoryHint{TargetFlag: f.flag}
		}
	}
	h := &HistoryHint{}
	for msg := range s.LedgerMessages() {
		if !slices.Contains(h.Addresses, msg.Address) {
			h.Addresses = append(h.Addresses, msg.Address)
		}
	}
	for _, a := range h.Addresses {
		if strings.HasPrefix(a, word+planner.VariantInfix) || a == word+planner.HoldoutSuffix {
			h.Variant = a
			return h
		}
	}
	return h
}

// variantExport collects, from the addresses' view of s, which variant
// (or the holdout) each target of the notification at addr got.
func variantExport(s *state.State, addr string) views.VariantExport {
	x := views.VariantExport{Address: addr}
	for _, a := range s.Addresses() {
		var sum views.VariantSummary
		switch {
		case a == addr+planner.HoldoutSuffix:
			sum.Holdout = true
		case strings.HasPrefix(a, addr+planner.VariantInfix):
			sum.Name = strings.TrimPrefix(a, addr+planner.VariantInfix)
		default:
			continue
		}
		m := s.Messages[a]
		sum.Address, sum.Outcomes = a, map[state.Outcome]int{}
		if !sum.Holdout {
			sum.Title, sum.Body = m.Content.Title, m.Content.Body
		}
		for id, t := range m.AllTargets() {
			sum.Targets++
			sum.Outcomes[t.Outcome]++
			name := sum.Name
			if other, ok := strings.CutPrefix(t.Reason, addr+planner.VariantInfix); ok && t.Outcome == state.AlreadyDelivered {
				// Recorded here, it got a variant no longer declared:
				// the one that reached it.
				name = other
			}
			x.Assignments = append(x.Assignments, views.VariantAssignment{TargetKind: m.TargetKind, Target: id, Variant: name,
				Holdout: sum.Holdout, Outcome: t.Outcome, RequestID: t.RequestID, Time: t.Time})
		}
		x.Variants = append(x.Variants, sum)
	}
	slices.SortStableFunc(x.Assignments, func(a, b views.VariantAssignment) int {
		return cmp.Or(cmp.Compare(a.TargetKind, b.TargetKind), cmp.Compare(a.Target, b.Target))
	})
	return x
}
