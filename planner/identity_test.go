package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

// applied folds into st what apply records for p, every send delivered
// (outcome says otherwise for some): the moves, the record entries, an
// intent and an outcome per change, and the forgets.
func applied(t testing.TB, st *state.State, p *Plan, at time.Time, outcome func(string) state.Outcome) {
	t.Helper()
	must := func(e state.Entry) {
		t.Helper()
		if err := st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	var moves []state.Item
	for _, c := range p.Changes {
		if c.MovedFrom != "" {
			moves = append(moves, state.Item{Address: c.MovedFrom, To: c.Address})
		}
	}
	if len(moves) > 0 {
		must(state.Entry{Type: state.EntryMove, Time: at, Items: moves})
	}
	for _, e := range p.RecordEntries(at) {
		must(e)
	}
	for i, c := range p.Changes {
		if len(c.Send) > 0 {
			content := c.Content
			it := state.Item{Address: c.Address, Kind: c.Kind, TargetKind: c.TargetKind, Fingerprint: c.Fingerprint, Content: &content, Targets: c.Send}
			must(state.Entry{Type: state.EntryIntent, Batch: int64(i), Time: at, Items: []state.Item{it}})
			it.Content, it.Outcomes = nil, make([]*state.Target, len(c.Send))
			for j, id := range c.Send {
				it.Outcomes[j] = &state.Target{Outcome: outcome(id), DeviceCount: 1}
			}
			must(state.Entry{Type: state.EntryOutcome, Batch: int64(i), Time: at, RequestID: fmt.Sprintf("req-%d", i), Items: []state.Item{it}})
		}
		switch {
		case c.Action == ActionForget:
			must(state.Entry{Type: state.EntryForget, Time: at, Items: []state.Item{{Address: c.Address}}})
		case len(c.Forget) > 0:
			must(state.Entry{Type: state.EntryForget, Time: at, Items: []state.Item{{Address: c.Address, Targets: c.Forget}}})
		}
	}
}

// assignmentsOf maps each target a plan sends or holds out to the name
// of its variant ("holdout" for the holdout, "" for a notification
// without variants).
func assignmentsOf(p *Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		name := ""
		if c.Variant != nil {
			name = c.Variant.Name
		}
		if c.Action == ActionHoldout {
			name = "holdout"
		}
		for _, id := range slices.Concat(c.Send, c.Holdout) {
			out[id] = name
		}
	}
	return out
}

// TestVariantAssignmentKept: after 2,000 users were sent variants a and
// b and 10% held out, no change of weights, holdout, salt, variants or
// address sends anyone a second variant or the held-out anything; what
// is still sent goes to a target in the variant it had.
func TestVariantAssignmentKept(t *testing.T) {
	base := variantNote(2000)
	for _, tc := range []struct {
		name   string
		change func(m *config.Message, cfg *config.Config)
		// sends: targets the plan may send (an edit of their variant).
		sends int
		check func(t *testing.T, p *Plan)
	}{
		{name: "weights 3/1 to 1/19", change: func(m *config.Message, _ *config.Config) { m.Variants[0].Weight, m.Variants[1].Weight = 1, 19 }},
		{name: "holdout 10% to 30%", change: func(m *config.Message, _ *config.Config) { m.Holdout = 0.3 }},
		{name: "holdout 10% to 1%", change: func(m *config.Message, _ *config.Config) { m.Holdout = 0.01 }},
		{name: "salt", change: func(m *config.Message, _ *config.Config) { m.Salt = "spring-2026" }},
		{name: "holdout dropped", change: func(m *config.Message, _ *config.Config) { m.Holdout = 0 },
			check: func(t *testing.T, p *Plan) {
				h := change(t, p, "notification.spring.holdout")
				if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "held out before and stay held out") {
					t.Errorf("holdout dropped: %+v", h.Warnings)
				}
			}},
		{name: "variant b dropped", change: func(m *config.Message, _ *config.Config) { m.Variants = m.Variants[:1] },
			check: func(t *testing.T, p *Plan) {
				a := change(t, p, "notification.spring.variant.a")
				if a.Targets.AlreadyDelivered == 0 || !strings.Contains(a.AlreadyLine(), "under notification.spring.variant.b") || !p.HasChanges() {
					t.Errorf("variant b dropped: %s, %+v", a.AlreadyLine(), a.Targets)
				}
			}},
		{name: "variants dropped", change: func(m *config.Message, _ *config.Config) {
			m.Content, m.Variants = m.Variants[0].Content, nil
		}},
		{name: "renamed", change: func(m *config.Message, _ *config.Config) {
			m.Address, m.Salt = "notification.spring_v2", "notification.spring_v2"
		}},
		{name: "moved and salt", change: func(m *config.Message, cfg *config.Config) {
			m.Address, m.Salt = "campaign.c.notification.spring", "campaign.c.notification.spring"
			cfg.Moved = []config.Moved{{From: "notification.spring", To: m.Address}}
		}, check: func(t *testing.T, p *Plan) {
			if c := change(t, p, "campaign.c.notification.spring.holdout"); c.MovedFrom != "notification.spring.holdout" {
				t.Errorf("the holdout moved from %q", c.MovedFrom)
			}
		}},
		{name: "renamed, variant a edited", sends: -1, change: func(m *config.Message, _ *config.Config) {
			m.Address, m.Salt = "notification.spring_v2", "notification.spring_v2"
			m.Variants[0].Content.Body = "25% off"
		}, check: func(t *testing.T, p *Plan) {
			if len(p.Renames) != 1 || p.Renames[0].To != "notification.spring_v2.variant.a" || p.ResendGuard() == nil {
				t.Errorf("a rename with an edit: %+v", p.Renames)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New("test")
			p, err := Make(Input{Config: cfgOf(base), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			first := assignmentsOf(p)
			applied(t, st, p, now, delivered)

			m := variantNote(2000)
			cfg := cfgOf(m)
			tc.change(m, cfg)
			p, err = Make(Input{Config: cfg, State: st}, Options{Now: now.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			kept := 0
			for _, c := range p.Changes {
				if c.Variant != nil {
					kept += c.Variant.Kept
				}
				for _, id := range c.Send {
					if tc.sends == 0 {
						t.Fatalf("%s sends %s (it had %q)", c.Address, id, first[id])
					}
					if name := first[id]; c.Variant == nil || name != c.Variant.Name {
						t.Fatalf("%s sends %s, which had %q", c.Address, id, name)
					}
				}
			}
			if len(m.Variants) == 2 {
				if kept != 2000 {
					t.Errorf("%d of 2,000 targets keep their assignment", kept)
				}
			}
			for id, name := range first {
				if name != "holdout" {
					continue
				}
				for _, c := range p.Changes {
					if slices.Contains(c.Send, id) || c.Action != ActionForget && slices.Contains(c.Forget, id) {
						t.Fatalf("held-out %s: %s sends or forgets it", id, c.Address)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, p)
			}
			if tc.sends == 0 {
				applied(t, st, p, now.Add(time.Hour), delivered)
				if p, err := Make(Input{Config: cfg, State: st}, Options{Now: now.Add(2 * time.Hour)}); err != nil || p.HasChanges() {
					t.Fatalf("the plan after: %v, %+v", err, p.Summary)
				}
			}
		})
	}
}

// TestVariantNewTargetsFollowWeights: targets added after a weight change
// are assigned by the new weights; a failed target is retried with its
// own variant.
func TestVariantNewTargetsFollowWeights(t *testing.T) {
	m := variantNote(2000)
	st := state.New("test")
	p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	first := assignmentsOf(p)
	var failed string
	for id, name := range first {
		if name == "a" {
			failed = id
			break
		}
	}
	applied(t, st, p, now, func(id string) state.Outcome {
		if id == failed {
			return state.Failed
		}
		return state.Delivered
	})
	grown := variantNote(12000)
	grown.Holdout, grown.Variants[0].Weight, grown.Variants[1].Weight = 0.5, 1, 1
	p, err = Make(Input{Config: cfgOf(grown), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got := assignmentsOf(p)
	counts := map[string]int{}
	for id, name := range got {
		if old, ok := first[id]; ok {
			if id != failed {
				t.Fatalf("%s (had %q) is planned in %q", id, old, name)
			}
			continue
		}
		counts[name]++
	}
	if got[failed] != "a" {
		t.Errorf("the failed target is planned in %q, want its variant a", got[failed])
	}
	for name, want := range map[string]int{"holdout": 5000, "a": 2500, "b": 2500} {
		if n := counts[name]; n < want*9/10 || n > want*11/10 {
			t.Errorf("of 10,000 new targets, %d in %s; want about %d", n, name, want)
		}
	}
}

// TestVariantAssignmentFromEarlierStates: a state written before this
// rule, where a re-bucketing sent a target both variants (a then b), held
// it out after it got a, or sent one it held out, plans nothing more for
// them: a delivery decides, then the holdout, then a failed send.
func TestVariantAssignmentFromEarlierStates(t *testing.T) {
	m := variantNote(4)
	a, b := m.Variants[0].Content, m.Variants[1].Content
	fa, fb := Fingerprint(m.Kind, a), Fingerprint(m.Kind, b)
	st := state.New("test")
	st.Messages["notification.spring.variant.a"] = &state.Message{Address: "notification.spring.variant.a", Kind: m.Kind, TargetKind: m.Targets.Kind,
		Fingerprint: fa, Content: a, Targets: map[string]*state.Target{
			"u00000": {Outcome: state.Delivered, Fingerprint: fa, Time: now.Add(-2 * time.Hour)},
			"u00001": {Outcome: state.Delivered, Fingerprint: fa, Time: now.Add(-2 * time.Hour)},
		}}
	st.Messages["notification.spring.variant.b"] = &state.Message{Address: "notification.spring.variant.b", Kind: m.Kind, TargetKind: m.Targets.Kind,
		Fingerprint: fb, Content: b, Targets: map[string]*state.Target{
			"u00000": {Outcome: state.Delivered, Fingerprint: fb, Time: now.Add(-time.Hour)},
			"u00002": {Outcome: state.Failed, Fingerprint: fb, Time: now.Add(-time.Hour)},
		}}
	st.Messages["notification.spring.holdout"] = &state.Message{Address: "notification.spring.holdout", Kind: m.Kind, TargetKind: m.Targets.Kind,
		Fingerprint: fa, Content: a, Targets: map[string]*state.Target{
			"u00001": {Outcome: state.Holdout, Fingerprint: fa, Time: now.Add(-time.Hour)},
			"u00002": {Outcome: state.Holdout, Fingerprint: fa, Time: now.Add(-2 * time.Hour)},
			"u00003": {Outcome: state.Holdout, Fingerprint: fa, Time: now.Add(-2 * time.Hour)},
		}}
	p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Targets != 0 {
		t.Errorf("the plan sends to %d targets", p.Summary.Targets)
	}
	// u00001 got a: a delivery outranks the holdout; u00002 was held out
	// and then failed in b: it was never shown b, and stays held out.
	for addr, want := range map[string][]string{"notification.spring.holdout": {"u00001"}, "notification.spring.variant.b": {"u00002"}} {
		if c := change(t, p, addr); !slices.Equal(c.Forget, want) {
			t.Errorf("%s forgets %v, want %v", addr, c.Forget, want)
		}
	}
}

// TestKindChange: content that reached users, planned for devices or a
// topic at the same address or another, is a kind change apply refuses;
// once sent to that kind, targets added are not asked about again.
func TestKindChange(t *testing.T) {
	users := note("notification.coupon", "Coupon", "Your 10% coupon", "", "u1", "u2")
	for _, tc := range []struct {
		name string
		next *config.Message
		want bool
	}{
		{"same address, devices", msg("notification.coupon", config.KindNotification, config.TargetDevices, []string{"d1", "d2"}, users.Content), true},
		{"another address, devices", msg("notification.coupon_devices", config.KindNotification, config.TargetDevices, []string{"d1"}, users.Content), true},
		{"a topic", msg("notification.coupon_topic", config.KindNotification, config.TargetTopics, []string{"deals"}, users.Content), true},
		{"another tag only", msg("notification.coupon_devices", config.KindNotification, config.TargetDevices, []string{"d1"},
			config.Content{Title: "Coupon", Body: "Your 10% coupon", Tag: "c"}), true},
		{"other content", msg("notification.other", config.KindNotification, config.TargetDevices, []string{"d1"}, config.Content{Title: "Other", Body: "Text"}), false},
		{"users again", note("notification.coupon_2", "Coupon", "Your 10% coupon", "", "u3"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New("test")
			p, err := Make(Input{Config: cfgOf(users), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			applied(t, st, p, now, delivered)
			p, err = Make(Input{Config: cfgOf(tc.next), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			err = p.ResendGuard()
			if got := len(p.KindChanges) > 0; got != tc.want || (err != nil) != tc.want {
				t.Fatalf("kind changes %+v, guard %v; want %t", p.KindChanges, err, tc.want)
			}
			if !tc.want {
				return
			}
			kc := p.KindChanges[0]
			if kc.Address != tc.next.Address || kc.Earlier != config.TargetUsers || kc.EarlierTargets != 2 || kc.EarlierAddress != "notification.coupon" {
				t.Errorf("%+v", kc)
			}
			c := change(t, p, tc.next.Address)
			if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[len(c.Warnings)-1], "may show it twice") ||
				!strings.Contains(err.Error(), "may show it twice") || !strings.Contains(err.Error(), "apply with --allow-resend. Nothing was sent.") {
				t.Errorf("warning %q, guard %v", c.Warnings, err)
			}
			// Applied anyway (--allow-resend): a target added later is
			// not asked about again.
			applied(t, st, p, now, delivered)
			grown := *tc.next
			grown.Targets.IDs = append(slices.Clone(grown.Targets.IDs), "x9")
			if p, err := Make(Input{Config: cfgOf(&grown), State: st}, Options{Now: now}); err != nil || len(p.KindChanges) != 0 || p.Summary.Targets != 1 {
				t.Errorf("after it was sent: %v %+v, %d targets", err, p.KindChanges, p.Summary.Targets)
			}
		})
	}
}

// TestKindChangeEdited: an address that sent its content to users, then
// edited and planned for devices, sent the edit as a new address would,
// with no warning: the phones showed both versions. It is a kind change
// of the same notification, refused without --allow-resend; another
// address with other content is not.
func TestKindChangeEdited(t *testing.T) {
	users := note("notification.coupon", "Coupon", "Your 10% coupon", "", "u1", "u2")
	edited := msg("notification.coupon", config.KindNotification, config.TargetDevices, []string{"d1"}, config.Content{Title: "Coupon", Body: "Your 15% coupon"})
	other := msg("notification.other", config.KindNotification, config.TargetDevices, []string{"d1"}, config.Content{Title: "Other", Body: "Text"})
	for _, tc := range []struct {
		name string
		next []*config.Message
		want bool
	}{
		{"same address, edited, devices", []*config.Message{edited}, true},
		{"another address, other content", []*config.Message{users, other}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New("test")
			p, err := Make(Input{Config: cfgOf(users), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			applied(t, st, p, now, delivered)
			p, err = Make(Input{Config: cfgOf(tc.next...), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			err = p.ResendGuard()
			if got := len(p.KindChanges) > 0; got != tc.want || (err != nil) != tc.want {
				t.Fatalf("kind changes %+v, guard %v; want %t", p.KindChanges, err, tc.want)
			}
			if !tc.want {
				return
			}
			if kc := p.KindChanges[0]; !kc.Edited || kc.Earlier != config.TargetUsers || kc.EarlierTargets != 2 || kc.Targets != 1 {
				t.Errorf("%+v", kc)
			}
			if !strings.Contains(err.Error(), "an earlier version of this notification reached 2 users") || !strings.Contains(err.Error(), "devices may show both") {
				t.Errorf("guard %v", err)
			}
		})
	}
}

// TestKindChangeStreams: a plan that may hold a kind change is not
// streamed: the whole plan is checked before anything is sent.
func TestKindChangeStreams(t *testing.T) {
	users := note("notification.coupon", "Coupon", "Your 10% coupon", "", "u1")
	st := recorded(users, state.Delivered, nil)
	devices := msg("notification.coupon_devices", config.KindNotification, config.TargetDevices, []string{"d1"}, users.Content)
	streamed := note("notification.news", "News", "Read it", "")
	streamed.Targets.Unknown, streamed.Targets.Recipients = true, "data.recipients.all"
	if s := NewStream(cfgOf(users, streamed), st, Options{Now: now}); s == nil {
		t.Fatal("a plan with no kind change is not streamed")
	}
	if s := NewStream(cfgOf(users, devices, streamed), st, Options{Now: now}); s != nil {
		t.Error("a plan with a kind change is streamed")
	}
}

// TestStreamSplits: a plan with a notification the plan splits (variants,
// a holdout, or a family that recorded them) is not streamed: only Make
// splits it, and a stream would hand out its requests unsplit.
func TestStreamSplits(t *testing.T) {
	streamed := note("notification.z", "Z", "z", "")
	streamed.Targets.Unknown, streamed.Targets.Recipients = true, "all"
	v := variantNote(1200)
	v.Address, v.Salt = "notification.a", "notification.a"
	if s := NewStream(cfgOf(v, streamed), nil, Options{Now: now}); s != nil {
		t.Error("a plan with variants is streamed")
	}
	st := state.New("test")
	p, err := Make(Input{Config: cfgOf(v), State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	applied(t, st, p, now, delivered)
	plain := note("notification.a", "Spring sale", "20% off", "spring", v.Targets.IDs...)
	for _, a := range []string{"notification.a.variant.a", "notification.a.variant.b", "notification.a.holdout"} {
		st = forgottenCopy(t, st, a)
	}
	if s := NewStream(cfgOf(plain, streamed), st, Options{Now: now}); s != nil {
		t.Error("a plan whose notification had variants is streamed")
	}
	plain.Address = "notification.b"
	if s := NewStream(cfgOf(plain, streamed), st, Options{Now: now}); s == nil {
		t.Error("a plan of notifications that never had variants is not streamed")
	}
}

func TestSplitVariantAddress(t *testing.T) {
	for _, tc := range []struct {
		addr, base string
		part       addrPart
		name       string
	}{
		{"notification.a.variant.b", "notification.a", partVariant, "b"},
		{`notification.a["k"].variant.b`, `notification.a["k"]`, partVariant, "b"},
		{"notification.a.holdout", "notification.a", partHoldout, ""},
		{"notification.a", "notification.a", partBase, ""},
		{`notification.a["x.variant.y"]`, `notification.a["x.variant.y"]`, partBase, ""},
		{"campaign.variant.notification.x", "campaign.variant.notification.x", partBase, ""},
	} {
		base, part, name := splitVariantAddress(tc.addr)
		if base != tc.base || part != tc.part || name != tc.name {
			t.Errorf("%s: %q %d %q", tc.addr, base, part, name)
		}
	}
}

// TestSplitAddedLater: a holdout or variants added to a notification
// already sent (at its address, or renamed) hold out nobody who got it
// and send nobody a variant: they had the notification. Targets added
// are split.
func TestSplitAddedLater(t *testing.T) {
	plain := func() *config.Message {
		m := note("notification.spring", "Spring sale", "20% off", "spring", ids(1000, "u")...)
		m.Salt = m.Address
		return m
	}
	withVariants := func(m *config.Message) {
		v := variantNote(0)
		m.Variants = v.Variants
		m.Variants[1].Content.Body = "Until Sunday only"
	}
	for _, tc := range []struct {
		name  string
		split func(m *config.Message)
	}{
		{"a holdout", func(m *config.Message) { m.Holdout = 0.3 }},
		{"variants", withVariants},
		{"variants, another content", func(m *config.Message) {
			withVariants(m)
			m.Variants[0].Content.Title = "Spring sale!"
		}},
		{"renamed with variants", func(m *config.Message) {
			withVariants(m)
			m.Address, m.Salt = "notification.spring_v2", "notification.spring_v2"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := state.New("test")
			m := plain()
			p, err := Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			applied(t, st, p, now, delivered)
			m = plain()
			m.Targets.IDs = ids(2000, "u")
			tc.split(m)
			p, err = Make(Input{Config: cfgOf(m), State: st}, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got := assignmentsOf(p)
			newOnes := map[string]int{}
			for id, name := range got {
				if id < "u1000" {
					t.Fatalf("%s, sent before, is planned in %q", id, name)
				}
				newOnes[name]++
			}
			if len(got) != 1000 || len(newOnes) < 2 {
				t.Errorf("the 1,000 targets added are split %v", newOnes)
			}
			if len(p.Renames) > 0 || len(p.KindChanges) > 0 {
				t.Errorf("renames %+v, kind changes %+v", p.Renames, p.KindChanges)
			}
		})
	}
}
