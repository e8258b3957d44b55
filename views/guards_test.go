package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/state"
)

// guardsScenario is a plan with every action the guards add: a move, a
// move with a change, a rename without a moved block, an expired window,
// frequency caps (in part and in whole) and a paced campaign.
func guardsScenario(t *testing.T) *planner.Plan {
	t.Helper()
	note := func(addr, title, body, tag string, targets ...string) *config.Message {
		m := &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: targets},
			Content: config.Content{Title: title, Body: body, Tag: tag}}
		if rest, ok := strings.CutPrefix(addr, "campaign."); ok {
			m.Campaign, _, _ = strings.Cut(rest, ".")
		}
		return m
	}
	hourAgo, daysAgo := now.Add(-time.Hour), now.Add(-48*time.Hour)
	welcome := note("notification.welcome", "Welcome", "Glad you are here", "welcome", "alice", "bob")
	promo := note("notification.promo", "Promo", "10% off", "promo", "kim", "leo")
	tips := note("notification.tips", "Tips", "Three tips for your first week", "", "carol", "dave", "frank")
	flash := note("notification.flash", "Flash sale", "Two hours only", "flash", "grace", "heidi", "ivan", "judy")
	digest := note("notification.a_digest", "Digest", "Your week", "digest", "alice", "bob")

	st := state.New("test")
	st.Lineage = "00000000-0000-0000-0000-000000000000"
	st.Serial = 12
	for _, m := range []*config.Message{welcome, promo, tips, flash, digest} {
		fp := planner.Fingerprint(m.Kind, m.Content)
		sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: m.Content, Targets: map[string]*state.Target{}}
		for i, id := range m.Targets.IDs {
			o, at := state.Delivered, daysAgo
			if m == flash && i >= 2 {
				o = state.Failed
			}
			if m == digest {
				at = hourAgo // within the frequency cap's day
			}
			sm.Targets[id] = &state.Target{Outcome: o, Fingerprint: fp, RequestID: "req-1", Time: at}
		}
		st.Messages[m.Address] = sm
	}

	movedWelcome := note("campaign.onboarding.notification.welcome", "Welcome", "Glad you are here", "welcome", "alice", "bob")
	movedPromo := note("notification.promo_v2", "Promo", "15% off", "promo", "kim", "leo")
	renamed := note("notification.tips_v2", "Tips", "Three tips for your first week!", "", "carol", "dave", "frank") // a rename with an edit
	closed := now.Add(-10 * time.Minute)
	opened := now.Add(-3 * time.Hour)
	flash.SendAfter, flash.SendBefore = &opened, &closed
	reminder := note("notification.b_reminder", "Reminder", "Your cart misses you", "cart", "alice", "bob", "erin")
	nudge := note("notification.c_nudge", "Nudge", "Still there?", "nudge", "alice")
	var crowd []string
	for _, id := range ids(1500, "u") {
		crowd = append(crowd, id)
	}
	doors := note("campaign.black_friday.notification.doors_open", "Doors open", "Black Friday starts now", "bf-2026", crowd...)
	end := now.Add(2 * time.Hour)
	doors.SendBefore = &end

	cfg := &config.Config{
		Service:      config.Service{Environment: "test"},
		Messages:     []*config.Message{digest, reminder, nudge, doors, movedWelcome, flash, movedPromo, renamed},
		FrequencyCap: &config.FrequencyCap{Max: 1, Per: 24 * time.Hour},
		Campaigns: map[string]config.Campaign{
			"onboarding":   {Name: "onboarding"},
			"black_friday": {Name: "black_friday", SendRate: &config.Rate{Count: 600, Per: time.Minute}},
		},
		Moved: []config.Moved{
			{From: "notification.welcome", To: "campaign.onboarding.notification.welcome"},
			{From: "notification.promo", To: "notification.promo_v2"},
		},
	}
	// The ledger: a coupon sent, then forgotten, comes back (already
	// delivered); a paused block (disabled).
	coupon := note("notification.coupon", "Coupon", "Your 10% coupon", "", "bob")
	cc := coupon.Content
	fp := planner.Fingerprint(coupon.Kind, cc)
	for _, e := range []state.Entry{
		{Type: state.EntryIntent, Time: daysAgo, Items: []state.Item{{Address: coupon.Address, Kind: coupon.Kind, TargetKind: coupon.Targets.Kind, Fingerprint: fp, Content: &cc, Targets: []string{"bob"}}}},
		{Type: state.EntryOutcome, Time: daysAgo, RequestID: "req-7", Items: []state.Item{{Address: coupon.Address, Fingerprint: fp, Targets: []string{"bob"}, Outcomes: []*state.Target{{Outcome: state.Delivered}}}}},
		{Type: state.EntryForget, Time: hourAgo, Items: []state.Item{{Address: coupon.Address}}},
	} {
		if err := st.ApplyEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	paused := note("notification.paused", "Paused", "Not now", "", "alice")
	paused.Disabled = true
	cfg.Messages = append(cfg.Messages, coupon, paused)
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGuardsGolden(t *testing.T) {
	p := guardsScenario(t)
	human, md, js := planGoldens(t, p, "plan-guards")

	// Every view shows every new action, the rename and its moved block.
	block := "moved {\n  from = notification.tips\n  to   = notification.tips_v2\n}\n"
	common := []string{
		"campaign.onboarding.notification.welcome", "notification.flash", "has expired", "2 users not delivered",
		"notification.c_nudge", "is held back by frequency_cap: 1 user", "2 held back by frequency_cap",
		"looks like a rename of notification.tips", "--allow-resend",
		"2 to move", "1 expired", "1 capped", "paced over about 2m30s",
	}
	for name, wants := range map[string][]string{
		"human": append(common, "notification.welcome has moved to campaign.onboarding.notification.welcome",
			"campaign.black_friday sends 1,500 targets at 600/minute, in 150 requests, taking about 2m30s",
			"3 targets held back by frequency_cap"),
		"markdown": append(common, "`notification.welcome` has moved to `campaign.onboarding.notification.welcome`",
			`campaign.black\_friday sends 1,500 targets at 600/minute, in 150 requests, taking about 2m30s`,
			`3 targets held back by frequency\_cap`),
	} {
		out := map[string]string{"human": human, "markdown": md}[name]
		for _, want := range wants {
			// Markdown escapes prose (frequency\_cap), not code.
			if !strings.Contains(out, want) && (name != "markdown" || !strings.Contains(out, mdText.Replace(want))) {
				t.Errorf("%s output lacks %q", name, want)
			}
		}
	}
	if !strings.Contains(human, indent(block, "    ")) {
		t.Errorf("human output lacks the moved block to paste:\n%s", human)
	}
	if !strings.Contains(md, "```hcl\n"+block+"```\n") {
		t.Errorf("markdown lacks the moved block to paste:\n%s", md)
	}
	var doc struct {
		Changes []struct {
			Address, Action, MovedFrom string
			Targets                    map[string]any
		}
		Summary map[string]float64
		Renames []struct {
			From, To   string
			Targets    int
			MovedBlock string `json:"moved_block"`
		}
		Pacing []struct {
			Group, Rate string
			Targets     int
			Seconds     float64
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	actions := map[string]string{}
	for _, c := range doc.Changes {
		actions[c.Address] = c.Action
	}
	for addr, want := range map[string]string{
		"campaign.onboarding.notification.welcome": "moved", "notification.flash": "expired", "notification.c_nudge": "capped",
		"notification.b_reminder": "create", "notification.promo_v2": "replace", "notification.tips": "forget", "notification.tips_v2": "create",
	} {
		if actions[addr] != want {
			t.Errorf("json: %s is %q, want %q", addr, actions[addr], want)
		}
	}
	if len(doc.Renames) != 1 || doc.Renames[0].MovedBlock != block || doc.Renames[0].Targets != 3 {
		t.Errorf("json renames %+v", doc.Renames)
	}
	if len(doc.Pacing) != 1 || doc.Pacing[0].Rate != "600/minute" || doc.Pacing[0].Seconds != 150 {
		t.Errorf("json pacing %+v", doc.Pacing)
	}
	for k, want := range map[string]float64{"moved": 2, "expired": 1, "expired_targets": 2, "capped": 1, "capped_targets": 3, "paced_seconds": 150} {
		if doc.Summary[k] != want {
			t.Errorf("json summary %s = %v, want %v", k, doc.Summary[k], want)
		}
	}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, prefix) + "\n"
}

// TestApplyShowsPacing: the human apply view says how sends are paced and
// shows moves; the JSON view streams pacing and move events.
func TestApplyShowsPacing(t *testing.T) {
	p := guardsScenario(t)
	clock := now
	var out, errs bytes.Buffer
	v := NewApplyHuman(&out, &errs, false, false, func() time.Time { return clock })
	v.Start(p)
	v.Event(executor.Event{Type: executor.EventMove, Batch: -1, Addresses: []string{"notification.b"}, MovedFrom: []string{"notification.a"}})
	v.Event(executor.Event{Type: executor.EventPacing, Batch: 3, Targets: 10, Delay: time.Second, Group: "campaign.black_friday", Rate: "600/minute"})
	clock = clock.Add(6 * time.Second)
	v.Event(executor.Event{Type: executor.EventResponse, Batch: 3, Targets: 10})
	for _, want := range []string{
		"Pacing: campaign.black_friday sends 1,500 targets at 600/minute",
		"moved notification.a to notification.b (state only)",
		"paced at 600/minute",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("human apply lacks %q:\n%s", want, out.String())
		}
	}
	var js bytes.Buffer
	jv := NewApplyJSON(&js)
	jv.Event(executor.Event{Type: executor.EventPacing, Batch: 3, Targets: 10, Delay: 1500 * time.Millisecond, Group: "campaign.black_friday", Rate: "600/minute"})
	jv.Flush()
	if want := `{"type":"pacing","batch":3,"targets":10,"counts":{"delivered":0,"skipped":0,"failed":0,"unknown":0},"group":"campaign.black_friday","rate":"600/minute","delay":"1.5s"}`; !strings.Contains(js.String(), want) {
		t.Errorf("json pacing event:\n%s\nwant %s", js.String(), want)
	}
}

// TestHostileGuardsEscaped: moves, renames and pacing groups carry
// addresses from the configuration; none reaches a terminal raw.
func TestHostileGuardsEscaped(t *testing.T) {
	key := `["` + hostileOSC + hostileBidi + `"]`
	note := func(addr string) *config.Message {
		return &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: hostileIDs},
			Content: config.Content{Title: "T", Body: "B"}}
	}
	old, moved := note("notification.old"+key), note("notification.gone"+key)
	st := state.New("test")
	for _, m := range []*config.Message{old, moved} {
		fp := planner.Fingerprint(m.Kind, m.Content)
		sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: m.Content, Targets: map[string]*state.Target{}}
		for _, id := range m.Targets.IDs {
			sm.Targets[id] = &state.Target{Outcome: state.Delivered, Fingerprint: fp, Time: now}
		}
		st.Messages[m.Address] = sm
	}
	renamed, dest := note("notification.new"+key), note("notification.here"+key)
	renamed.Content.Body = "B!" // a rename with an edit
	dest.SendRate = &config.Rate{Count: 1, Per: time.Second}
	dest.Targets.IDs = append(dest.Targets.IDs, "more")
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{dest, renamed},
		Moved: []config.Moved{{From: "notification.gone", To: "notification.here"}}}
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Renames) != 1 || p.Summary.Moved != 1 || len(p.Pacing) != 1 {
		t.Fatalf("renames %v summary %+v pacing %v", p.Renames, p.Summary, p.Pacing)
	}
	var human, md, out, errb bytes.Buffer
	if err := NewPlanHuman(&human, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	if err := NewPlanMarkdown(&md, 0).Plan(p); err != nil {
		t.Fatal(err)
	}
	v := NewApplyHuman(&out, &errb, false, false, func() time.Time { return now })
	v.Start(p)
	v.Event(executor.Event{Type: executor.EventMove, Addresses: []string{"notification.here" + key}, MovedFrom: []string{"notification.gone" + key}})
	for name, s := range map[string]string{"plan": human.String(), "markdown": md.String(), "apply": out.String()} {
		assertSafe(t, name, s)
		if !strings.Contains(s, `a\x1b]0;owned\a\x1b[2Jb\u202ex`) {
			t.Errorf("%s does not show the key escaped:\n%s", name, s)
		}
	}
	if err := p.ResendGuard(); err == nil || !strings.Contains(err.Error(), "notification.new"+key) {
		t.Errorf("ResendGuard = %v", err)
	}
}

// TestRenameAdvice: the advice to add a moved block says what the move
// does: nothing for a pure rename, and for one that carries an edit, that
// the edit is sent, replacing the earlier notification or beside it.
func TestRenameAdvice(t *testing.T) {
	same := planner.Rename{From: "notification.a", To: "notification.b", Targets: 3, Same: true}
	tagged := planner.Rename{From: "notification.c", To: "notification.d", Targets: 1, Replaces: true}
	untagged := planner.Rename{From: "notification.e", To: "notification.f", Targets: 2}
	for _, tt := range []struct {
		name    string
		renames []planner.Rename
		want    string
	}{
		{"same content", []planner.Rename{same}, "(a move sends nothing);"},
		{"edited, same tag", []planner.Rename{tagged}, "(the move sends nothing, and the edit it carries then replaces the earlier notification on the devices of 1 target, under the same tag);"},
		{"edited, no tag", []planner.Rename{untagged}, "(the move sends nothing, but the edit it carries is then sent to the 2 targets that have the earlier notification, and without the same tag their devices show both);"},
		{"several, none edited", []planner.Rename{same, same}, "(a move sends nothing);"},
		{"several, edited", []planner.Rename{same, tagged, untagged}, "(a move sends nothing, but 2 of them carry an edit, which is then sent to the targets that have the earlier notification: replacing it under the same tag for 1, shown beside it for 1);"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := renameAdvice(&planner.Plan{Renames: tt.renames}); !strings.Contains(got, tt.want) {
				t.Errorf("advice:\n%s\nwant it to contain\n%s", got, tt.want)
			}
		})
	}
}
