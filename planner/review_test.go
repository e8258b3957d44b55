package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

// applyPlan records in h's state what apply records for p without
// sending (moves and forgets aside): the record entries, then each
// request's intent and a delivered outcome.
func (h *history) applyPlan(p *Plan) *history {
	h.t.Helper()
	for _, e := range p.RecordEntries(now) {
		if err := h.st.ApplyEntry(e); err != nil {
			h.t.Fatal(err)
		}
	}
	for _, c := range p.Changes {
		if len(c.Send) > 0 {
			h.send(&config.Message{Address: c.Address, Kind: c.Kind, Targets: config.Targets{Kind: c.TargetKind}, Content: c.Content}, state.Delivered, c.Send...)
		}
	}
	return h
}

// TestScheduled: a scheduled plan releases what a reviewed apply
// accepted (new recipients, retries, held-back sends of recorded
// content) and lists every other change as awaiting review.
func TestScheduled(t *testing.T) {
	a := note("notification.a", "A", "a", "t", "u1", "u2")
	b := note("notification.b", "B", "b", "", "u1")
	aMore := note("notification.a", "A", "a", "t", "u1", "u2", "u3")
	aEdited := note("notification.a", "A", "a!", "t", "u1", "u2", "u3")
	c := note("notification.c", "C", "c", "", "u1")
	due := now.Add(-time.Minute)
	later := now.Add(time.Hour)
	waitingC := note("notification.c", "C", "c", "", "u1", "u2")
	waitingC.SendAfter = &later
	dueC := note("notification.c", "C", "c", "", "u1", "u2")
	dueC.SendAfter = &due
	closed := note("notification.c", "C", "c", "", "u1")
	closed.SendBefore = &due
	renamed := note("notification.b2", "B", "b", "", "u1")
	moved := cfgOf(a, renamed)
	moved.Moved = []config.Moved{{From: "notification.b", To: "notification.b2"}}

	// A cap of one a day: a new address ahead of a in address order
	// would take u3's push, but it awaits review, so a sends it.
	promo := note("campaign.promo.notification.n", "P", "p", "", "u3")
	capped := cfgOf(promo, aMore, b)
	capped.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}

	// The same content as a, to u3, at an address ahead of a: it awaits
	// review, so a sends u3 (not "sent by campaign.promo... in this plan").
	twin := note("campaign.promo.notification.twin", "A", "a", "t", "u3")

	reviewed := func(h *history) *history {
		return h.send(a, state.Delivered, "u1", "u2").send(b, state.Delivered, "u1")
	}
	tests := []struct {
		name   string
		st     func(h *history)
		cfg    *config.Config
		send   string // address: targets, of the released changes
		review string // address (why), of those awaiting review
	}{
		{name: "nothing changed", st: func(h *history) { reviewed(h) }, cfg: cfgOf(a, b)},
		{name: "a new recipient of accepted content is released", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aMore, b),
			send: "notification.a: [u3]"},
		{name: "a failed target is retried", st: func(h *history) { h.send(a, state.Delivered, "u1", "u2").send(b, state.Failed, "u1") }, cfg: cfgOf(a, b),
			send: "notification.b: [u1]"},
		{name: "changed content awaits review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aEdited, b),
			review: "notification.a (content changed)"},
		{name: "a new address awaits review, the accepted one is released", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aMore, b, c),
			send: "notification.a: [u3]", review: "notification.c (new address)"},
		{name: "a forget awaits review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(a),
			review: "notification.b (forget)"},
		{name: "a move awaits review", st: func(h *history) { reviewed(h) }, cfg: moved,
			review: "notification.b2 (moved from notification.b)"},
		{name: "send_after come due, never reviewed: awaits review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(a, b, dueC),
			review: "notification.c (new address)"},
		{name: "send_after come due after a reviewed apply is released", st: func(h *history) {
			p, err := Make(Input{Config: cfgOf(a, b, waitingC), State: reviewed(h).st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			h.applyPlan(p)
		}, cfg: cfgOf(a, b, dueC), send: "notification.c: [u1 u2]"},
		{name: "what awaits review takes no room under a frequency_cap", st: func(h *history) { reviewed(h) }, cfg: capped,
			send: "notification.a: [u3]", review: "campaign.promo.notification.n (new address)"},
		{name: "what awaits review sends nothing in this plan", st: func(h *history) { reviewed(h) }, cfg: cfgOf(twin, aMore, b),
			send: "notification.a: [u3]", review: "campaign.promo.notification.twin (new address)"},
		{name: "an expired new address applies nothing: no review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(a, b, closed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(t)
			tt.st(h)
			p, err := Make(Input{Config: tt.cfg, State: h.st}, Options{Now: now, Scheduled: true})
			if err != nil {
				t.Fatal(err)
			}
			var send, review []string
			for _, c := range p.Changes {
				if len(c.Send) > 0 {
					send = append(send, fmt.Sprintf("%s: %v", c.Address, c.Send))
				}
			}
			for _, r := range p.AwaitingReview {
				review = append(review, fmt.Sprintf("%s (%s)", r.Address, r.Why))
			}
			if got := strings.Join(send, "; "); got != tt.send {
				t.Errorf("sends %q, want %q", got, tt.send)
			}
			if got := strings.Join(review, "; "); got != tt.review {
				t.Errorf("awaiting review %q, want %q", got, tt.review)
			}
			if len(p.Renames) > 0 || p.ResendGuard() != nil {
				t.Errorf("a scheduled plan has renames: %+v", p.Renames)
			}
			var planned int
			for _, bt := range p.Batches {
				for _, pt := range bt.Parts {
					planned += pt.To - pt.From
				}
			}
			if planned != p.Summary.Targets {
				t.Errorf("requests carry %d targets, the summary says %d", planned, p.Summary.Targets)
			}
			// Without Scheduled, the same plan applies everything.
			full, err := Make(Input{Config: tt.cfg, State: h.st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(full.AwaitingReview) > 0 || len(full.Changes) != len(p.Changes)+len(p.AwaitingReview) {
				t.Errorf("the full plan has %d changes and %d awaiting review; the scheduled one %d and %d",
					len(full.Changes), len(full.AwaitingReview), len(p.Changes), len(p.AwaitingReview))
			}
		})
	}
}

// TestTagOnlySettles: a change of only the tag sends nothing and warns
// once; apply records the decision, and the next plan is a no-op with no
// warning.
func TestTagOnlySettles(t *testing.T) {
	v1 := note("notification.a", "Sale", "20% off", "promo-a", "u1", "u2")
	v2 := note("notification.a", "Sale", "20% off", "promo-b", "u1", "u2")
	h := newHistory(t).send(v1, state.Delivered, "u1", "u2")
	p, err := Make(Input{Config: cfgOf(v2), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Changes[0]
	if c.Action != ActionNoOp || c.Targets.TagOnly != 2 || len(c.Warnings) == 0 || !c.Accept || !p.HasChanges() || p.Summary.Requests != 0 {
		t.Fatalf("first plan: %s %+v accept %v warnings %q", c.Action, c.Targets, c.Accept, c.Warnings)
	}
	h.applyPlan(p)
	for range 2 {
		p, err = Make(Input{Config: cfgOf(v2), State: h.st}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		c = p.Changes[0]
		if c.Action != ActionNoOp || c.Targets.UpToDate != 2 || len(p.Warnings) > 0 || c.Accept || p.HasChanges() {
			t.Fatalf("after apply: %s %+v accept %v warnings %q", c.Action, c.Targets, c.Accept, p.Warnings)
		}
	}
	// The devices still hold promo-a: an edit under promo-a replaces it.
	v3 := note("notification.a", "Sale", "30% off", "promo-a", "u1", "u2")
	p, err = Make(Input{Config: cfgOf(v3), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Changes[0]; c.Action != ActionReplace || len(c.Warnings) > 0 {
		t.Errorf("an edit under the earlier tag: %s %q", c.Action, c.Warnings)
	}
}
