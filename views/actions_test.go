package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pushform/message"
	"pushform/planner"
)

// actionChange is a change of action a with what its action needs to be
// shown: targets, a prior content, a moved-from address, an earlier
// delivery, a held target for no-op (an up-to-date no-op is only counted).
func actionChange(a planner.Action) *planner.Change {
	badge := 2
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c := &planner.Change{
		Address: "notification.act_" + strings.ReplaceAll(string(a), "-", "_"), Action: a,
		Kind: message.KindNotification, TargetKind: message.TargetUsers,
		Content: message.Content{Title: "Hello", Body: "World", Tag: "t", BadgeCount: &badge},
		Prior:   &message.Content{Title: "Hi", Body: "World", Tag: "t"},
		Send:    []string{"u1"}, Held: []string{"u2"}, Forget: []string{"u3"}, AlreadyDelivered: []string{"u4"},
		Earlier:   []planner.EarlierDelivery{{Address: "notification.earlier", Time: at}},
		SendAfter: &at, SendBefore: &at,
		Targets: planner.TargetCounts{Total: 4, Send: 1, Held: 1, Forget: 1, Waiting: 1, Expired: 1, Capped: 1, AlreadyDelivered: 1, Repeat: 1},
	}
	if a == planner.ActionMoved {
		c.MovedFrom = "notification.before"
	}
	return c
}

// TestEveryViewRendersEveryAction renders a plan holding one change of
// each action with the human, JSON and markdown views: each must know the
// action (a symbol and a headline of its own) and show the change.
func TestEveryViewRendersEveryAction(t *testing.T) {
	for _, a := range planner.Actions() {
		t.Run(string(a), func(t *testing.T) {
			c := actionChange(a)
			p := &planner.Plan{FormatVersion: planner.FormatVersion, Environment: "test", Changes: []*planner.Change{c}}
			sym, ok := symbol(a)
			if !ok {
				t.Errorf("no symbol for action %q (planner/actions.go)", a)
			}
			head, ok := actionHeadline(c)
			if !ok {
				t.Errorf("no headline for action %q (views/plan.go actionHeadline)", a)
			}
			if r, _ := planner.Info(a); r.Markdown == "" {
				t.Errorf("no word for action %q in the markdown list (planner/actions.go)", a)
			}
			// A moved change is shown by the move alone.
			line := sym + " " + c.Address + head
			// Markdown: the line of the list outside the fold, and the
			// change's heading and headline in the details.
			mdLines := []string{"- " + mdSymbol(a) + " " + mdCode(c.Address) + " **" + actionWord(a) + "**",
				"#### " + mdSymbol(a) + " " + mdCode(c.Address) + "\n", mdCode(c.Address) + md(head) + "\n"}
			if a == planner.ActionMoved {
				line = sym + " " + c.MovedFrom + " has moved to " + c.Address
				mdLines[2] = mdCode(c.MovedFrom) + " has moved to " + mdCode(c.Address)
			}
			for _, f := range []Format{Human, JSON, Markdown} {
				var out bytes.Buffer
				if err := NewPlan(f, &View{Stdout: &out}).Plan(p); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got := out.String()
				switch f {
				case Human:
					if want := "  " + line + "\n"; !strings.Contains(got, want) {
						t.Errorf("human output lacks %q:\n%s", want, got)
					}
				case Markdown:
					for _, want := range mdLines {
						if !strings.Contains(got, want) {
							t.Errorf("markdown output lacks %q:\n%s", want, got)
						}
					}
				case JSON:
					var doc struct {
						Changes []struct {
							Address string         `json:"address"`
							Action  planner.Action `json:"action"`
						} `json:"changes"`
					}
					if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
						t.Fatalf("JSON output: %v\n%s", err, got)
					}
					if len(doc.Changes) != 1 || doc.Changes[0].Address != c.Address || doc.Changes[0].Action != a {
						t.Errorf("JSON changes = %+v, want one %s change of %s", doc.Changes, a, c.Address)
					}
				}
			}
		})
	}
}

// TestUnknownActionIsVisible checks the guard above can fail: an action
// the views do not know has no symbol or headline of its own, and shows
// as "?" and its name instead of passing for a change with nothing to send.
func TestUnknownActionIsVisible(t *testing.T) {
	c := actionChange("teleport")
	if s, ok := symbol(c.Action); ok {
		t.Errorf("symbol(teleport) = %q, known", s)
	}
	if h, ok := actionHeadline(c); ok {
		t.Errorf("actionHeadline(teleport) = %q, known", h)
	}
	var out bytes.Buffer
	if err := NewPlanHuman(&out, false).Plan(&planner.Plan{Changes: []*planner.Change{c}}); err != nil {
		t.Fatal(err)
	}
	if want := "  ? " + c.Address + ": teleport\n"; !strings.Contains(out.String(), want) {
		t.Errorf("human output lacks %q:\n%s", want, out.String())
	}
}
