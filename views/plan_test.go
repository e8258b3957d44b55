package views

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/planner"
	"pushform/state"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func ids(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

// scenario is a plan with one change of every kind.
func scenario(t *testing.T) *planner.Plan {
	t.Helper()
	three := 3
	zero := 0
	later := now.Add(48 * time.Hour)
	note := func(addr, title, body, tag string, targets ...string) *config.Message {
		return &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: targets},
			Content: config.Content{Title: title, Body: body, Tag: tag}}
	}
	sale := note("campaign.spring_sale.notification.announce", "Spring sale", "Everything 20% off until Sunday", "spring-sale-2026", ids(12000, "u")...)
	sale.Content.OpenToURL = "https://shop.example.com/sale"
	oldBadge := &config.Message{Address: "campaign.spring_sale.badge.reset", Kind: config.KindBadge,
		Targets: config.Targets{Kind: config.TargetDevices, IDs: []string{"dev-1", "dev-2"}}, Content: config.Content{BadgeCount: &three}}
	untagged := note("notification.welcome", "Welcome", "Thanks for joining", "", "alice", "bob")
	grown := note("notification.news", "News", "Read all about it", "news-1", "alice")
	retried := note("notification.retry", "Retry", "Again", "r", "alice", "bob", "carol")
	gone := note("notification.gone", "Old", "Gone", "", "alice", "bob", "carol")
	same := note("notification.same", "Same", "Same", "s", "alice")
	weekly := note("notification.weekly", "Weekly", "Your weekly digest", "weekly", "alice", "bob")
	weekly.RepeatAfter = time.Hour

	st := state.New("test")
	st.Lineage = "00000000-0000-0000-0000-000000000000"
	st.Serial = 7
	for _, m := range []*config.Message{sale, oldBadge, untagged, grown, retried, gone, same, weekly} {
		c := m.Content
		fp := planner.Fingerprint(m.Kind, c)
		sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: c, Targets: map[string]*state.Target{}}
		for i, id := range m.Targets.IDs {
			o := state.Delivered
			if m == retried && i == 1 {
				o = state.Failed
			}
			if m == sale && i%1000 == 7 {
				o = state.Skipped
			}
			at := now
			if m == weekly { // delivered two hours ago: repeat_after has passed
				at = now.Add(-2 * time.Hour)
			}
			sm.Targets[id] = &state.Target{Outcome: o, Fingerprint: fp, RequestID: "req-1", Time: at}
		}
		st.Messages[m.Address] = sm
	}
	// The desired configuration: edits on top of what was sent.
	sale2 := *sale
	sale2.Content.Body = "Everything 30% off until Monday"
	badge2 := *oldBadge
	badge2.Content.BadgeCount = &zero
	untagged2 := *untagged
	untagged2.Content.Body = "Thanks for joining us"
	grown2 := *grown
	grown2.Targets.IDs = []string{"alice", "bob", "carol"}
	created := &config.Message{Address: `notification.order_shipped["A-1001"]`, Kind: config.KindNotification,
		Targets: config.Targets{Kind: config.TargetUsers, IDs: []string{"alice"}},
		Content: config.Content{Title: "Order A-1001 shipped", Body: "It arrives Tuesday", Tag: "order-A-1001", SilentInForeground: true}}
	waiting := note("notification.later", "Later", "Not yet", "later", "alice", "bob")
	waiting.SendAfter = &later

	cfg := &config.Config{Service: config.Service{Environment: "test"},
		Messages: []*config.Message{&sale2, &badge2, &untagged2, &grown2, retried, same, created, waiting, weekly}}
	p, err := planner.Make(planner.Input{Config: cfg, State: st, Recipients: &state.Snapshot{UserIDs: []string{"u00007"}, FetchedAt: now}, Refreshed: true}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanGolden(t *testing.T) {
	p := scenario(t)
	var human, colored, js bytes.Buffer
	if err := NewPlanHuman(&human, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	if err := NewPlanHuman(&colored, true).Plan(p); err != nil {
		t.Fatal(err)
	}
	if err := NewPlanJSON(&js, true).Plan(p); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "plan.txt"), human.Bytes())
	testutil.Golden(t, filepath.Join("testdata", "plan.color.txt"), colored.Bytes())
	testutil.Golden(t, filepath.Join("testdata", "plan.json"), js.Bytes())
	if strings.Contains(human.String(), "\x1b[") {
		t.Error("plain output has escape sequences")
	}
}

func TestNoChangesGolden(t *testing.T) {
	p, err := planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}}}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := NewPlanHuman(&b, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "plan-empty.txt"), b.Bytes())
}

func TestWordDiff(t *testing.T) {
	tests := []struct{ old, new, want string }{
		{"Everything 20% off until Sunday", "Everything 30% off until Monday", `"Everything [-20%-]{+30%+} off until [-Sunday-]{+Monday+}"`},
		{"same", "same", `"same"`},
		{"", "new text", `"{+new text+}"`},
		{"Grüße an alle", "Grüße an euch", `"Grüße an [-alle-]{+euch+}"`},
		{`say "hi"`, `say "ho"`, `"say [-\"hi\"-]{+\"ho\"+}"`},
	}
	for _, tt := range tests {
		if got := inlineDiff(tt.old, tt.new, false); got != tt.want {
			t.Errorf("inlineDiff(%q, %q) = %s, want %s", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12480: "12,480", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %s, want %s", n, got, want)
		}
	}
}

// largePlan is a plan with counts in the thousands everywhere a count is
// shown (made by hand: the planner would list thousands of changes).
func largePlan() *planner.Plan {
	return &planner.Plan{
		Environment: "production",
		Changes: []*planner.Change{
			{Address: "notification.held", Action: planner.ActionNoOp, TargetKind: "user_ids", Held: ids(4004, "h"),
				Targets: planner.TargetCounts{Total: 4004, Held: 4004}},
			{Address: "notification.news", Action: planner.ActionSendNew, TargetKind: "user_ids", Send: ids(12480, "u"),
				Targets: planner.TargetCounts{Total: 212714, New: 12480, Send: 12480, UpToDate: 199000, Skipped: 1234}},
			{Address: "notification.old", Action: planner.ActionForget, TargetKind: "device_ids", Forget: ids(3000, "d"),
				Targets: planner.TargetCounts{Forget: 3000}},
			{Address: "notification.retry", Action: planner.ActionRetry, TargetKind: "user_ids", Send: ids(4500, "r"),
				Targets: planner.TargetCounts{Total: 7000, Retry: 1500, Unknown: 2000, Reachable: 1000, Send: 4500, UpToDate: 2500}},
		},
		Summary: planner.Summary{Create: 3000, SendNew: 1, Retry: 1, Replace: 1200, Forget: 1, Targets: 16980, Requests: 34},
	}
}

// TestNumbersGolden pins one number format for every count in human and
// markdown output: thousands separators, never a bare 3000.
func TestNumbersGolden(t *testing.T) {
	p := largePlan()
	var human, md bytes.Buffer
	if err := NewPlanHuman(&human, false).Plan(p); err != nil {
		t.Fatal(err)
	}
	if err := NewPlanMarkdown(&md, 0).Plan(p); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "plan-large.txt"), human.Bytes())
	testutil.Golden(t, filepath.Join("testdata", "plan-large.md"), md.Bytes())
	bare := regexp.MustCompile(`[0-9]{4}`)
	// Ids in code (samples, diff blocks) are not counts.
	for name, out := range map[string]string{"human": human.String(), "markdown": outsideCode(md.String())} {
		if loc := bare.FindStringIndex(out); loc != nil {
			t.Errorf("%s has a count without separators at %d: %q", name, loc[0], out[max(0, loc[0]-30):loc[1]])
		}
	}
}

func TestWrapText(t *testing.T) {
	long := "notification.welcome: content changed and no tag is set: 2 targets already have the earlier notification"
	tests := []struct {
		text          string
		width, indent int
		want          string
	}{
		{long, 0, 9, long},
		{long, 50, 9, "notification.welcome: content changed and\n         no tag is set: 2 targets already have the\n         earlier notification"},
		{"a " + strings.Repeat("x", 60) + " b", 40, 9, "a\n         " + strings.Repeat("x", 60) + "\n         b"},
		{long, 25, 9, long}, // too narrow to help
	}
	for _, tt := range tests {
		got := WrapText(tt.text, tt.width, tt.indent)
		if got != tt.want {
			t.Errorf("WrapText(%d, %d) =\n%s\nwant\n%s", tt.width, tt.indent, got, tt.want)
		}
		for i, line := range strings.Split(got, "\n") {
			if n := len(line) + map[bool]int{true: tt.indent}[i == 0]; tt.width > 0 && n > tt.width && !strings.Contains(line, "xxxx") && tt.width-tt.indent >= 20 {
				t.Errorf("line %q is %d columns wide, over %d", line, n, tt.width)
			}
		}
	}
}

// TestPlanHumanWidth: on a terminal the warnings wrap at its width.
func TestPlanHumanWidth(t *testing.T) {
	var b bytes.Buffer
	if err := NewPlanHuman(&b, false).WithWidth(60).Plan(scenario(t)); err != nil {
		t.Fatal(err)
	}
	_, warn, ok := strings.Cut(b.String(), "Warning: ")
	warn, _, _ = strings.Cut(warn, "\n\n")
	if !ok || !strings.Contains(warn, "\n         ") {
		t.Fatalf("warning not wrapped:\n%s", b.String())
	}
	for _, line := range strings.Split("Warning: "+warn, "\n") {
		if utf8.RuneCountInString(line) > 60 {
			t.Errorf("line over 60 columns: %q", line)
		}
	}
}

// planGoldens renders p in the human, markdown and JSON views, compares
// each with testdata/NAME.txt, .md and .json, and returns the three.
func planGoldens(t *testing.T, p *planner.Plan, name string) (human, md, js string) {
	t.Helper()
	out := make([]string, 3)
	for i, v := range []struct {
		ext  string
		view func(*bytes.Buffer) Plan
	}{
		{".txt", func(b *bytes.Buffer) Plan { return NewPlanHuman(b, false) }},
		{".md", func(b *bytes.Buffer) Plan { return NewPlanMarkdown(b, 0) }},
		{".json", func(b *bytes.Buffer) Plan { return NewPlanJSON(b, true) }},
	} {
		var b bytes.Buffer
		if err := v.view(&b).Plan(p); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", name+v.ext), b.Bytes())
		out[i] = b.String()
	}
	return out[0], out[1], out[2]
}
