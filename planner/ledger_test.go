package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

// forgetAddr records that addr was forgotten at when.
func (h *history) forget(addr string, when time.Time, targets ...string) *history {
	h.t.Helper()
	if err := h.st.ApplyEntry(state.Entry{Type: state.EntryForget, Time: when, Items: []state.Item{{Address: addr, Targets: targets}}}); err != nil {
		h.t.Fatal(err)
	}
	return h
}

// apply records what p's prelude records: already-delivered targets.
func recordAlready(t *testing.T, st *state.State, p *Plan) {
	t.Helper()
	for _, e := range p.RecordEntries(now) {
		if err := st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLedgerHoldsBack: a target is not sent content the ledger says it
// received, under any address, current or forgotten.
func TestLedgerHoldsBack(t *testing.T) {
	coupon := note("notification.y", "Coupon", "Your 10% coupon", "", "bob", "carol")
	tests := []struct {
		name    string
		history func(h *history)
		cfg     []*config.Message
		opts    Options
		// per address: action, targets sent, targets already delivered
		want map[string]struct {
			action        Action
			send, already []string
		}
		earlier string // Change.AlreadyLine of the first change with one
	}{
		{"forgotten and re-added", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol").forget(coupon.Address, now.Add(-time.Hour))
		}, []*config.Message{coupon}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{coupon.Address: {ActionAlreadyDelivered, nil, []string{"bob", "carol"}}},
			"already delivered on 2026-11-22 under notification.y (forgotten), request req-1"},
		{"a copied block, a target more", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol")
		}, []*config.Message{coupon, note("notification.copy", "Coupon", "Your 10% coupon", "", "bob", "dave")}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{"notification.copy": {ActionCreate, []string{"dave"}, []string{"bob"}}, coupon.Address: {ActionNoOp, nil, nil}},
			"already delivered on 2026-11-22 under notification.y, request req-1"},
		{"two blocks alike in one configuration", nil, []*config.Message{
			note("notification.a", "Coupon", "Your 10% coupon", "", "bob", "carol"),
			note("notification.b", "Coupon", "Your 10% coupon", "", "carol", "dave"),
		}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{"notification.a": {ActionCreate, []string{"bob", "carol"}, nil}, "notification.b": {ActionCreate, []string{"dave"}, []string{"carol"}}},
			"sent by notification.a in this plan"},
		{"a tag changed under a new name", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol").forget(coupon.Address, now)
		}, []*config.Message{note("notification.z", "Coupon", "Your 10% coupon", "coupon", "bob", "carol")}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{"notification.z": {ActionAlreadyDelivered, nil, []string{"bob", "carol"}}}, "already delivered on 2026-11-22 under notification.y (forgotten), request req-1"},
		{"a split into two blocks", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol")
		}, []*config.Message{note("notification.y1", "Coupon", "Your 10% coupon", "", "bob"), note("notification.y2", "Coupon", "Your 10% coupon", "", "carol")},
			Options{}, map[string]struct {
				action        Action
				send, already []string
			}{"notification.y1": {ActionAlreadyDelivered, nil, []string{"bob"}}, "notification.y2": {ActionAlreadyDelivered, nil, []string{"carol"}}},
			"already delivered on 2026-11-22 under notification.y, request req-1"},
		{"an unknown outcome may have", func(h *history) {
			h.send(coupon, state.Unknown, "bob").forget(coupon.Address, now)
		}, []*config.Message{coupon}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{coupon.Address: {ActionCreate, []string{"carol"}, []string{"bob"}}}, "may have been delivered on 2026-11-22 under notification.y (forgotten; unknown outcome), request req-1"},
		{"--allow-resend repeats", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol").forget(coupon.Address, now)
		}, []*config.Message{coupon}, Options{AllowResend: true}, map[string]struct {
			action        Action
			send, already []string
		}{coupon.Address: {ActionCreate, []string{"bob", "carol"}, nil}}, ""},
		{"another content is sent", func(h *history) {
			h.send(coupon, state.Delivered, "bob", "carol").forget(coupon.Address, now)
		}, []*config.Message{note("notification.y", "Coupon", "Your 15% coupon", "", "bob")}, Options{}, map[string]struct {
			action        Action
			send, already []string
		}{coupon.Address: {ActionCreate, []string{"bob"}, nil}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(t)
			states := []*state.State{nil}
			if tt.history != nil {
				tt.history(h)
				states = []*state.State{h.st, compactCopy(t, h.st)}
			}
			opts := tt.opts
			opts.Now = now
			for _, st := range states {
				p, err := Make(Input{Config: cfgOf(tt.cfg...), State: st}, opts)
				if err != nil {
					t.Fatal(err)
				}
				line := ""
				for addr, w := range tt.want {
					c := change(t, p, addr)
					if c.Action != w.action || !slices.Equal(c.Send, w.send) || !slices.Equal(c.AlreadyDelivered, w.already) || c.Targets.AlreadyDelivered != len(w.already) {
						t.Errorf("%s: %s send %v already %v; want %s %v %v", addr, c.Action, c.Send, c.AlreadyDelivered, w.action, w.send, w.already)
					}
					if l := c.AlreadyLine(); l != "" {
						line = l
					}
				}
				if line != tt.earlier {
					t.Errorf("earlier delivery %q, want %q", line, tt.earlier)
				}
				if tt.opts.AllowResend && !strings.Contains(strings.Join(p.Warnings, "\n"), "--allow-resend sends it again") {
					t.Errorf("the plan does not say it repeats: %q", p.Warnings)
				}
				if len(p.Renames) > 0 {
					t.Errorf("renames %v for content already delivered", p.Renames)
				}
			}
		})
	}
}

// TestAlreadyDeliveredRecorded: apply records an address whose targets
// all had its content as up to date, so the next plan has no changes.
func TestAlreadyDeliveredRecorded(t *testing.T) {
	coupon := note("notification.y", "Coupon", "Your 10% coupon", "", "bob", "carol")
	h := newHistory(t).send(coupon, state.Delivered, "bob", "carol").forget(coupon.Address, now.Add(-time.Hour))
	p, err := Make(Input{Config: cfgOf(coupon), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasChanges() || p.Summary.Requests != 0 || p.Summary.AlreadyDelivered != 1 || p.Summary.AlreadyDeliveredTargets != 2 {
		t.Fatalf("plan: changes %v summary %+v", p.HasChanges(), p.Summary)
	}
	recordAlready(t, h.st, p)
	if r := h.st.Messages[coupon.Address].Target("bob"); r.Outcome != state.AlreadyDelivered || r.RequestID != "req-1" || r.Reason != coupon.Address {
		t.Fatalf("bob recorded as %+v", r)
	}
	p, err = Make(Input{Config: cfgOf(coupon), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if p.HasChanges() || change(t, p, coupon.Address).Action != ActionNoOp {
		t.Fatalf("the plan after: %s, %+v", change(t, p, coupon.Address).Action, p.Summary)
	}
	// A frequency cap counts the delivery once, not the record of it.
	cfg := cfgOf(coupon, note("notification.other", "Other", "News", "", "bob"))
	cfg.FrequencyCap = &config.FrequencyCap{Max: 2, Per: 24 * time.Hour}
	if p, err = Make(Input{Config: cfg, State: h.st}, Options{Now: now}); err != nil || change(t, p, "notification.other").Action != ActionCreate {
		t.Fatalf("cap counted the record of an earlier delivery: %v %+v", err, p.Summary)
	}
}

// TestRepeatAfter: the same content reaches a target again only once
// repeat_after has passed since its last delivery.
func TestRepeatAfter(t *testing.T) {
	weekly := note("notification.reminder", "Reminder", "Your weekly reminder", "", "bob")
	h := newHistory(t).send(weekly, state.Delivered, "bob")
	for _, tt := range []struct {
		name   string
		repeat time.Duration
		at     time.Time
		send   bool
	}{
		{"never without it", 0, now.Add(100 * 24 * time.Hour), false},
		{"not before it passed", time.Hour, now.Add(59 * time.Minute), false},
		{"once it passed", time.Hour, now.Add(2 * time.Hour), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := *weekly
			m.RepeatAfter = tt.repeat
			for _, st := range []*state.State{h.st, forgottenCopy(t, h.st, weekly.Address)} {
				p, err := Make(Input{Config: cfgOf(&m), State: st}, Options{Now: tt.at})
				if err != nil {
					t.Fatal(err)
				}
				c := change(t, p, weekly.Address)
				if sent := len(c.Send) == 1; sent != tt.send || sent && c.Targets.Repeat != 1 {
					t.Fatalf("%s: send %v counts %+v", c.Action, c.Send, c.Targets)
				}
				// Recorded under this address, a repeat is its own action
				// (forgotten, the address is created again).
				if st == h.st && tt.send && (c.Action != ActionRepeat || p.Summary.Repeat != 1 || p.Summary.Retry != 0) {
					t.Errorf("a repeat planned as %s, summary %+v", c.Action, p.Summary)
				}
			}
		})
	}
}

// TestRepeatWithRetry: an address that repeats some targets and retries
// others is a retry, its repeats noted in its counts.
func TestRepeatWithRetry(t *testing.T) {
	weekly := note("notification.reminder", "Reminder", "Your weekly reminder", "", "bob", "carol")
	h := newHistory(t).send(weekly, state.Delivered, "bob")
	h.send(weekly, state.Failed, "carol")
	m := *weekly
	m.RepeatAfter = time.Hour
	p, err := Make(Input{Config: cfgOf(&m), State: h.st}, Options{Now: now.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c := change(t, p, weekly.Address)
	if c.Action != ActionRetry || c.Targets.Retry != 1 || c.Targets.Repeat != 1 || len(c.Send) != 2 || p.Summary.Retry != 1 || p.Summary.Repeat != 0 {
		t.Errorf("%s: send %v counts %+v summary %+v", c.Action, c.Send, c.Targets, p.Summary)
	}
}

// forgottenCopy is st read back with addr forgotten.
func forgottenCopy(t *testing.T, st *state.State, addr string) *state.State {
	t.Helper()
	c := compactCopy(t, st)
	if err := c.ApplyEntry(state.Entry{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: addr}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBadgeLedger: a badge target has the count when the last badge count
// the ledger has for it is this one.
func TestBadgeLedger(t *testing.T) {
	three := msg("badge.a", config.KindBadge, config.TargetDevices, []string{"d1"}, config.Content{BadgeCount: ptr(3)})
	five := msg("badge.b", config.KindBadge, config.TargetDevices, []string{"d1"}, config.Content{BadgeCount: ptr(5)})
	again := msg("badge.c", config.KindBadge, config.TargetDevices, []string{"d1"}, config.Content{BadgeCount: ptr(3)})
	h := newHistory(t).send(three, state.Delivered, "d1")
	p, err := Make(Input{Config: cfgOf(three, again), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if c := change(t, p, "badge.c"); c.Action != ActionAlreadyDelivered {
		t.Fatalf("badge 3 after 3: %s", c.Action)
	}
	h.n++ // a later request
	later := now.Add(time.Minute)
	c5 := five.Content
	fp := Fingerprint(five.Kind, c5)
	for _, e := range []state.Entry{
		{Type: state.EntryIntent, Time: later, Items: []state.Item{{Address: five.Address, Kind: five.Kind, TargetKind: five.Targets.Kind, Fingerprint: fp, Content: &c5, Targets: []string{"d1"}}}},
		{Type: state.EntryOutcome, Time: later, RequestID: "req-5", Items: []state.Item{{Address: five.Address, Fingerprint: fp, Targets: []string{"d1"}, Outcomes: []*state.Target{{Outcome: state.Delivered}}}}},
	} {
		if err := h.st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	p, err = Make(Input{Config: cfgOf(three, five, again), State: h.st}, Options{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if c := change(t, p, "badge.c"); c.Action != ActionCreate || len(c.Send) != 1 {
		t.Fatalf("badge 3 after 5: %s send %v", c.Action, c.Send)
	}
}

// TestDisabled: enabled = false sends nothing and forgets nothing.
func TestDisabled(t *testing.T) {
	coupon := note("notification.y", "Coupon", "Your 10% coupon", "", "bob", "carol")
	h := newHistory(t).send(coupon, state.Delivered, "bob")
	paused := note("notification.y", "Coupon", "Your 10% coupon", "", "carol", "dave")
	paused.Disabled = true
	p, err := Make(Input{Config: cfgOf(paused), State: h.st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c := change(t, p, "notification.y")
	if c.Action != ActionDisabled || len(c.Send) != 0 || len(c.Forget) != 0 || p.HasChanges() || p.Summary.Disabled != 1 || p.Summary.Forget != 0 {
		t.Fatalf("%s send %v forget %v summary %+v", c.Action, c.Send, c.Forget, p.Summary)
	}
}

// TestCapCountsForgotten: a frequency cap counts what a forgotten address
// delivered.
func TestCapCountsForgotten(t *testing.T) {
	old := note("notification.old", "Old", "News", "", "bob")
	h := newHistory(t).send(old, state.Delivered, "bob").forget(old.Address, now)
	cfg := cfgOf(note("notification.new", "New", "More news", "", "bob"))
	cfg.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
	for _, st := range []*state.State{h.st, compactCopy(t, h.st)} {
		p, err := Make(Input{Config: cfg, State: st}, Options{Now: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if c := change(t, p, "notification.new"); c.Action != ActionCapped {
			t.Fatalf("%s: the forgotten delivery was not counted", c.Action)
		}
		if p, err = Make(Input{Config: cfg, State: st}, Options{Now: now.Add(25 * time.Hour)}); err != nil || change(t, p, "notification.new").Action != ActionCreate {
			t.Fatalf("after the window: %v", err)
		}
	}
}

// TestRenameWithEditFromLedger: a new address sending edited content to
// the targets of an address forgotten in an earlier apply is a rename with
// an edit: warned, refused without a moved block or --allow-resend.
func TestRenameWithEditFromLedger(t *testing.T) {
	old := note("notification.flash", "Flash sale", "Two hours only", "", "bob", "carol")
	h := newHistory(t).send(old, state.Delivered, "bob", "carol").forget(old.Address, now.Add(-time.Hour))
	for _, tt := range []struct {
		name string
		m    *config.Message
		want string
	}{
		{"body edit", note("notification.flash2", "Flash sale", "Two hours only!", "", "bob", "carol"), "will show both"},
		{"url parameter", func() *config.Message {
			m := note("notification.flash2", "Flash sale", "Two hours only", "", "bob", "carol")
			m.Content.OpenToURL = "https://shop.example.com/?utm=push"
			return m
		}(), "will show both"},
		{"silent_in_foreground", func() *config.Message {
			m := note("notification.flash2", "Flash sale", "Two hours only", "", "bob", "carol")
			m.Content.SilentInForeground = true
			return m
		}(), "will show both"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Make(Input{Config: cfgOf(tt.m), State: h.st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Renames) != 1 || p.Renames[0].From != old.Address || p.Renames[0].Targets != 2 || p.ResendGuard() == nil {
				t.Fatalf("renames %v", p.Renames)
			}
			if !strings.Contains(strings.Join(p.Warnings, "\n"), tt.want) {
				t.Fatalf("warnings %q", p.Warnings)
			}
			cfg := cfgOf(tt.m)
			cfg.Moved = []config.Moved{{From: old.Address, To: tt.m.Address}}
			if p, err = Make(Input{Config: cfg, State: h.st}, Options{Now: now}); err != nil || len(p.Renames) != 0 {
				t.Fatalf("with the moved block: %v %v", err, p.Renames)
			}
			if p, err = Make(Input{Config: cfgOf(tt.m), State: h.st}, Options{Now: now.Add(8 * 24 * time.Hour)}); err != nil || len(p.Renames) != 0 {
				t.Fatalf("long after the forget: %v %v", err, p.Renames)
			}
		})
	}
}

// TestStreamWaitsForRenames: a message that may be a rename with an edit
// of an address forgotten lately is planned from the whole list, so apply
// can refuse it before sending; another content streams.
func TestStreamWaitsForRenames(t *testing.T) {
	old := note("notification.flash", "Flash sale", "Two hours only", "", "u1", "u2")
	h := newHistory(t).send(old, state.Delivered, "u1", "u2").forget(old.Address, now.Add(-time.Hour))
	for _, tt := range []struct {
		title, body string
		streams     bool
	}{
		{"Flash sale", "Two hours only!", false},
		{"Spring", "Everything 20% off", true},
	} {
		m := note("notification.flash2", tt.title, tt.body, "", "u1", "u2")
		cfg := cfgOf(m)
		if got := NewStream(unresolved(cfg, m), h.st, Options{Now: now}) != nil; got != tt.streams {
			t.Errorf("%q: streams %v, want %v", tt.body, got, tt.streams)
		}
	}
}
