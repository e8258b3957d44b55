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

// shaped gives m the shape its configuration would have.
func shaped(m *config.Message, shape string) *config.Message {
	m.Shape = shape
	return m
}

// accept records in h's state the shapes of ms as a reviewed apply
// accepted them.
func (h *history) accept(ms ...*config.Message) *history {
	h.t.Helper()
	e := state.Entry{Type: state.EntryAccept, Time: now}
	for _, m := range ms {
		e.Items = append(e.Items, state.Item{Address: m.Address, Fingerprint: m.Shape})
	}
	if err := h.st.ApplyEntry(e); err != nil {
		h.t.Fatal(err)
	}
	return h
}

// TestScheduled: a scheduled plan releases the changes of addresses
// whose shape is the one a reviewed apply accepted (new recipients of an
// audience read from a data source, retries, held-back sends) and lists
// every other change as awaiting review.
func TestScheduled(t *testing.T) {
	a := shaped(note("notification.a", "A", "a", "t", "u1", "u2"), "shape-a")
	b := shaped(note("notification.b", "B", "b", "", "u1"), "shape-b")
	// The audience of a data source grew: the same shape.
	aMore := shaped(note("notification.a", "A", "a", "t", "u1", "u2", "u3"), "shape-a")
	// A static list grew, or a setting changed: another shape.
	aStatic := shaped(note("notification.a", "A", "a", "t", "u1", "u2", "u3"), "shape-a2")
	aEdited := shaped(note("notification.a", "A", "a!", "t", "u1", "u2", "u3"), "shape-a3")
	c := shaped(note("notification.c", "C", "c", "", "u1"), "shape-c")
	due := now.Add(-time.Minute)
	later := now.Add(time.Hour)
	// notification.c with a send_after: waiting, then come due.
	waitingC := shaped(note("notification.c", "C", "c", "", "u1", "u2"), "shape-c-at")
	waitingC.SendAfter = &later
	dueC := shaped(note("notification.c", "C", "c", "", "u1", "u2"), "shape-c-at")
	dueC.SendAfter = &due
	closed := shaped(note("notification.c", "C", "c", "", "u1"), "shape-c-closed")
	closed.SendBefore = &due
	renamed := shaped(note("notification.b2", "B", "b", "", "u1"), "shape-b")
	moved := cfgOf(a, renamed)
	moved.Moved = []config.Moved{{From: "notification.b", To: "notification.b2"}}

	// A cap of one a day: a new address ahead of a in address order
	// would take u3's push, but it awaits review, so a sends it.
	promo := shaped(note("campaign.promo.notification.n", "P", "p", "", "u3"), "shape-p")
	capped := cfgOf(promo, aMore, b)
	capped.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}

	// The same content as a, to u3, at an address ahead of a: it awaits
	// review, so a sends u3 (not "sent by campaign.promo... in this plan").
	twin := shaped(note("campaign.promo.notification.twin", "A", "a", "t", "u3"), "shape-twin")

	sent := func(h *history) *history {
		return h.send(a, state.Delivered, "u1", "u2").send(b, state.Delivered, "u1")
	}
	reviewed := func(h *history) *history { return sent(h).accept(a, b) }
	tests := []struct {
		name   string
		st     func(h *history)
		cfg    *config.Config
		send   string // address: targets, of the released changes
		review string // address (why), of those awaiting review
	}{
		{name: "nothing changed", st: func(h *history) { reviewed(h) }, cfg: cfgOf(a, b)},
		{name: "a new recipient of a data source is released", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aMore, b),
			send: "notification.a: [u3]"},
		{name: "a new id of a static list awaits review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aStatic, b),
			review: "notification.a (" + ReviewShape + ")"},
		{name: "a failed target is retried", st: func(h *history) { h.send(a, state.Delivered, "u1", "u2").send(b, state.Failed, "u1").accept(a, b) }, cfg: cfgOf(a, b),
			send: "notification.b: [u1]"},
		{name: "a failed target of a changed shape awaits review", st: func(h *history) { h.send(a, state.Delivered, "u1", "u2").send(b, state.Failed, "u1").accept(a, b) },
			cfg: cfgOf(a, shaped(note("notification.b", "B", "b", "", "u1"), "shape-b-repeats")), review: "notification.b (" + ReviewShape + ")"},
		{name: "changed content awaits review", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aEdited, b),
			review: "notification.a (content changed)"},
		{name: "a new address awaits review, the accepted one is released", st: func(h *history) { reviewed(h) }, cfg: cfgOf(aMore, b, c),
			send: "notification.a: [u3]", review: "notification.c (new address)"},
		{name: "a new address whose shape a reviewed apply accepted is released", st: func(h *history) { reviewed(h).accept(c) }, cfg: cfgOf(a, b, c),
			send: "notification.c: [u1]"},
		{name: "a state from before reviewed shapes", st: func(h *history) { sent(h) }, cfg: cfgOf(aMore, b),
			review: "notification.a (" + ReviewBefore + ")"},
		{name: "an address no reviewed apply accepted", st: func(h *history) { sent(h).accept(b) }, cfg: cfgOf(aMore, b),
			review: "notification.a (" + ReviewNone + ")"},
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
			if len(p.Shapes) != 1 || p.Shapes[0].Address != "notification.c" {
				t.Fatalf("the reviewed plan accepts %+v", p.Shapes)
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

// TestShapesAccepted: a reviewed plan accepts the shape of every address
// whose shape the state does not record, and drops those of addresses no
// longer configured; it has changes while it does. A scheduled plan
// accepts none, and --target limits what is accepted.
func TestShapesAccepted(t *testing.T) {
	a := shaped(note("notification.a", "A", "a", "", "u1"), "shape-a")
	b := shaped(note("notification.b", "B", "b", "", "u1"), "shape-b")
	b2 := shaped(note("notification.b", "B", "b", "", "u1"), "shape-b2")
	h := newHistory(t).send(a, state.Delivered, "u1").send(b, state.Delivered, "u1")
	shapes := func(cfg *config.Config, opts Options) (string, bool) {
		t.Helper()
		opts.Now = now
		p, err := Make(Input{Config: cfg, State: h.st}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range p.Shapes {
			out = append(out, fmt.Sprintf("%s=%s<-%s", s.Address, s.Fingerprint, s.Prior))
		}
		return strings.Join(out, " "), p.HasChanges()
	}
	for _, step := range []struct {
		name    string
		cfg     *config.Config
		opts    Options
		want    string
		changes bool
		apply   bool
	}{
		{"a state from before records every shape", cfgOf(a, b), Options{}, "notification.a=shape-a<- notification.b=shape-b<-", true, false},
		{"--target accepts the addresses it names", cfgOf(a, b), Options{Targets: []string{"notification.b"}}, "notification.b=shape-b<-", true, false},
		{"a scheduled plan accepts nothing", cfgOf(a, b), Options{Scheduled: true}, "", false, false},
		{"accepted", cfgOf(a, b), Options{}, "notification.a=shape-a<- notification.b=shape-b<-", true, true},
		{"nothing more to accept: no changes", cfgOf(a, b), Options{}, "", false, false},
		{"a changed shape alone is a change", cfgOf(a, b2), Options{}, "notification.b=shape-b2<-shape-b", true, false},
		{"a message without a shape (not loaded from files) has none", cfgOf(a, note("notification.b", "B", "b", "", "u1")), Options{}, "", false, false},
	} {
		got, changes := shapes(step.cfg, step.opts)
		if got != step.want || changes != step.changes {
			t.Fatalf("%s: shapes %q, changes %v; want %q, %v", step.name, got, changes, step.want, step.changes)
		}
		if step.apply {
			p, err := Make(Input{Config: step.cfg, State: h.st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			h.applyPlan(p)
		}
	}
	// A new address that can send nothing has no shape to accept.
	closed := shaped(note("notification.c", "C", "c", "", "u1"), "shape-c")
	due := now.Add(-time.Minute)
	closed.SendBefore = &due
	paused := shaped(note("notification.d", "D", "d", "", "u1"), "shape-d")
	paused.Disabled = true
	if got, changes := shapes(cfgOf(a, b, closed, paused), Options{}); got != "" || changes {
		t.Fatalf("an expired and a paused new address: shapes %q, changes %v", got, changes)
	}
	// b leaves the configuration: its forget and its shape go together.
	p, err := Make(Input{Config: cfgOf(a), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Shapes) != 1 || p.Shapes[0] != (Shape{Address: "notification.b", Prior: "shape-b"}) {
		t.Fatalf("b forgotten: shapes %+v", p.Shapes)
	}
	h.applyPlan(p)
	if _, ok := h.st.AcceptedShape("notification.b"); ok {
		t.Error("the shape of a forgotten address is still accepted")
	}
}

// TestScheduledVariants: the variants and holdout of a notification are
// reviewed with its shape: new weights or a new holdout share (another
// shape) send nothing and forget nothing until reviewed, not even to
// recipients who joined since (whom they would place), while those
// already placed keep their variant whatever the shape.
func TestScheduledVariants(t *testing.T) {
	ids := make([]string, 220)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%03d", i)
	}
	// The audience grows from 200 to 220 as a data source would, which
	// leaves the shape alone.
	audience := 200
	split := func(shape string, wa, wb int, holdout float64) *config.Message {
		m := shaped(note("notification.v", "T", "B", "", ids[:audience]...), shape)
		m.Salt = m.Address
		m.Holdout = holdout
		m.Variants = []config.Variant{{Name: "a", Weight: wa, Content: config.Content{Title: "A", Body: "a"}}, {Name: "b", Weight: wb, Content: config.Content{Title: "B", Body: "b"}}}
		return m
	}
	h := newHistory(t)
	first := split("shape-50-50", 50, 50, 0.1)
	p, err := Make(Input{Config: cfgOf(first), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	h.applyPlan(p)
	audience = len(ids)
	for _, tc := range []struct {
		name string
		m    *config.Message
	}{
		{"weights", split("shape-5-95", 5, 95, 0.1)},
		{"holdout", split("shape-holdout", 50, 50, 0.3)},
	} {
		p, err := Make(Input{Config: cfgOf(tc.m), State: h.st}, Options{Now: now, Scheduled: true})
		if err != nil {
			t.Fatal(err)
		}
		if p.Summary.Targets != 0 || len(p.AwaitingReview) == 0 {
			t.Errorf("%s: a scheduled plan sends %d targets, %d changes await review", tc.name, p.Summary.Targets, len(p.AwaitingReview))
		}
		for _, c := range p.Changes {
			if len(c.Forget) > 0 || len(c.Holdout) > 0 {
				t.Errorf("%s: %s forgets %d and holds out %d unreviewed", tc.name, c.Address, len(c.Forget), len(c.Holdout))
			}
		}
		for _, r := range p.AwaitingReview {
			if r.Why != ReviewShape {
				t.Errorf("%s: %s awaits review for %q", tc.name, r.Address, r.Why)
			}
		}
	}
	// Unchanged, nothing awaits review, and the recipients who joined are
	// sent.
	p, err = Make(Input{Config: cfgOf(split("shape-50-50", 50, 50, 0.1)), State: h.st}, Options{Now: now, Scheduled: true})
	if err != nil || len(p.AwaitingReview) > 0 {
		t.Fatalf("unchanged: %v %+v", err, p.AwaitingReview)
	}
	if sent, held := p.Summary.Targets, p.Summary.HoldoutTargets; sent+held != len(ids)-200 {
		t.Errorf("unchanged: the %d recipients who joined are not placed: %d sent, %d held out", len(ids)-200, sent, held)
	}
}
