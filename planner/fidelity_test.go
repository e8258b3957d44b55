package planner

import (
	"fmt"
	"strings"
	"testing"

	"pushform/config"
	"pushform/state"
)

// history builds a state the way apply does: each send is an intent and an
// outcome entry folded in, so EarlierTags and Unanswered are what apply
// would leave.
type history struct {
	t  *testing.T
	st *state.State
	n  int
}

func newHistory(t *testing.T) *history { return &history{t: t, st: state.New("test")} }

// send records m sent to ids with outcome o.
func (h *history) send(m *config.Message, o state.Outcome, ids ...string) *history {
	h.t.Helper()
	h.n++
	c := m.Content
	fp := Fingerprint(m.Kind, c)
	outs := make([]*state.Target, len(ids))
	for i := range outs {
		outs[i] = &state.Target{Outcome: o}
	}
	rid := fmt.Sprintf("req-%d", h.n)
	for _, e := range []state.Entry{
		{Type: state.EntryIntent, Time: now, Items: []state.Item{{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: &c, Targets: ids}}},
		{Type: state.EntryOutcome, Time: now, RequestID: rid, Items: []state.Item{{Address: m.Address, Fingerprint: fp, Targets: ids, Outcomes: outs}}},
	} {
		if err := h.st.ApplyEntry(e); err != nil {
			h.t.Fatal(err)
		}
	}
	return h
}

func sendAll(m *config.Message) []string { return m.Targets.IDs }

// TestTagChanges: replace only when the same tag is set before and after
// (spec 2.1 rule 5); another tag, a tag added or removed is a resend with
// the duplicate warning; when only the tag changed nothing is sent unless
// --replace asks for it.
func TestTagChanges(t *testing.T) {
	const addr = "notification.a"
	v1a := note(addr, "Sale", "20% off", "promo-a", "u1", "u2", "u3")
	v2a := note(addr, "Sale", "30% off", "promo-a", "u1", "u2", "u3")
	v2b := note(addr, "Sale", "30% off", "promo-b", "u1", "u2", "u3")
	v1b := note(addr, "Sale", "20% off", "promo-b", "u1", "u2", "u3")
	v1 := note(addr, "Sale", "20% off", "", "u1", "u2", "u3")
	v2 := note(addr, "Sale", "30% off", "", "u1", "u2", "u3")
	v1bMore := note(addr, "Sale", "20% off", "promo-b", "u1", "u2", "u3", "u4")
	v2bMore := note(addr, "Sale", "30% off", "promo-b", "u1", "u2", "u3", "u4")
	silent := note(addr, "Sale", "20% off", "promo-a", "u1", "u2", "u3")
	silent.Content.SilentInForeground = true

	tests := []struct {
		name   string
		st     func(*history)
		cfg    *config.Message
		opts   Options
		action Action
		send   []string
		counts TargetCounts
		warn   []string // each must appear in some warning; none: no warning
	}{
		{name: "same tag, body changed: replace", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v2a,
			action: ActionReplace, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3}},
		{name: "same tag, silent flag changed: replace", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: silent,
			action: ActionReplace, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3}},
		{name: "tag changed with the body: resend", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v2b,
			action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{`the tag changed from "promo-a" to "promo-b"`, "3 targets", "will show both"}},
		{name: "tag added with the body: resend", st: func(h *history) { h.send(v1, state.Delivered, sendAll(v1)...) }, cfg: v2b,
			action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{`a tag ("promo-b") was added`, "3 targets"}},
		{name: "tag removed with the body: resend", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v2,
			action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{`the tag "promo-a" was removed`}},
		{name: "only the tag changed: nothing sent", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v1b,
			action: ActionNoOp, counts: TargetCounts{Total: 3, TagOnly: 3},
			warn: []string{`only the tag changed, from "promo-a" to "promo-b"`, "nothing is sent to the 3 targets", `under tag "promo-a"`, "--replace notification.a"}},
		{name: "only a tag added: nothing sent", st: func(h *history) { h.send(v1, state.Delivered, sendAll(v1)...) }, cfg: v1b,
			action: ActionNoOp, counts: TargetCounts{Total: 3, TagOnly: 3}, warn: []string{`only a tag ("promo-b") was added`, "without a tag"}},
		{name: "only the tag changed, --replace: resend", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v1b,
			opts: Options{Replace: []string{addr}}, action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{`the tag changed from "promo-a" to "promo-b"`}},
		{name: "only the tag changed, a failed target gets the new one", st: func(h *history) {
			h.send(v1a, state.Delivered, "u1", "u2").send(v1a, state.Failed, "u3")
		}, cfg: v1b, action: ActionReplace, send: []string{"u3"}, counts: TargetCounts{Total: 3, TagOnly: 2, Replace: 1, Send: 1},
			warn: []string{"nothing is sent to the 2 targets"}},
		{name: "only the tag changed, an unknown target is not sent either", st: func(h *history) {
			h.send(v1a, state.Delivered, "u1", "u2").send(v1a, state.Unknown, "u3")
		}, cfg: v1b, action: ActionNoOp, counts: TargetCounts{Total: 3, TagOnly: 3}, warn: []string{"(or may have)"}},
		{name: "only the tag changed, new target: sent the new tag", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v1bMore,
			action: ActionSendNew, send: []string{"u4"}, counts: TargetCounts{Total: 4, New: 1, TagOnly: 3, Send: 1}, warn: []string{"nothing is sent to the 3 targets"}},
		{name: "after that, keeping the old tag is recorded: no warning again", st: func(h *history) {
			h.send(v1a, state.Delivered, sendAll(v1a)...).send(v1bMore, state.Delivered, "u4")
		}, cfg: v1bMore, action: ActionNoOp, counts: TargetCounts{Total: 4, UpToDate: 4}},
		{name: "and a body change then replaces only where the tag is the same", st: func(h *history) {
			h.send(v1a, state.Delivered, sendAll(v1a)...).send(v1bMore, state.Delivered, "u4")
		}, cfg: v2bMore, action: ActionResend, send: []string{"u1", "u2", "u3", "u4"}, counts: TargetCounts{Total: 4, Replace: 4, Send: 4},
			warn: []string{`the tag changed from "promo-a" to "promo-b"`, "3 targets that have the earlier one"}},
		{name: "untagged body change: resend", st: func(h *history) { h.send(v1, state.Delivered, sendAll(v1)...) }, cfg: v2,
			action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3}, warn: []string{"no tag is set", "3 targets"}},
		{name: "untagged --replace: shows twice", st: func(h *history) { h.send(v1, state.Delivered, sendAll(v1)...) }, cfg: v1,
			opts: Options{Replace: []string{addr}}, action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{"--replace sends it again and no tag is set: 3 targets"}},
		{name: "tagged --replace of the same content: replace", st: func(h *history) { h.send(v1a, state.Delivered, sendAll(v1a)...) }, cfg: v1a,
			opts: Options{Replace: []string{addr}}, action: ActionReplace, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3}},
		{name: "an earlier version whose tag is not recorded", st: func(h *history) {
			// A state written before EarlierTags: u3 holds content the
			// address no longer records.
			h.send(v1a, state.Delivered, sendAll(v1a)...)
			h.st.Messages[addr].Targets["u3"] = &state.Target{Outcome: state.Delivered, Fingerprint: "fp-of-a-lost-version"}
		}, cfg: v2a, action: ActionResend, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3},
			warn: []string{"1 target holds an earlier version whose tag is not recorded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(t)
			tt.st(h)
			opts := tt.opts
			opts.Now = now
			p, err := Make(Input{Config: cfgOf(tt.cfg), State: h.st}, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != tt.action || fmt.Sprint(c.Send) != fmt.Sprint(tt.send) && len(c.Send)+len(tt.send) > 0 || c.Targets != tt.counts {
				t.Errorf("action %s send %v counts %+v\nwant   %s send %v counts %+v", c.Action, c.Send, c.Targets, tt.action, tt.send, tt.counts)
			}
			all := strings.Join(c.Warnings, "\n")
			if len(tt.warn) == 0 && all != "" {
				t.Errorf("unexpected warnings:\n%s", all)
			}
			for _, w := range tt.warn {
				if !strings.Contains(all, w) {
					t.Errorf("warnings do not say %q:\n%s", w, all)
				}
			}
			// Keeping the earlier tag is recorded once, when nothing is sent.
			accept := len(tt.send) == 0 && tt.counts.TagOnly > 0
			if c.Accept != accept {
				t.Errorf("Accept = %v, want %v", c.Accept, accept)
			}
			if p.HasChanges() != (len(tt.send) > 0 || accept) {
				t.Errorf("HasChanges = %v", p.HasChanges())
			}
		})
	}
}

// TestUnansweredHeld: a target sent MaxUnknownResends times without a
// usable answer is held, tagged or not, with a warning naming the
// request ids, instead of being sent on every apply.
func TestUnansweredHeld(t *testing.T) {
	const addr = "notification.a"
	tagged := note(addr, "T", "B", "tag", "u1", "u2", "u3")
	untagged := note(addr, "T", "B", "", "u1", "u2", "u3")
	// unanswered sends m to every target, then n requests to u1 and u2
	// that get no usable answer.
	unanswered := func(m *config.Message, n int) *state.State {
		h := newHistory(t).send(m, state.Delivered, "u3")
		for range n {
			h.send(m, state.Unknown, "u1", "u2")
		}
		return h.st
	}
	tests := []struct {
		name   string
		st     *state.State
		cfg    *config.Message
		opts   Options
		action Action
		counts TargetCounts
		warn   []string
	}{
		{"tagged, 2 unanswered: sent again", unanswered(tagged, 2), tagged, Options{}, ActionRetry,
			TargetCounts{Total: 3, Unknown: 2, UpToDate: 1, Send: 2}, nil},
		{"tagged, 3 unanswered: held", unanswered(tagged, 3), tagged, Options{}, ActionNoOp,
			TargetCounts{Total: 3, Held: 2, UpToDate: 1}, []string{"2 targets were sent in 3 or more requests that got no usable answer", "req-4", "--retry-unknown", "--max-unknown-resends"}},
		{"tagged, 3 unanswered, limit 4: sent again", unanswered(tagged, 3), tagged, Options{MaxUnknownResends: 4}, ActionRetry,
			TargetCounts{Total: 3, Unknown: 2, UpToDate: 1, Send: 2}, nil},
		{"tagged, 3 unanswered, --retry-unknown: sent again", unanswered(tagged, 3), tagged, Options{RetryUnknown: true}, ActionRetry,
			TargetCounts{Total: 3, Unknown: 2, UpToDate: 1, Send: 2}, nil},
		// A replace under the same tag cannot show twice (issue 22, 5):
		// held targets get the new content like the others.
		{"tagged, 3 unanswered, content changed under the same tag: replaced", unanswered(tagged, 3), note(addr, "T", "B2", "tag", "u1", "u2", "u3"), Options{}, ActionReplace,
			TargetCounts{Total: 3, Replace: 3, Send: 3}, nil},
		{"tagged, 3 unanswered, content and tag changed: still held", unanswered(tagged, 3), note(addr, "T", "B2", "tag2", "u1", "u2", "u3"), Options{}, ActionResend,
			TargetCounts{Total: 3, Held: 2, Replace: 1, Send: 1}, []string{"no usable answer"}},
		{"untagged, 3 unanswered, content changed: still held", unanswered(untagged, 3), note(addr, "T", "B2", "", "u1", "u2", "u3"), Options{}, ActionResend,
			TargetCounts{Total: 3, Held: 2, Replace: 1, Send: 1}, []string{"no usable answer"}},
		{"untagged, 1 unanswered: held as untagged", unanswered(untagged, 1), untagged, Options{}, ActionNoOp,
			TargetCounts{Total: 3, Held: 2, UpToDate: 1}, []string{"without a tag a second copy would show twice"}},
		{"untagged, 3 unanswered: held, with the request ids", unanswered(untagged, 3), untagged, Options{}, ActionNoOp,
			TargetCounts{Total: 3, Held: 2, UpToDate: 1}, []string{"req-4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Now = now
			p, err := Make(Input{Config: cfgOf(tt.cfg), State: tt.st}, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != tt.action || c.Targets != tt.counts {
				t.Errorf("action %s counts %+v; want %s %+v", c.Action, c.Targets, tt.action, tt.counts)
			}
			all := strings.Join(c.Warnings, "\n")
			if len(tt.warn) == 0 && all != "" {
				t.Errorf("unexpected warnings:\n%s", all)
			}
			for _, w := range tt.warn {
				if !strings.Contains(all, w) {
					t.Errorf("warnings do not say %q:\n%s", w, all)
				}
			}
		})
	}
}

// TestSharedTagOverlap: two addresses with one tag reaching the same
// targets are flagged, naming both and the overlap, unless one is marked
// shared_tag.
func TestSharedTagOverlap(t *testing.T) {
	users := func(addr, tag string, ids ...string) *config.Message { return note(addr, "T", addr, tag, ids...) }
	devices := func(addr, tag string, ids ...string) *config.Message {
		m := users(addr, tag, ids...)
		m.Targets.Kind = config.TargetDevices
		return m
	}
	topics := func(addr, tag string, ids ...string) *config.Message {
		m := users(addr, tag, ids...)
		m.Targets.Kind = config.TargetTopics
		return m
	}
	a := users("notification.a", "promo", "u1", "u2", "u3")
	b := users("notification.b", "promo", "u2", "u3", "u4")
	tests := []struct {
		name   string
		msgs   []*config.Message
		st     *state.State
		shared map[string]bool
		want   []string // plan warnings, each containing all of its parts
	}{
		{name: "overlap", msgs: []*config.Message{a, b},
			want: []string{`notification.b: shares tag "promo" with notification.a, and both reach 2 of the same users`}},
		{name: "the later one marked shared_tag", msgs: []*config.Message{a, b}, shared: map[string]bool{"notification.b": true}},
		{name: "the earlier one marked shared_tag", msgs: []*config.Message{a, b}, shared: map[string]bool{"notification.a": true}},
		{name: "different tags", msgs: []*config.Message{a, users("notification.b", "other", "u2")}},
		{name: "no shared targets", msgs: []*config.Message{a, users("notification.b", "promo", "u9")}},
		{name: "untagged", msgs: []*config.Message{users("notification.a", "", "u1"), users("notification.b", "", "u1")}},
		{name: "user ids and device ids are not compared", msgs: []*config.Message{a, devices("notification.b", "promo", "u1")}},
		{name: "devices", msgs: []*config.Message{devices("notification.a", "t", "d1"), devices("notification.b", "t", "d1", "d2")},
			want: []string{`notification.b: shares tag "t" with notification.a, and both reach 1 of the same devices`}},
		{name: "topics", msgs: []*config.Message{topics("notification.a", "t", "news"), topics("notification.b", "t", "news")},
			want: []string{"1 of the same topics"}},
		{name: "a chain of three", msgs: []*config.Message{
			users("notification.c", "promo", "u1"), users("notification.a", "promo", "u1", "u2"), users("notification.b", "promo", "u1", "u2"),
		}, want: []string{"notification.b: shares tag \"promo\" with notification.a, and both reach 2", "notification.c: shares tag \"promo\" with notification.b, and both reach 1"}},
		{name: "both already delivered: nothing to warn about now", msgs: []*config.Message{a, b},
			st: func() *state.State {
				h := newHistory(t)
				h.send(a, state.Delivered, sendAll(a)...).send(b, state.Delivered, sendAll(b)...)
				return h.st
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range tt.msgs {
				m.SharedTag = tt.shared[m.Address]
			}
			opts := Options{Now: now}
			p, err := Make(Input{Config: cfgOf(tt.msgs...), State: tt.st}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Warnings) != len(tt.want) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(p.Warnings, "\n"), len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(p.Warnings[i], w) {
					t.Errorf("warning %q does not say %q", p.Warnings[i], w)
				}
			}
		})
	}
}
