package views

import (
	"bytes"
	"strings"
	"testing"

	"pushform/planner"
)

// TestShapesNote: what a reviewed plan accepts is said in the human plan
// and the markdown comment; a plan that only accepts shapes says so in
// its summary line, one that accepts none says nothing.
func TestShapesNote(t *testing.T) {
	many := make([]planner.Shape, 7)
	for i := range many {
		many[i] = planner.Shape{Address: "notification.n" + string(rune('a'+i)), Fingerprint: "new", Prior: "old"}
	}
	cases := []struct {
		name   string
		shapes []planner.Shape
		want   string // "" for no note
	}{
		{"none", nil, ""},
		{"changed", []planner.Shape{{Address: "notification.a", Fingerprint: "s2", Prior: "s1"}},
			"records as reviewed the changed shape of notification.a (a shape is everything that decides who gets what and when"},
		{"many changed", many, "the changed shapes of notification.na, notification.nb, notification.nc, notification.nd, notification.ne and 2 more"},
		{"new and dropped", []planner.Shape{{Address: "notification.a", Fingerprint: "s1"}, {Address: "notification.b", Prior: "s0"}},
			"records as reviewed the shape of 1 address it has none recorded for, and drops the reviewed shape of 1 address no longer configured"},
		{"dropped", []planner.Shape{{Address: "notification.b", Prior: "s0"}}, "Applying this plan drops the reviewed shape of 1 address no longer configured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &planner.Plan{Environment: "test", Shapes: tc.shapes, Changes: []*planner.Change{{Address: "notification.a", Action: planner.ActionNoOp}}}
			note := ShapesNote(p)
			if tc.want == "" {
				if note != "" || SummaryLine(p) != "No changes. Devices are up to date with the configuration." {
					t.Fatalf("note %q, summary %q", note, SummaryLine(p))
				}
				return
			}
			if !strings.Contains(note, tc.want) {
				t.Errorf("note:\n%s\nwant %q", note, tc.want)
			}
			if s := SummaryLine(p); s != "Nothing to send or record but the reviewed shapes (see Review)." {
				t.Errorf("summary line %q", s)
			}
			var human, markdown bytes.Buffer
			if err := NewPlanHuman(&human, false).Plan(p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(strings.Fields(human.String()), " "), "Review: "+strings.Join(strings.Fields(note), " ")) {
				t.Errorf("the human plan lacks the note:\n%s", human.String())
			}
			if err := NewPlanMarkdown(&markdown, 0).Plan(p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(markdown.String(), "**Review:** Applying this plan") {
				t.Errorf("the markdown plan lacks the note:\n%s", markdown.String())
			}
		})
	}
}
