package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/message"
	"pushform/state"
)

const personalCSV = "user_id,first_name,locale\n" +
	"u1,ann,fr-CA\n" +
	"u2,bob,fr\n" +
	"u3,carla,de\n" +
	"u4,ann,fr\n" +
	"u5,,en\n"

// loadPersonal loads a configuration of users.csv (csv) and a
// notification block whose text is body.
func loadPersonal(t *testing.T, csv, block string) *config.Config {
	t.Helper()
	dir := testutil.WriteFiles(t, map[string]string{"users.csv": csv, "main.hcl": testutil.ServiceTest + `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
  samples    = 2
}
` + block})
	cfg, diags := config.NewLoader().Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

const personalBlock = `
notification "n" {
  user_ids = ["u1", "u2", "u3", "u4", "u5", "u6"]
  title    = "Hi ${title(user.first_name)}"
  body     = "Your order shipped"
  tag      = "order"
  translation "fr" {
    title = "Salut ${title(user.first_name)}"
    body  = "Votre commande est partie"
  }
}
`

func TestPersonalPlan(t *testing.T) {
	cfg := loadPersonal(t, personalCSV, personalBlock)
	p, err := Make(Input{Config: cfg}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c := change(t, p, "notification.n")
	if c.Action != ActionCreate || c.Targets.New != 5 || c.Targets.Unfilled != 1 || c.Targets.Send != 5 {
		t.Fatalf("action %s, counts %+v", c.Action, c.Targets)
	}
	if want := map[string]int{"not in user_data": 1}; !maps.Equal(c.HeldByReason, want) {
		t.Errorf("held by reason %v, want %v", c.HeldByReason, want)
	}
	if want := map[string]int{"fr": 3, "default": 2}; !maps.Equal(c.Locales, want) {
		t.Errorf("locales %v, want %v", c.Locales, want)
	}
	// Two people named Ann in French share one text: next to each other.
	got := map[string]string{}
	for i, id := range c.Send {
		got[id] = c.TextOf(i).Title
	}
	want := map[string]string{"u1": "Salut Ann", "u2": "Salut Bob", "u3": "Hi Carla", "u4": "Salut Ann", "u5": "Hi "}
	if !maps.Equal(got, want) {
		t.Errorf("texts %v, want %v", got, want)
	}
	if !slices.Equal(c.Send, []string{"u1", "u4", "u2", "u3", "u5"}) || len(c.Personal.Texts) != 4 {
		t.Errorf("send %v with %d texts: people of one text are not together", c.Send, len(c.Personal.Texts))
	}
	if len(c.Personal.Samples) != 2 || c.Personal.Samples[0].Target != "u1" {
		t.Errorf("samples %+v", c.Personal.Samples)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if !p.HasChanges() {
		t.Fatal("no changes")
	}

	st := state.New("test")
	applied(t, st, p, now, func(string) state.Outcome { return state.Delivered })
	if r := st.Messages["notification.n"].Target("u6"); r == nil || r.Outcome != state.Unfilled || r.Reason != "not in user_data" {
		t.Fatalf("held target recorded %+v", r)
	}

	again := func(cfg *config.Config) *Change {
		t.Helper()
		p, err := Make(Input{Config: cfg, State: st}, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return change(t, p, "notification.n")
	}
	// The data changes: a typo fixed, a locale added. Nothing is sent.
	fixed := strings.Replace(strings.Replace(personalCSV, "carla,de", "Carla,fr", 1), "u5,,en", "u5,eve,en", 1)
	if c := again(loadPersonal(t, fixed, personalBlock)); c.Action != ActionNoOp || len(c.Send) != 0 || c.Targets.Unfilled != 1 {
		t.Errorf("after a data change: %s, send %v, counts %+v", c.Action, c.Send, c.Targets)
	}
	// The held person appears in the data: sent their text.
	if c := again(loadPersonal(t, personalCSV+"u6,fay,fr\n", personalBlock)); c.Action != ActionSendNew || !slices.Equal(c.Send, []string{"u6"}) || c.TextOf(0).Title != "Salut Fay" {
		t.Errorf("held person now in the data: %s, send %v", c.Action, c.Send)
	}
	// The template changes under the same tag: a replace.
	edited := strings.Replace(personalBlock, `"Hi ${`, `"Hello ${`, 1)
	if c := again(loadPersonal(t, personalCSV, edited)); c.Action != ActionReplace || c.Targets.Replace != 5 {
		t.Errorf("template edited with a tag: %s, counts %+v", c.Action, c.Targets)
	}
	// Without a tag, the edit is sent again with a warning.
	untagged := loadPersonal(t, personalCSV, strings.Replace(edited, `tag      = "order"`, "", 1))
	if c := again(untagged); c.Action != ActionResend || len(c.Warnings) == 0 {
		t.Errorf("template edited without a tag: %s, warnings %q", c.Action, c.Warnings)
	}
}

func TestPersonalOnMissingFail(t *testing.T) {
	cfg := loadPersonal(t, personalCSV, strings.Replace(personalBlock, `tag      = "order"`, `on_missing = "fail"`, 1))
	_, err := Make(Input{Config: cfg}, Options{Now: now})
	if err == nil || !strings.Contains(err.Error(), "not in user_data: 1 (u6)") {
		t.Fatalf("on_missing = fail: %v", err)
	}
}

func TestPersonalEveryoneHeld(t *testing.T) {
	cfg := loadPersonal(t, personalCSV, `
notification "n" {
  user_ids = ["u1", "u2"]
  title    = "Hi ${user.nickname}"
  body     = "x"
}`)
	p, err := Make(Input{Config: cfg}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c := change(t, p, "notification.n")
	if c.Action != ActionUnfilled || c.HeldByReason["missing user.nickname"] != 2 || len(c.Send) != 0 || !p.HasChanges() {
		t.Fatalf("action %s, held %v, send %v", c.Action, c.HeldByReason, c.Send)
	}
	st := state.New("test")
	applied(t, st, p, now, func(string) state.Outcome { return state.Delivered })
	p, err = Make(Input{Config: cfg, State: st}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if p.HasChanges() {
		t.Errorf("held again for the same reason: the plan has changes")
	}
}

// TestPersonalPacking: a million distinct texts never put more than the
// limit of targets in a request, and each request's parts keep their
// texts.
func TestPersonalPacking(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("user_id,first_name\n")
	var ids []string
	for i := range 1203 {
		id := fmt.Sprintf("u%05d", i)
		ids = append(ids, `"`+id+`"`)
		fmt.Fprintf(&csv, "%s,n%d\n", id, i%700)
	}
	cfg := loadPersonal(t, csv.String(), `
notification "n" {
  user_ids = [`+strings.Join(ids, ",")+`]
  title    = "Hi ${user.first_name}"
  body     = "x"
}`)
	p, err := Make(Input{Config: cfg}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Batches) != 3 {
		t.Errorf("%d requests, want 3", len(p.Batches))
	}
	c := change(t, p, "notification.n")
	if len(c.Personal.Texts) != 700 {
		t.Errorf("%d texts, want 700", len(c.Personal.Texts))
	}
	for b := range p.Batches {
		r := p.Request(b)
		n := 0
		for _, pt := range r.Parts {
			n += len(pt.Targets)
			if len(pt.Texts) != len(pt.Targets) {
				t.Fatalf("request %d: %d texts for %d targets", b, len(pt.Texts), len(pt.Targets))
			}
		}
		if n > DefaultBatchLimit {
			t.Errorf("request %d has %d targets", b, n)
		}
	}
}

// TestPersonalTestSend: with require_test_send, a notification filled in
// per person names a person to test with, and a test send of any
// person's text is a test of the template.
func TestPersonalTestSend(t *testing.T) {
	cfg := loadPersonal(t, personalCSV, personalBlock)
	cfg.Service.RequireTestSend = true
	p, err := Make(Input{Config: cfg}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	MarkTestSends(p, cfg, nil)
	c := change(t, p, "notification.n")
	if c.TestSendCommand != "pushform test-send notification.n --device ID --as-user ID" {
		t.Errorf("command %q", c.TestSendCommand)
	}
	st := state.New("test")
	text := message.Text{Title: "Salut Ann", Body: "Votre commande est partie", Tag: "order", Locale: "fr"}
	if err := st.ApplyEntry(state.Entry{Type: state.EntryTestSend, Time: now, RequestID: "req-t", Items: []state.Item{{
		Address: c.Address, Kind: c.Kind, TargetKind: message.TargetDevices, Fingerprint: c.Fingerprint, Content: &c.Content,
		Targets: []string{"test-phone"}, Outcomes: []*state.Target{{Reason: "delivered"}}, Texts: []message.Text{text},
	}}}); err != nil {
		t.Fatal(err)
	}
	MarkTestSends(p, cfg, st)
	if c.TestSendCommand != "" {
		t.Errorf("still held after a test send of Ann's text: %q", c.TestSendCommand)
	}
}
