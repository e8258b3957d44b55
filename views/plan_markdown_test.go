package views

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/message"
	"pushform/planner"
)

// manyCreates plans n new notifications, each with a body of bodyLen bytes.
func manyCreates(t *testing.T, n, bodyLen int) *planner.Plan {
	t.Helper()
	cfg := &config.Config{Service: config.Service{Environment: "production"}}
	for i := range n {
		cfg.Messages = append(cfg.Messages, &config.Message{
			Address: fmt.Sprintf("notification.order_shipped[\"A-%04d\"]", i), Kind: config.KindNotification,
			Targets: config.Targets{Kind: config.TargetUsers, IDs: []string{fmt.Sprintf("user-%04d", i)}},
			Content: config.Content{Title: fmt.Sprintf("Order A-%04d shipped", i), Body: strings.Repeat("x", bodyLen), Tag: fmt.Sprintf("order-A-%04d", i)},
		})
	}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// heldOnly is a plan with nothing to send now: an address waiting for
// send_after (its content recorded earlier) and a disabled one.
func heldOnly() *planner.Plan {
	later := now.Add(48 * time.Hour)
	content := message.Content{Title: "Later", Body: "Not yet", Tag: "later"}
	return &planner.Plan{FormatVersion: planner.FormatVersion, Environment: "test", CreatedAt: now,
		Changes: []*planner.Change{
			{Address: "notification.later", Action: planner.ActionWait, Kind: message.KindNotification, TargetKind: message.TargetUsers,
				Content: content, SendAfter: &later, Targets: planner.TargetCounts{Total: 2, Waiting: 2}},
			{Address: "notification.paused", Action: planner.ActionDisabled, Kind: message.KindNotification, TargetKind: message.TargetUsers,
				Content: content, Targets: planner.TargetCounts{Total: 1}},
		},
		Summary: planner.Summary{Wait: 1, Disabled: 1}}
}

func markdown(t *testing.T, p *planner.Plan, limit int) string {
	t.Helper()
	var b bytes.Buffer
	if err := NewPlanMarkdown(&b, limit).Plan(p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMarkdownGolden(t *testing.T) {
	empty, err := planner.Make(planner.Input{Config: &config.Config{Service: config.Service{Environment: "test"}}}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		plan  *planner.Plan
		limit int
	}{
		{"plan.md", scenario(t), 0},
		{"plan-empty.md", empty, 0},
		{"plan-truncated.md", manyCreates(t, 40, 20), 3000},
		{"plan-held.md", heldOnly(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", tt.name), []byte(markdown(t, tt.plan, tt.limit)))
		})
	}
	// In GitHub Actions: commit, run, directory, the apply command, and
	// what the state says about the audience.
	t.Run("plan-context.md", func(t *testing.T) {
		p := scenario(t)
		var b bytes.Buffer
		ctx := MarkdownContext{
			Dir: "campaigns/spring-sale", Commit: "0123456789abcdef0123456789abcdef01234567",
			RunURL:       "https://github.com/acme/campaigns/actions/runs/42",
			ApplyCommand: "pushform --chdir campaigns/spring-sale apply /tmp/pushform.plan",
			Audience: &Audience{
				Devices:    map[string]Devices{"campaign.spring_sale.notification.announce": {Count: 15230, Of: 11000}, "notification.welcome": {Count: 3, Of: 2}},
				Recipients: &ListDiff{Total: 12001, Added: 12, Removed: 3},
			},
		}
		if err := NewPlanMarkdown(&b, 0).WithContext(ctx).Plan(p); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", "plan-context.md"), b.Bytes())
	})
}

// TestMarkdownLimit checks the cap holds at every size (10,000 changes
// among them), the summary always comes whole before the changes, and a
// cut says how much it cut.
func TestMarkdownLimit(t *testing.T) {
	tests := []struct {
		name        string
		changes     int
		bodyLen     int
		limit       int
		wantCut     bool
		wantShownAt int // at least this many changes shown
	}{
		{"fits", 10, 100, 0, false, 10},
		{"ten thousand changes", 10000, 100, 0, true, 20},
		{"huge bodies", 50, 1 << 20, 0, true, 10},
		{"tiny limit", 100, 10, 1500, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := manyCreates(t, tt.changes, tt.bodyLen)
			// At GitHub's size: as many renames as changes, and a refusal
			// naming them all.
			var refusal strings.Builder
			for i, c := range p.Changes {
				if tt.limit != 0 {
					break
				}
				p.Renames = append(p.Renames, planner.Rename{From: fmt.Sprintf("notification.old_%d", i), To: c.Address, Targets: 1})
				refusal.WriteString(c.Address + " looks like a rename. ")
			}
			var b bytes.Buffer
			ctx := MarkdownContext{Dir: "campaigns/x", ApplyCommand: "pushform apply p.plan", Refusal: refusal.String(),
				Audience: &Audience{Recipients: &ListDiff{Total: 1}}}
			if err := NewPlanMarkdown(&b, tt.limit).WithContext(ctx).Plan(p); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			limit := tt.limit
			if limit == 0 {
				limit = MarkdownLimit
			}
			if len(got) > limit {
				t.Errorf("%d bytes, limit %d", len(got), limit)
			}
			summary := "\n**" + mdText.Replace(SummaryLine(p)) + "**\n"
			if i := strings.Index(got, summary); i < 0 || i > strings.Index(got, "<details>") {
				t.Errorf("summary %q missing or after the details:\n%.500s", summary, got)
			}
			if cut := strings.Contains(got, "**Truncated:**"); cut != tt.wantCut {
				t.Errorf("truncated = %v, want %v", cut, tt.wantCut)
			}
			if n := strings.Count(got, "#### `+` `notification."); n < tt.wantShownAt {
				t.Errorf("%d changes shown, want at least %d", n, tt.wantShownAt)
			}
			if !strings.HasSuffix(got, Marker("campaigns/x")+"\n") || strings.Count(got, "```")%2 != 0 {
				t.Error("marker missing or fences unbalanced")
			}
		})
	}
}

// outsideCode returns md without its fenced blocks and inline code spans:
// what GitHub reads as markup.
func outsideCode(md string) string {
	var prose []string
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			prose = append(prose, line)
		}
	}
	s := strings.Join(prose, "\n")
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i += 2
			continue
		case s[i] == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			run := strings.Repeat("`", n)
			rest := s[i+n:]
			if j := strings.Index(rest, run); j >= 0 && (j+n == len(rest) || rest[j+n] != '`') {
				i += n + j + n
				continue
			}
			b.WriteString(run)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// TestMarkdownEscapes checks that text from the configuration cannot break
// out of a code block or span, nor turn into markup.
func TestMarkdownEscapes(t *testing.T) {
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{{
		Address: "notification.x[\"<b>&`|\"]", Kind: config.KindNotification,
		Targets: config.Targets{Kind: config.TargetUsers, IDs: []string{"u<1>", "```", "a|b"}},
		Content: config.Content{Title: "</details><script>", Body: "line1\n```\nline2 \"quoted\" **bold** [x](http://e)", OpenToURL: "javascript:alert(1)"},
	}}}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	p.Warnings = []string{"a [link](http://x) and <img> and `code`"}
	var b bytes.Buffer
	ctx := MarkdownContext{Dir: "camp--aigns/<x>", Commit: "`sha`", RunURL: "https://github.com/o/r/actions/runs/1) [x](y", ApplyCommand: "pushform apply '```'"}
	if err := NewPlanMarkdown(&b, 0).WithContext(ctx).Plan(p); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	checkMarkdownSafe(t, got, ctx.Dir)
	prose := outsideCode(got)
	for _, bad := range []string{"[link](", "[x](http", "**bold**", "a|b"} {
		if strings.Contains(prose, bad) {
			t.Errorf("prose contains %q unescaped:\n%s", bad, prose)
		}
	}
	if strings.Count(Marker(ctx.Dir), "--") != 2 {
		t.Errorf("marker %q can be closed early", Marker(ctx.Dir))
	}
	if !strings.Contains(got, "open\\_to\\_url is not https") {
		t.Errorf("no warning for a javascript: link:\n%s", got)
	}
}

func TestContentDiffLines(t *testing.T) {
	tests := []struct {
		old, new message.Content
		want     []string
	}{
		{message.Content{Body: "Everything 20% off until Sunday"}, message.Content{Body: "Everything 30% off until Monday"}, []string{
			`- body: "Everything 20% off until Sunday"`,
			`+ body: "Everything 30% off until Monday"`,
			`~ body: "Everything [-20%-]{+30%+} off until [-Sunday-]{+Monday+}"`,
		}},
		{message.Content{Title: "a\nb"}, message.Content{Title: "a\nc"}, []string{`- title: "a\nb"`, `+ title: "a\nc"`, `~ title: "a\n[-b-]{+c+}"`}},
		{message.Content{Tag: "x"}, message.Content{}, []string{`- tag: "x"`}},
		{message.Content{BadgeCount: ptr(3)}, message.Content{BadgeCount: ptr(0)}, []string{"- badge_count: 3", "+ badge_count: 0"}},
		{message.Content{Title: "same"}, message.Content{Title: "same"}, nil},
	}
	for _, tt := range tests {
		if got := contentDiffLines(tt.old, tt.new); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("contentDiffLines(%+v, %+v) =\n%s\nwant\n%s", tt.old, tt.new, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestLockScreen(t *testing.T) {
	tests := []struct {
		c    message.Content
		want []string // warnings
	}{
		{message.Content{Title: "Spring sale", Body: "20% off", OpenToURL: "https://x.example/sale"}, nil},
		{message.Content{Title: strings.Repeat("t", 51), Body: "b"}, []string{"title (51 characters) is cut on the lock screen: iOS after 50"}},
		{message.Content{Title: "t", Body: strings.Repeat("é", 51)}, []string{"body (51 characters) is cut on the lock screen: Android after 50"}},
		{message.Content{Title: "t", Body: strings.Repeat("b", 179)}, []string{"body (179 characters) is cut on the lock screen: iOS after 178, Android after 50"}},
		{message.Content{Title: "t", Body: "b", OpenToURL: "http://x.example"}, []string{"open_to_url is not https: http://x.example"}},
		{message.Content{Title: "t", Body: "b", OpenToURL: "myapp://open"}, []string{"open_to_url is not https: myapp://open"}},
	}
	for _, tt := range tests {
		var got []string
		for _, w := range lockScreenWarnings(tt.c) {
			got = append(got, strings.TrimSpace(w.text+" "+w.code))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("lockScreenWarnings(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
	if got, want := cutAt("Everything 20% off\nuntil Sunday", 20), "Everything 20% off u…"; got != want {
		t.Errorf("cutAt = %q, want %q", got, want)
	}
	if got := cutAt("short", 50); got != "short" {
		t.Errorf("cutAt(short) = %q", got)
	}
}

func TestMDCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
		{"a|b", "`a\\|b`"},
		{"x\ny", "`x\\ny`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// checkMarkdownSafe fails t when untrusted text in md became markup: HTML
// outside code other than the comment's own tags, or a code block line
// that does not start with a diff marker (one that could close the fence).
func checkMarkdownSafe(t *testing.T, md, dir string) {
	t.Helper()
	allowed := strings.NewReplacer("<details>", "", "</details>", "", "<summary>", "", "</summary>", "", Marker(dir), "")
	if rest := allowed.Replace(outsideCode(md)); strings.Contains(strings.ReplaceAll(rest, `\<`, ""), "<") {
		t.Errorf("markup outside code:\n%s", rest)
	}
	fenced, lang := false, ""
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			fenced, lang = !fenced, strings.TrimLeft(line, "`")
		case fenced && lang == "diff" && (line == "" || !strings.ContainsAny(line[:1], "+-~! ")):
			t.Errorf("line in a diff block does not start with a diff marker: %q", line)
		}
	}
	if fenced {
		t.Error("a code block is left open")
	}
}

// FuzzMarkdownEscapes: whatever the addresses, ids and texts, the comment
// holds no markup from them and every code block closes where it should.
func FuzzMarkdownEscapes(f *testing.F) {
	f.Add(`notification.x["<b>"]`, "u<1>", "</details><script>", "line\n```\n**b**", "http://x|y")
	f.Add("notification.a", "```", "`code`", "[l](http://e) <!-- x -->", "javascript:alert(1)")
	f.Fuzz(func(t *testing.T, addr, id, title, body, link string) {
		if id == "" {
			id = "u"
		}
		cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{{
			Address: "notification.n[" + strconv.Quote(addr) + "]", Kind: config.KindNotification,
			Targets: config.Targets{Kind: config.TargetUsers, IDs: []string{id}},
			Content: config.Content{Title: title, Body: body, OpenToURL: link},
		}}}
		p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
		if err != nil {
			t.Skip(err)
		}
		p.Warnings = append(p.Warnings, title, body)
		var b bytes.Buffer
		ctx := MarkdownContext{Dir: addr, Commit: id, RunURL: link, ApplyCommand: "pushform apply " + body}
		if err := NewPlanMarkdown(&b, 0).WithContext(ctx).Plan(p); err != nil {
			t.Fatal(err)
		}
		checkMarkdownSafe(t, b.String(), addr)
	})
}

// TestApplyLead: what leads the apply command says what applying does,
// in the terminal and in the comment.
func TestApplyLead(t *testing.T) {
	forget := &planner.Plan{Changes: []*planner.Change{{Address: "notification.gone", Action: planner.ActionForget, Kind: message.KindNotification,
		TargetKind: message.TargetUsers, Forget: []string{"u1"}, Targets: planner.TargetCounts{Forget: 1}}}, Summary: planner.Summary{Forget: 1}}
	for _, tt := range []struct {
		name      string
		plan      *planner.Plan
		human, md string
	}{
		{"sends", manyCreates(t, 1, 5), "To send exactly these notifications, run:", "To send exactly this plan:"},
		{"records", forget, "Applying it sends nothing: it records these changes in the state.", "Applying this plan sends nothing: it records these changes in the state."},
		{"nothing", &planner.Plan{}, "It has no changes: applying it sends and records nothing.", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ApplyLead(tt.plan); !strings.HasPrefix(got, tt.human) {
				t.Errorf("ApplyLead = %q, want %q", got, tt.human)
			}
			var b bytes.Buffer
			if err := NewPlanMarkdown(&b, 0).WithContext(MarkdownContext{ApplyCommand: "pushform apply p.plan"}).Plan(tt.plan); err != nil {
				t.Fatal(err)
			}
			if tt.md != "" && !strings.Contains(b.String(), "\n"+tt.md) || tt.md == "" && strings.Contains(b.String(), "pushform apply") {
				t.Errorf("markdown:\n%s\nwant %q", b.String(), tt.md)
			}
		})
	}
}
