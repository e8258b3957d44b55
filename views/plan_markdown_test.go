package views

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pushform/config"
	"pushform/internal/testutil"
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", tt.name), []byte(markdown(t, tt.plan, tt.limit)))
		})
	}
}

// TestMarkdownLimit checks the cap holds at every size, the summary always
// comes first and whole, and a cut says how much it cut.
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
		{"thousands of changes", 5000, 100, 0, true, 100},
		{"huge bodies", 50, 1 << 20, 0, true, 10},
		{"tiny limit", 100, 10, 1500, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := manyCreates(t, tt.changes, tt.bodyLen)
			got := markdown(t, p, tt.limit)
			limit := tt.limit
			if limit == 0 {
				limit = MarkdownLimit
			}
			if len(got) > limit {
				t.Errorf("%d bytes, limit %d", len(got), limit)
			}
			first, _, _ := strings.Cut(got, "\n")
			if want := "**" + SummaryLine(p) + "**"; first != want {
				t.Errorf("first line %q, want %q", first, want)
			}
			if cut := strings.Contains(got, "**Truncated:**"); cut != tt.wantCut {
				t.Errorf("truncated = %v, want %v", cut, tt.wantCut)
			}
			if n := strings.Count(got, "+ <b>notification."); n < tt.wantShownAt {
				t.Errorf("%d changes shown, want at least %d", n, tt.wantShownAt)
			}
			if !strings.HasSuffix(got, MarkdownMarker+"\n") || strings.Count(got, "<pre>") != strings.Count(got, "</pre>") {
				t.Error("marker missing or <pre> unbalanced")
			}
		})
	}
}

// TestMarkdownEscapes checks that text from the configuration cannot break
// out of the <pre> block or turn into markup.
func TestMarkdownEscapes(t *testing.T) {
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{{
		Address: `notification.x["<b>&"]`, Kind: config.KindNotification,
		Targets: config.Targets{Kind: config.TargetUsers, IDs: []string{"u<1>"}},
		Content: config.Content{Title: "</pre><script>", Body: "line1\nline2 \"quoted\" **bold**"},
	}}}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	p.Warnings = []string{"a [link](http://x) and <img> and `code`"}
	got := markdown(t, p, 0)
	for _, bad := range []string{"<script>", "</pre><", `["<b>`, "<img>", "[link](", "u<1>", "line1\nline2"} {
		if strings.Contains(got, bad) {
			t.Errorf("output contains %q unescaped:\n%s", bad, got)
		}
	}
	for _, want := range []string{`&lt;/pre&gt;&lt;script&gt;`, `line1\nline2 \"quoted\" **bold**`, `\[link\](http://x)`, `&amp;`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestHTMLWordDiff(t *testing.T) {
	tests := []struct{ old, new, want string }{
		{"Everything 20% off until Sunday", "Everything 30% off until Monday",
			`"Everything <del>20%</del><ins>30%</ins> off until <del>Sunday</del><ins>Monday</ins>"`},
		{`say "hi"`, `say "ho"`, `"say <del>\"hi\"</del><ins>\"ho\"</ins>"`},
		{"a < b", "a > b", `"a <del>&lt;</del><ins>&gt;</ins> b"`},
		{"same", "same", `"same"`},
	}
	for _, tt := range tests {
		if got := htmlWordDiff(tt.old, tt.new); got != tt.want {
			t.Errorf("htmlWordDiff(%q, %q) = %s, want %s", tt.old, tt.new, got, tt.want)
		}
	}
}
