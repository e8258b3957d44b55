package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func msg(addr string, kind config.Kind, tk config.TargetKind, ids []string, c config.Content) *config.Message {
	return &config.Message{Address: addr, Kind: kind, Targets: config.Targets{Kind: tk, IDs: ids}, Content: c}
}

func note(addr, title, body, tag string, ids ...string) *config.Message {
	return msg(addr, config.KindNotification, config.TargetUsers, ids, config.Content{Title: title, Body: body, Tag: tag})
}

func cfgOf(ms ...*config.Message) *config.Config {
	return &config.Config{Service: config.Service{Environment: "test"}, Messages: ms}
}

// recorded returns a state in which m was sent with outcome o to every id
// in its config, except those listed in overrides.
func recorded(m *config.Message, o state.Outcome, overrides map[string]state.Outcome) *state.State {
	st := state.New("test")
	content := m.Content
	fp := Fingerprint(m.Kind, content)
	sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: content, Targets: map[string]*state.Target{}}
	for _, id := range m.Targets.IDs {
		out := o
		if v, ok := overrides[id]; ok {
			out = v
		}
		sm.Targets[id] = &state.Target{Outcome: out, Fingerprint: fp, RequestID: "req-1", Time: now}
	}
	st.Messages[m.Address] = sm
	return st
}

func TestMakeActions(t *testing.T) {
	base := note("notification.a", "Hi", "Body", "tag-a", "u1", "u2", "u3")
	untagged := note("notification.a", "Hi", "Body", "", "u1", "u2", "u3")
	badge := msg("badge.b", config.KindBadge, config.TargetDevices, []string{"d1", "d2"}, config.Content{BadgeCount: ptr(3)})
	later := now.Add(time.Hour)
	waiting := note("notification.a", "Hi", "Body", "tag-a", "u1")
	waiting.SendAfter = &later

	tests := []struct {
		name       string
		cfg        *config.Message
		st         *state.State
		recipients []string
		opts       Options
		action     Action
		send       []string
		counts     TargetCounts
		warn       string
	}{
		{name: "create", cfg: base, action: ActionCreate, send: []string{"u1", "u2", "u3"},
			counts: TargetCounts{Total: 3, New: 3, Send: 3}},
		{name: "no-op", cfg: base, st: recorded(base, state.Delivered, nil), action: ActionNoOp,
			counts: TargetCounts{Total: 3, UpToDate: 3}},
		{name: "send to new targets", cfg: note("notification.a", "Hi", "Body", "tag-a", "u1", "u2", "u3", "u4"),
			st: recorded(base, state.Delivered, nil), action: ActionSendNew, send: []string{"u4"},
			counts: TargetCounts{Total: 4, New: 1, UpToDate: 3, Send: 1}},
		{name: "retry failed", cfg: base, st: recorded(base, state.Delivered, map[string]state.Outcome{"u2": state.Failed}),
			action: ActionRetry, send: []string{"u2"}, counts: TargetCounts{Total: 3, Retry: 1, UpToDate: 2, Send: 1}},
		{name: "unknown tagged is re-sent", cfg: base, st: recorded(base, state.Delivered, map[string]state.Outcome{"u3": state.Unknown}),
			action: ActionRetry, send: []string{"u3"}, counts: TargetCounts{Total: 3, Unknown: 1, UpToDate: 2, Send: 1}},
		{name: "unknown untagged is held", cfg: untagged, st: recorded(untagged, state.Delivered, map[string]state.Outcome{"u3": state.Unknown}),
			action: ActionNoOp, counts: TargetCounts{Total: 3, Held: 1, UpToDate: 2}, warn: "--retry-unknown"},
		{name: "unknown untagged with --retry-unknown", cfg: untagged, st: recorded(untagged, state.Delivered, map[string]state.Outcome{"u3": state.Unknown}),
			opts: Options{RetryUnknown: true}, action: ActionRetry, send: []string{"u3"}, counts: TargetCounts{Total: 3, Unknown: 1, UpToDate: 2, Send: 1}},
		{name: "skipped not retried", cfg: base, st: recorded(base, state.Delivered, map[string]state.Outcome{"u1": state.Skipped}),
			recipients: []string{"u2"}, action: ActionNoOp, counts: TargetCounts{Total: 3, Skipped: 1, UpToDate: 2}},
		{name: "skipped user reachable again", cfg: base, st: recorded(base, state.Delivered, map[string]state.Outcome{"u1": state.Skipped}),
			recipients: []string{"u1", "u2"}, action: ActionRetry, send: []string{"u1"}, counts: TargetCounts{Total: 3, Reachable: 1, UpToDate: 2, Send: 1}},
		{name: "tagged body change replaces", cfg: note("notification.a", "Hi", "New body", "tag-a", "u1", "u2", "u3"),
			st: recorded(base, state.Delivered, map[string]state.Outcome{"u3": state.Skipped}), action: ActionReplace, send: []string{"u1", "u2"},
			counts: TargetCounts{Total: 3, Replace: 2, Skipped: 1, Send: 2}},
		{name: "untagged body change resends with warning", cfg: note("notification.a", "Hi", "New body", "", "u1", "u2", "u3"),
			st: recorded(untagged, state.Delivered, nil), action: ActionResend, send: []string{"u1", "u2", "u3"},
			counts: TargetCounts{Total: 3, Replace: 3, Send: 3}, warn: "no tag"},
		{name: "targets removed are forgotten", cfg: note("notification.a", "Hi", "Body", "tag-a", "u1"),
			st: recorded(base, state.Delivered, nil), action: ActionNoOp, counts: TargetCounts{Total: 1, UpToDate: 1, Forget: 2}},
		{name: "forced replace", cfg: base, st: recorded(base, state.Delivered, nil), opts: Options{Replace: []string{"notification.a"}},
			action: ActionReplace, send: []string{"u1", "u2", "u3"}, counts: TargetCounts{Total: 3, Replace: 3, Send: 3}},
		{name: "badge unchanged", cfg: badge, st: recorded(badge, state.Delivered, nil), action: ActionNoOp,
			counts: TargetCounts{Total: 2, UpToDate: 2}},
		{name: "badge count change converges", cfg: msg("badge.b", config.KindBadge, config.TargetDevices, []string{"d1", "d2"}, config.Content{BadgeCount: ptr(0)}),
			st: recorded(badge, state.Delivered, nil), action: ActionUpdate, send: []string{"d1", "d2"}, counts: TargetCounts{Total: 2, Replace: 2, Send: 2}},
		{name: "send_after in the future waits", cfg: waiting, action: ActionWait, counts: TargetCounts{Total: 1, Waiting: 1}},
		{name: "send_after passed sends", cfg: waiting, opts: Options{Now: later.Add(time.Second)}, action: ActionCreate, send: []string{"u1"},
			counts: TargetCounts{Total: 1, New: 1, Send: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts.Now.IsZero() {
				opts.Now = now
			}
			in := Input{Config: cfgOf(tt.cfg), State: tt.st}
			if tt.recipients != nil {
				in.Recipients = &state.Snapshot{UserIDs: tt.recipients}
			}
			p, err := Make(in, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Changes) != 1 {
				t.Fatalf("got %d changes, want 1", len(p.Changes))
			}
			c := p.Changes[0]
			if c.Action != tt.action {
				t.Errorf("action = %s, want %s", c.Action, tt.action)
			}
			if fmt.Sprint(c.Send) != fmt.Sprint(tt.send) && !(len(c.Send) == 0 && len(tt.send) == 0) {
				t.Errorf("send = %v, want %v", c.Send, tt.send)
			}
			if c.Targets != tt.counts {
				t.Errorf("counts = %+v, want %+v", c.Targets, tt.counts)
			}
			if tt.warn == "" && len(c.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", c.Warnings)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(c.Warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q do not mention %q", c.Warnings, tt.warn)
			}
			// A new address that sends nothing yet records its content.
			accept := tt.st == nil && (tt.action == ActionWait || tt.action == ActionCapped)
			if c.Accept != accept {
				t.Errorf("Accept = %v, want %v", c.Accept, accept)
			}
			if got := p.HasChanges(); got != (len(tt.send) > 0 || tt.counts.Forget > 0 || accept) {
				t.Errorf("HasChanges = %v", got)
			}
		})
	}
}

func TestForgetAddressGoneFromConfig(t *testing.T) {
	old := note("notification.old", "Hi", "Body", "", "u1")
	p, err := Make(Input{Config: cfgOf(), State: recorded(old, state.Delivered, nil)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Action != ActionForget || p.Summary.Forget != 1 || p.Summary.Requests != 0 {
		t.Fatalf("got %+v", p.Changes[0])
	}
	if !p.HasChanges() {
		t.Error("a forget is a change")
	}
}

func TestBatching(t *testing.T) {
	ids := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	t.Run("1200 users in 3 requests", func(t *testing.T) {
		p, err := Make(Input{Config: cfgOf(note("notification.big", "T", "B", "", ids(1200, "u")...))}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Batches) != 3 {
			t.Fatalf("%d batches", len(p.Batches))
		}
		sizes := []int{}
		for _, b := range p.Batches {
			n := 0
			for _, pt := range b.Parts {
				n += len(p.Targets(pt))
			}
			sizes = append(sizes, n)
		}
		if fmt.Sprint(sizes) != "[500 500 200]" {
			t.Errorf("sizes %v", sizes)
		}
	})
	t.Run("small notifications share requests", func(t *testing.T) {
		var ms []*config.Message
		for i := range 10000 {
			ms = append(ms, note(fmt.Sprintf("notification.n[\"%05d\"]", i), "T", "B", "", fmt.Sprintf("u%d", i)))
		}
		p, err := Make(Input{Config: cfgOf(ms...)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Batches) != 20 || p.Summary.Requests != 20 || p.Summary.Targets != 10000 {
			t.Fatalf("%d batches, summary %+v", len(p.Batches), p.Summary)
		}
	})
	t.Run("every target exactly once", func(t *testing.T) {
		p, err := Make(Input{Config: cfgOf(
			note("notification.a", "T", "B", "", ids(730, "a")...),
			note("notification.b", "T", "B", "", ids(10, "b")...),
			note("notification.c", "T", "B", "", ids(999, "c")...),
		)}, Options{Now: now, BatchLimit: 250})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, b := range p.Batches {
			n := 0
			for _, pt := range b.Parts {
				for _, id := range p.Targets(pt) {
					seen[id]++
					n++
				}
			}
			if n > 250 {
				t.Errorf("batch of %d targets", n)
			}
		}
		if len(seen) != 1739 {
			t.Errorf("%d distinct targets", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s sent %d times", id, n)
			}
		}
	})
}

func TestMakeErrors(t *testing.T) {
	a := note("campaign.c.notification.a", "T", "B", "", "u1")
	tests := []struct {
		name string
		in   Input
		opts Options
		want string
	}{
		{"unknown target", Input{Config: cfgOf(a)}, Options{Targets: []string{"campaign.x"}}, "--target campaign.x"},
		{"unknown replace", Input{Config: cfgOf(a)}, Options{Replace: []string{"campaign.c"}}, "--replace campaign.c"},
		{"unresolved", Input{Config: cfgOf(&config.Message{Address: "notification.r", Targets: config.Targets{Kind: config.TargetUsers, Unknown: true}})}, Options{}, "not resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Now = now
			_, err := Make(tt.in, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestTargetSelection(t *testing.T) {
	cfg := cfgOf(
		note("campaign.c.notification.a", "T", "B", "", "u1"),
		note("campaign.c.notification.b", "T", "B", "", "u2"),
		note(`notification.o["1"]`, "T", "B", "", "u3"),
		note("notification.other", "T", "B", "", "u4"),
	)
	for _, tt := range []struct {
		targets []string
		want    string
	}{
		{[]string{"campaign.c"}, "[campaign.c.notification.a campaign.c.notification.b]"},
		{[]string{"notification.o"}, `[notification.o["1"]]`},
		{[]string{"campaign.c.notification.b", "notification.other"}, "[campaign.c.notification.b notification.other]"},
	} {
		p, err := Make(Input{Config: cfg}, Options{Now: now, Targets: tt.targets})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range p.Changes {
			got = append(got, c.Address)
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("--target %v: %v, want %s", tt.targets, got, tt.want)
		}
	}
}

func TestFingerprintIgnoresTargets(t *testing.T) {
	a := Fingerprint("notification", message.Content{Title: "a", Body: "b"})
	b := Fingerprint("notification", message.Content{Title: "a", Body: "b"})
	c := Fingerprint("notification", message.Content{Title: "a", Body: "c"})
	d := Fingerprint("badge", message.Content{Title: "a", Body: "b"})
	if a != b || a == c || a == d {
		t.Fatalf("fingerprints %s %s %s %s", a, b, c, d)
	}
}

func ptr[T any](v T) *T { return &v }

func TestWaitingStillForgetsRemovedTargets(t *testing.T) {
	sent := note("notification.a", "Hi", "Body", "t", "u1", "u2")
	later := now.Add(time.Hour)
	desired := note("notification.a", "Hi", "Body", "t", "u1")
	desired.SendAfter = &later
	p, err := Make(Input{Config: cfgOf(desired), State: recorded(sent, state.Delivered, nil)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Changes[0]
	if c.Action != ActionWait || fmt.Sprint(c.Forget) != "[u2]" || !p.HasChanges() {
		t.Fatalf("action %s, forget %v", c.Action, c.Forget)
	}
}
