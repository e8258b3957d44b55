package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pushform/config"
	"pushform/executor"
	"pushform/message"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
	"pushform/termtext"
)

// Hostile text as a configuration or a server could supply it: a terminal
// title change and screen clear, a right-to-left override, a NUL.
const (
	hostileOSC  = "a\u001b]0;owned\u0007\u001b[2J"
	hostileBidi = "b\u202ex"
	hostileNUL  = "u\u0000x"
)

var hostileIDs = []string{hostileOSC, hostileBidi, hostileNUL}

// hostilePlan plans a replace, a resend, a create and a forget whose
// addresses, ids, texts and warnings all hold control characters.
func hostilePlan(t *testing.T) (*planner.Plan, *config.Config) {
	t.Helper()
	note := func(addr, title, body, tag string) *config.Message {
		return &config.Message{Address: addr, Kind: config.KindNotification,
			Targets: config.Targets{Kind: config.TargetUsers, IDs: hostileIDs},
			Content: config.Content{Title: title, Body: body, Tag: tag, OpenToURL: "https://x.example/\u202e/\u001b[2J"}}
	}
	tagged := note(`notification.t["`+hostileOSC+`"]`, "Sale \x1b[31mred", "20% \u202eoff", "tag\x1b[5m")
	untagged := note(`notification.u["`+hostileBidi+`"]`, "Hi\x07", "body\r\nline", "")
	gone := note(`notification.gone["`+hostileNUL+`"]`, "Old", "Old", "")

	st := state.New("test")
	for _, m := range []*config.Message{tagged, untagged, gone} {
		c := m.Content
		fp := planner.Fingerprint(m.Kind, c)
		sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: c, Targets: map[string]*state.Target{}}
		for _, id := range m.Targets.IDs {
			sm.Targets[id] = &state.Target{Outcome: state.Delivered, Fingerprint: fp, RequestID: "req\x1b[2J", Time: now}
		}
		st.Messages[m.Address] = sm
	}
	tagged2, untagged2 := *tagged, *untagged
	tagged2.Content.Body = "30% \u202eoff\x1b[0m now"
	untagged2.Content.Title = "Hello\x07\u2066"
	created := note(`notification.c["`+hostileNUL+`"]`, "New\x1b]8;;http://evil\x07link", "x\u0085y", "c\u202e")
	created.Content.SilentInForeground = true
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{&tagged2, &untagged2, created}}
	p, err := planner.Make(planner.Input{Config: cfg, State: st}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) == 0 {
		t.Fatal("the hostile plan has no warning to escape")
	}
	return p, cfg
}

// ourColour matches the SGR and erase sequences the views write themselves.
var ourColour = regexp.MustCompile(`\x1b\[[0-9;]*[mK]`)

// assertSafe fails when out holds a byte below 0x20 other than newline and
// tab, DEL, a C1 control, a bidi control or invalid UTF-8.
func assertSafe(t *testing.T, name, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s is not UTF-8:\n%q", name, out)
	}
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if termtext.Unsafe(r) {
			t.Errorf("%s has %U at byte %d:\n%q", name, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
}

// TestHostileTextEscaped renders a hostile plan, apply and state in every
// human format: no control character or bidi control reaches the output,
// and each is shown escaped rather than dropped.
func TestHostileTextEscaped(t *testing.T) {
	p, cfg := hostilePlan(t)
	outputs := map[string]string{}

	var b bytes.Buffer
	if err := NewPlanHuman(&b, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	outputs["plan"] = b.String()
	b.Reset()
	if err := NewPlanHuman(&b, true).Plan(p); err != nil {
		t.Fatal(err)
	}
	outputs["plan in colour, our colours removed"] = ourColour.ReplaceAllString(b.String(), "")
	b.Reset()
	if err := NewPlanMarkdown(&b, 0).Plan(p); err != nil {
		t.Fatal(err)
	}
	outputs["markdown"] = b.String()

	var out, errb bytes.Buffer
	clock := &fakeClock{now}
	v := NewApplyHuman(&out, &errb, false, false, clock.now)
	if err := v.Plan(p); err != nil {
		t.Fatal(err)
	}
	v.Start(p)
	v.Event(executor.Event{Type: executor.EventRetry, Attempt: 1, Delay: time.Second, Error: "503 \x1b[2J\u202e"})
	v.Event(executor.Event{Type: executor.EventForget, Addresses: []string{`notification.gone["` + hostileNUL + `"]`}})
	clock.t = clock.t.Add(10 * time.Second)
	v.Event(executor.Event{Type: executor.EventResponse, Targets: 3})
	res := &executor.Result{
		Counts:   executor.Counts{Delivered: 1, Failed: 2, Skipped: 1},
		Failures: []executor.Failure{{Address: p.Changes[0].Address, Target: hostileOSC, Message: "bad\x1b[31m token\r\n", RequestID: "req\u202e"}},
		Skipped:  map[string]int{"no_active\x1b[2J": 1},
		Errors: []*executor.BatchError{
			{Addresses: []string{p.Changes[0].Address}, Err: &pushapi.ValidationError{RequestID: "r\x07", Issues: []pushapi.Issue{{Index: 0, Field: "title\x1b", Message: "too long\u202e"}}}},
			{Addresses: []string{p.Changes[1].Address}, Err: &pushapi.ValidationError{Excerpt: "<html>\x1b[2J"}},
			{Addresses: []string{p.Changes[1].Address}, Err: errors.New("connection reset\u0000")},
		},
	}
	v.Finish(p, res, time.Second, cfg)
	outputs["apply stdout"] = out.String()
	outputs["apply stderr"] = errb.String()

	sv := NewStateHuman(&b, 0)
	st := state.New("test")
	msg := &state.Message{Address: `notification.t["` + hostileOSC + `"]`, Kind: "notification\x1b", TargetKind: "user_ids", Fingerprint: "fp\u202e",
		Content: message.Content{Title: "T\x1b[2J", Body: "B\u2067", OpenToURL: "https://x\x00", Tag: "t\x7f", SilentInForeground: true},
		Targets: map[string]*state.Target{
			hostileOSC:  {Outcome: state.Failed, Message: "no\x1b[2J", RequestID: "r\x1b", Time: now},
			hostileBidi: {Outcome: state.Skipped, Reason: "gone\u202e", UnreachableSince: &now},
			hostileNUL:  {Outcome: state.Outcome("future\x1b"), RequestID: "r"},
		}}
	st.Messages[msg.Address] = msg
	b.Reset()
	if err := sv.List(st); err != nil {
		t.Fatal(err)
	}
	outputs["state list"] = b.String()
	b.Reset()
	if err := sv.Show(msg); err != nil {
		t.Fatal(err)
	}
	outputs["state show"] = b.String()

	for name, s := range outputs {
		assertSafe(t, name, s)
	}
	for name, want := range map[string][]string{
		"plan":         {`a\x1b]0;owned\a\x1b[2J`, `b\u202ex`, `u\x00x`, `"New\x1b]8;;http://evil\alink"`, `{+30% \u202eoff\x1b[0m now+}`, `(tag "tag\x1b[5m")`, `\u2066`, `Warning: notification.u["b\u202ex"]`},
		"markdown":     {`a\x1b]0;owned\a\x1b[2J`, `b\u202ex`, `u\x00x`, `\x1b]8;;http://evil\alink`, `notification.u\["b\\u202ex"\]`},
		"apply stdout": {`retrying in 1s: 503 \x1b[2J\u202e`, `forgot notification.gone["u\x00x"]`, `-> a\x1b]0;owned\a\x1b[2J: bad\x1b[31m token\r\n (request id req\u202e)`, `skipped 1 target: no_active\x1b[2J`},
		"apply stderr": {`request id r\a`, `title\x1b: too long\u202e`, `<html>\x1b[2J`, `connection reset\x00`},
		"state list":   {`notification.t["a\x1b]0;owned\a\x1b[2J"]`, `1 "future\x1b"`},
		"state show":   {`# notification.t["a\x1b]0;owned\a\x1b[2J"]`, `"T\x1b[2J"`, `"no\x1b[2J"`, `gone\u202e, unreachable since`, `u\x00x`, `fp\u202e`},
	} {
		for _, w := range want {
			if !strings.Contains(outputs[name], w) {
				t.Errorf("%s lacks %s:\n%s", name, w, outputs[name])
			}
		}
	}
}

// TestHostileJSONExact checks the JSON views keep hostile text exact:
// escaped by encoding/json, decoded back to the same bytes.
func TestHostileJSONExact(t *testing.T) {
	p, _ := hostilePlan(t)
	var b bytes.Buffer
	if err := NewPlanJSON(&b, true).Plan(p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changes []struct {
			Address string          `json:"address"`
			Content message.Content `json:"content"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Changes) != len(p.Changes) {
		t.Fatalf("%d changes, want %d", len(doc.Changes), len(p.Changes))
	}
	for i, c := range doc.Changes {
		if c.Address != p.Changes[i].Address || c.Content != p.Changes[i].Content {
			t.Errorf("change %d: %q %+v, want %q %+v", i, c.Address, c.Content, p.Changes[i].Address, p.Changes[i].Content)
		}
	}
	if bytes.ContainsAny(b.Bytes(), "\x00\x07\x1b") {
		t.Errorf("JSON holds a raw control character:\n%s", b.Bytes())
	}
}
