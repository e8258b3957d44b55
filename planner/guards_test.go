package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

func ids(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return out
}

// merge records the messages of several states in one.
func merge(sts ...*state.State) *state.State {
	out := state.New("test")
	for _, s := range sts {
		for a, m := range s.Messages {
			out.Messages[a] = m
		}
	}
	return out
}

func change(t *testing.T, p *Plan, addr string) *Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Address == addr {
			return c
		}
	}
	t.Fatalf("no change for %s in %v", addr, p.Changes)
	return nil
}

func TestMovedBlocks(t *testing.T) {
	welcome := note("notification.welcome", "Hi", "Welcome", "", "u1", "u2")
	moved := note("campaign.onboarding.notification.welcome", "Hi", "Welcome", "", "u1", "u2")
	moved.Campaign = "onboarding"
	move := config.Moved{From: "notification.welcome", To: "campaign.onboarding.notification.welcome"}

	t.Run("moved, nothing sent", func(t *testing.T) {
		cfg := cfgOf(moved)
		cfg.Moved = []config.Moved{move}
		p, err := Make(Input{Config: cfg, State: recorded(welcome, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) != 1 {
			t.Fatalf("changes %+v", p.Changes)
		}
		c := p.Changes[0]
		if c.Action != ActionMoved || c.MovedFrom != "notification.welcome" || c.Address != moved.Address || len(c.Send) != 0 || c.Targets.UpToDate != 2 {
			t.Errorf("change %+v", c)
		}
		if !p.HasChanges() || p.Summary.Moved != 1 || p.Summary.Requests != 0 || p.Summary.Forget != 0 || len(p.Renames) != 0 {
			t.Errorf("summary %+v, renames %v", p.Summary, p.Renames)
		}
	})
	t.Run("moved and changed", func(t *testing.T) {
		changed := note(moved.Address, "Hi", "Welcome!", "", "u1", "u2", "u3")
		cfg := cfgOf(changed)
		cfg.Moved = []config.Moved{move}
		p, err := Make(Input{Config: cfg, State: recorded(welcome, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		c := p.Changes[0]
		if c.Action != ActionResend || c.MovedFrom != "notification.welcome" || c.Prior == nil || len(c.Send) != 3 || p.Summary.Moved != 1 {
			t.Errorf("change %+v summary %+v", c, p.Summary)
		}
	})
	t.Run("whole block with its instances, through a chain", func(t *testing.T) {
		a := note(`notification.order["A-1"]`, "Shipped", "A-1", "", "u1")
		b := note(`notification.order["B-2"]`, "Shipped", "B-2", "", "u2")
		na := note(`notification.shipping["A-1"]`, "Shipped", "A-1", "", "u1")
		nb := note(`notification.shipping["B-2"]`, "Shipped", "B-2", "", "u2")
		cfg := cfgOf(na, nb)
		cfg.Moved = []config.Moved{{From: "notification.order", To: "notification.orders"}, {From: "notification.orders", To: "notification.shipping"}}
		p, err := Make(Input{Config: cfg, State: merge(recorded(a, state.Delivered, nil), recorded(b, state.Delivered, nil))}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Changes {
			if c.Action != ActionMoved || !strings.HasPrefix(c.MovedFrom, "notification.order[") {
				t.Errorf("change %s: %s from %q", c.Address, c.Action, c.MovedFrom)
			}
		}
		if p.Summary.Moved != 2 || p.Summary.Targets != 0 {
			t.Errorf("summary %+v", p.Summary)
		}
	})
	t.Run("onto an address with state", func(t *testing.T) {
		cfg := cfgOf(moved)
		cfg.Moved = []config.Moved{move}
		_, err := Make(Input{Config: cfg, State: merge(recorded(welcome, state.Delivered, nil), recorded(moved, state.Delivered, nil))}, Options{Now: now})
		if err == nil || !strings.Contains(err.Error(), "already records campaign.onboarding.notification.welcome") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the state is not changed", func(t *testing.T) {
		cfg := cfgOf(moved)
		cfg.Moved = []config.Moved{move}
		st := recorded(welcome, state.Delivered, nil)
		if _, err := Make(Input{Config: cfg, State: st}, Options{Now: now}); err != nil {
			t.Fatal(err)
		}
		if st.Messages["notification.welcome"] == nil || st.Messages[moved.Address] != nil || st.Messages["notification.welcome"].Address != "notification.welcome" {
			t.Errorf("planning changed the state: %v", st.Addresses())
		}
	})
}

func TestRenameDetection(t *testing.T) {
	welcome := note("notification.welcome", "Hi", "Welcome", "", ids(100, "u")...)
	tests := []struct {
		name    string
		st      *state.State
		cfg     *config.Message
		renames string
	}{
		// The same content is not sent again (already-delivered): no
		// rename to guard.
		{"renamed, same content and targets", recorded(welcome, state.Delivered, nil),
			note("notification.welcome_v2", "Hi", "Welcome", "", ids(100, "u")...), "[]"},
		{"renamed with a target more", recorded(welcome, state.Delivered, nil),
			note("notification.welcome_v2", "Hi", "Welcome", "", append(ids(100, "u"), "x")...), "[]"},
		{"for_each key changed", recorded(note(`notification.o["a"]`, "Hi", "Welcome", "", "u1", "u2"), state.Delivered, nil),
			note(`notification.o["b"]`, "Hi", "Welcome", "", "u2"), "[]"},
		{"renamed with a tag added", recorded(welcome, state.Delivered, nil),
			note("notification.welcome_v2", "Hi", "Welcome", "welcome", ids(100, "u")...), "[]"},
		{"unknown outcomes may have", recorded(welcome, state.Unknown, nil),
			note("notification.welcome_v2", "Hi", "Welcome", "", ids(100, "u")...), "[]"},
		// A rename with an edit is an edit.
		{"renamed with a body edit", recorded(welcome, state.Delivered, nil),
			note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "u")...), "[{notification.welcome notification.welcome_v2 100 false false}]"},
		{"for_each key changed with an edit", recorded(note(`notification.o["a"]`, "Hi", "Welcome", "", "u1", "u2"), state.Delivered, nil),
			note(`notification.o["b"]`, "Hi", "Welcome again", "", "u2"), `[{notification.o["a"] notification.o["b"] 1 false false}]`},
		{"an edit to unknown outcomes may show twice", recorded(welcome, state.Unknown, nil),
			note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "u")...), "[{notification.welcome notification.welcome_v2 100 false false}]"},
		// Under the same tag, the edit would replace it on devices.
		{"renamed with a body edit under the same tag", recorded(note("notification.tips", "Tip", "Save", "tips", ids(10, "u")...), state.Delivered, nil),
			note("notification.tips_v2", "Tip", "Save more", "tips", ids(10, "u")...), "[{notification.tips notification.tips_v2 10 false true}]"},
		{"other targets", recorded(welcome, state.Delivered, nil),
			note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "x")...), "[]"},
		{"nothing reached them", recorded(welcome, state.Failed, nil),
			note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "u")...), "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Make(Input{Config: cfgOf(tt.cfg), State: tt.st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got := "[]"
			if len(p.Renames) > 0 {
				got = fmt.Sprint(p.Renames)
			}
			if got != tt.renames {
				t.Fatalf("renames %s, want %s", got, tt.renames)
			}
			err = p.ResendGuard()
			if (err != nil) != (len(p.Renames) > 0) {
				t.Fatalf("ResendGuard = %v with renames %v", err, p.Renames)
			}
			if err == nil {
				return
			}
			r := p.Renames[0]
			block := fmt.Sprintf("moved {\n  from = %s\n  to   = %s\n}\n", r.From, r.To)
			for _, want := range []string{block, "--allow-resend", "Nothing was sent"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal lacks %q:\n%s", want, err)
				}
			}
			if !strings.Contains(strings.Join(p.Warnings, "\n"), "looks like a rename of "+r.From) {
				t.Errorf("no warning: %q", p.Warnings)
			}
		})
	}
	t.Run("with the moved block, no rename", func(t *testing.T) {
		cfg := cfgOf(note("notification.welcome_v2", "Hi", "Welcome", "", ids(100, "u")...))
		cfg.Moved = []config.Moved{{From: "notification.welcome", To: "notification.welcome_v2"}}
		p, err := Make(Input{Config: cfg, State: recorded(welcome, state.Delivered, nil)}, Options{Now: now})
		if err != nil || len(p.Renames) != 0 || p.ResendGuard() != nil || p.Summary.Targets != 0 {
			t.Fatalf("err %v renames %v summary %+v", err, p.Renames, p.Summary)
		}
	})
	t.Run("--target leaving the old address out is guarded too", func(t *testing.T) {
		v2 := note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "u")...)
		p, err := Make(Input{Config: cfgOf(v2), State: recorded(welcome, state.Delivered, nil)}, Options{Now: now, Targets: []string{"notification.welcome_v2"}})
		if err != nil || len(p.Renames) != 1 || len(p.Changes) != 1 {
			t.Fatalf("err %v renames %v changes %d", err, p.Renames, len(p.Changes))
		}
	})
	t.Run("a create waiting for send_after is guarded too", func(t *testing.T) {
		later := now.Add(time.Hour)
		v2 := note("notification.welcome_v2", "Hi", "Welcome!", "", ids(100, "u")...)
		v2.SendAfter = &later
		p, err := Make(Input{Config: cfgOf(v2), State: recorded(welcome, state.Delivered, nil)}, Options{Now: now})
		if err != nil || len(p.Renames) != 1 {
			t.Fatalf("err %v renames %v", err, p.Renames)
		}
	})
}

func TestDeliveryWindow(t *testing.T) {
	before := now.Add(-time.Minute)
	after := now.Add(-time.Hour)
	future := now.Add(time.Hour)
	windowed := func(sendBefore time.Time, ids ...string) *config.Message {
		m := note("notification.flash", "Flash sale", "Ends soon", "flash", ids...)
		m.SendAfter, m.SendBefore = &after, &sendBefore
		return m
	}
	all := windowed(before, "u1", "u2", "u3", "u4")
	tests := []struct {
		name   string
		cfg    *config.Message
		st     *state.State
		action Action
		counts TargetCounts
	}{
		{"passed, never sent", all, nil, ActionExpired, TargetCounts{Total: 4, Expired: 4}},
		{"passed, some failed and unknown", all, recorded(all, state.Delivered, map[string]state.Outcome{"u2": state.Failed, "u3": state.Unknown}),
			ActionExpired, TargetCounts{Total: 4, UpToDate: 2, Expired: 2}},
		{"passed, all delivered", all, recorded(all, state.Delivered, nil), ActionNoOp, TargetCounts{Total: 4, UpToDate: 4}},
		{"passed, content changed: not replaced", func() *config.Message {
			m := windowed(before, "u1", "u2", "u3", "u4")
			m.Content.Body = "Ends now"
			return m
		}(), recorded(all, state.Delivered, nil), ActionExpired, TargetCounts{Total: 4, Expired: 4}},
		{"passed, targets dropped are still forgotten", windowed(before, "u1"), recorded(all, state.Failed, nil), ActionExpired, TargetCounts{Total: 1, Expired: 1, Forget: 3}},
		{"open", windowed(future, "u1", "u2"), nil, ActionCreate, TargetCounts{Total: 2, New: 2, Send: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Make(Input{Config: cfgOf(tt.cfg), State: tt.st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != tt.action || c.Targets != tt.counts {
				t.Errorf("%s %+v, want %s %+v", c.Action, c.Targets, tt.action, tt.counts)
			}
			if tt.action == ActionExpired {
				if len(c.Send) != 0 || len(p.Batches) != 0 || p.Summary.Expired != 1 || p.Summary.ExpiredTargets != tt.counts.Expired {
					t.Errorf("an expired change sends: %v, summary %+v", c.Send, p.Summary)
				}
				if p.HasChanges() != (tt.counts.Forget > 0) {
					t.Errorf("HasChanges = %v", p.HasChanges())
				}
			}
			if c.SendBefore == nil || !c.SendBefore.Equal(*tt.cfg.SendBefore) {
				t.Errorf("send_before not carried: %v", c.SendBefore)
			}
		})
	}
}

func TestPacing(t *testing.T) {
	paced := note("campaign.bf.notification.doors", "Doors", "Open", "bf", ids(1500, "u")...)
	paced.Campaign = "bf"
	badge := msg("campaign.bf.badge.one", config.KindBadge, config.TargetUsers, ids(5, "b"), config.Content{BadgeCount: ptr(1)})
	badge.Campaign = "bf"
	free := note("notification.free", "Free", "Not paced", "", ids(30, "f")...)
	own := note(`notification.own["k"]`, "Own", "Paced alone", "", ids(25, "o")...)
	own.SendRate = &config.Rate{Count: 5, Per: time.Second}
	// Delivered already: a change of a paced campaign that sends nothing.
	done := note("campaign.bf.notification.done", "Done", "Sent", "", "d1")
	done.Campaign = "bf"
	cfg := cfgOf(badge, done, paced, free, own)
	cfg.Campaigns = map[string]config.Campaign{"bf": {Name: "bf", SendRate: &config.Rate{Count: 600, Per: time.Minute}}}
	p, err := Make(Input{Config: cfg, State: recorded(done, state.Delivered, nil)}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	groups := func(b Batch) string { return strings.Join(p.Changes[b.Parts[0].Change].Paces, "+") }
	size := func(b Batch) int {
		n := 0
		for _, pt := range b.Parts {
			n += pt.To - pt.From
		}
		return n
	}
	// Unpaced first, in one request; then the groups side by side.
	if g := groups(p.Batches[0]); g != "" || size(p.Batches[0]) != 30 {
		t.Errorf("first request: groups %q, %d targets", g, size(p.Batches[0]))
	}
	counts := map[string]int{}
	var order []string
	for _, b := range p.Batches[1:] {
		g := groups(b)
		if g == "" {
			t.Fatal("an unpaced request after paced ones")
		}
		counts[g]++
		if len(order) < 4 {
			order = append(order, g)
		}
		limit := map[string]int{"campaign.bf": 10, "notification.own": 5}[g]
		if size(b) > limit {
			t.Errorf("a request of %s carries %d targets, more than a second of its rate (%d)", g, size(b), limit)
		}
	}
	// 1,505 targets of the campaign (the badge too) in requests of 10;
	// 25 of notification.own in requests of 5.
	if counts["campaign.bf"] != 151 || counts["notification.own"] != 5 {
		t.Errorf("requests per group %v", counts)
	}
	if fmt.Sprint(order) != "[campaign.bf notification.own campaign.bf notification.own]" {
		t.Errorf("groups are not interleaved: %v", order)
	}
	bf, ok := p.PaceOf("campaign.bf")
	if !ok || bf.Targets != 1505 || bf.Requests != 151 || bf.Duration != 150500*time.Millisecond || bf.Rate() != "600/minute" {
		t.Errorf("campaign pace %+v", bf)
	}
	if p.Summary.PacedSeconds != 150.5 {
		t.Errorf("paced seconds %v", p.Summary.PacedSeconds)
	}
	// A paced group that sends nothing is no group of the plan, and a saved
	// plan of it checks.
	quiet := cfgOf(done)
	quiet.Campaigns = cfg.Campaigns
	if q, err := Make(Input{Config: quiet, State: recorded(done, state.Delivered, nil)}, Options{Now: now}); err != nil || q.Check() != nil || len(q.Pacing) != 0 {
		t.Errorf("a paced campaign with nothing to send: %v, %v, %+v", err, q.Check(), q.Pacing)
	}
	// A window the pacing does not fit in is warned about.
	end := now.Add(time.Minute)
	paced.SendBefore = &end
	p, err = Make(Input{Config: cfg}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "takes about 2m31s") || !strings.Contains(w, "is 1m0s away") {
		t.Errorf("warnings %q", w)
	}

	// A hand-edited plan that packs paced with unpaced is refused.
	p.Batches[0].Parts = append(p.Batches[0].Parts, p.Batches[1].Parts...)
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "different send rates") {
		t.Errorf("Check = %v", err)
	}
	p.Pacing[0].Count = 0
	if err := p.Check(); err == nil {
		t.Error("a zero rate passes Check")
	}
}

func TestFrequencyCap(t *testing.T) {
	users := ids(100, "u")
	daily := &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
	first := note("notification.a_first", "First", "One", "", users...)
	second := note("notification.b_second", "Second", "Two", "", users...)

	t.Run("two new notifications: the first by address is sent", func(t *testing.T) {
		cfg := cfgOf(first, second)
		cfg.FrequencyCap = daily
		p, err := Make(Input{Config: cfg}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		a, b := change(t, p, first.Address), change(t, p, second.Address)
		if a.Action != ActionCreate || len(a.Send) != 100 || a.Targets.Capped != 0 {
			t.Errorf("first %s %+v", a.Action, a.Targets)
		}
		if b.Action != ActionCapped || len(b.Send) != 0 || b.Targets.Capped != 100 {
			t.Errorf("second %s %+v", b.Action, b.Targets)
		}
		if p.Summary.Capped != 1 || p.Summary.CappedTargets != 100 || p.Summary.Targets != 100 || p.Summary.Requests != 1 {
			t.Errorf("summary %+v", p.Summary)
		}
	})
	// The first was delivered at now, except to u0000 (failed: the plan
	// retries it, before the second by address order) and u0001 (skipped).
	st := recorded(first, state.Delivered, map[string]state.Outcome{"u0000": state.Failed, "u0001": state.Skipped})
	for _, tt := range []struct {
		name   string
		at     time.Time
		send   []string
		capped int
	}{
		{"within the day", now.Add(23 * time.Hour), []string{"u0001"}, 99},
		{"a day later", now.Add(24*time.Hour + time.Minute), users[1:], 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := cfgOf(first, second)
			cfg.FrequencyCap = daily
			p, err := Make(Input{Config: cfg, State: st}, Options{Now: tt.at})
			if err != nil {
				t.Fatal(err)
			}
			if a := change(t, p, first.Address); a.Action != ActionRetry || fmt.Sprint(a.Send) != "[u0000]" {
				t.Errorf("first %s %v", a.Action, a.Send)
			}
			b := change(t, p, second.Address)
			if b.Action != ActionCreate || fmt.Sprint(b.Send) != fmt.Sprint(tt.send) || b.Targets.Capped != tt.capped || b.Targets.Send != len(tt.send) {
				t.Errorf("second %s send %v %+v", b.Action, b.Send, b.Targets)
			}
		})
	}
	t.Run("badges and device targets are neither capped nor counted", func(t *testing.T) {
		bdg := msg("badge.a", config.KindBadge, config.TargetUsers, users, config.Content{BadgeCount: ptr(2)})
		dev := msg("notification.dev", config.KindNotification, config.TargetDevices, []string{"u0000"}, config.Content{Title: "D", Body: "D"})
		cfg := cfgOf(bdg, dev, second)
		cfg.FrequencyCap = daily
		p, err := Make(Input{Config: cfg, State: recorded(bdg, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if c := change(t, p, second.Address); c.Action != ActionCreate || c.Targets.Capped != 0 {
			t.Errorf("a badge counted: %s %+v", c.Action, c.Targets)
		}
		bdg2 := msg("badge.a", config.KindBadge, config.TargetUsers, users, config.Content{BadgeCount: ptr(3)})
		cfg = cfgOf(bdg2, dev, second)
		cfg.FrequencyCap = daily
		p, err = Make(Input{Config: cfg, State: recorded(first, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if c := change(t, p, "badge.a"); c.Action != ActionCreate || len(c.Send) != 100 {
			t.Errorf("a badge capped: %s %+v", c.Action, c.Targets)
		}
		if c := change(t, p, "notification.dev"); c.Action != ActionCreate || len(c.Send) != 1 {
			t.Errorf("a device target capped: %s %+v", c.Action, c.Targets)
		}
	})
	t.Run("a campaign's cap counts its own notifications", func(t *testing.T) {
		inside := note("campaign.c.notification.x", "X", "X", "", users...)
		inside.Campaign = "c"
		cfg := cfgOf(inside)
		cfg.Campaigns = map[string]config.Campaign{"c": {Name: "c", FrequencyCap: daily}}
		// Delivered elsewhere: does not count against the campaign's cap.
		p, err := Make(Input{Config: cfg, State: recorded(first, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if c := change(t, p, inside.Address); c.Action != ActionCreate || len(c.Send) != 100 {
			t.Errorf("%s %+v", c.Action, c.Targets)
		}
		// Delivered by the campaign: it does.
		earlier := note("campaign.c.notification.w", "W", "W", "", users[:10]...)
		earlier.Campaign = "c"
		cfg = cfgOf(earlier, inside)
		cfg.Campaigns = map[string]config.Campaign{"c": {Name: "c", FrequencyCap: daily}}
		p, err = Make(Input{Config: cfg, State: recorded(earlier, state.Delivered, nil)}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if c := change(t, p, inside.Address); c.Action != ActionCreate || len(c.Send) != 90 || c.Targets.Capped != 10 {
			t.Errorf("%s %+v", c.Action, c.Targets)
		}
	})
}
