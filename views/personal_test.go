package views

import (
	"strings"
	"testing"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/planner"
)

// TestPersonalViews: a personalised notification shows its template and
// translations, how many people get each locale, who is held and why, and
// the texts of a few people when the data block asks for samples; the
// JSON plan has locales, targets.held_by_reason and samples.
func TestPersonalViews(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{
		"users.csv": "user_id,first_name,locale\nu1,ann,fr\nu2,bob,en\nu3,,de\n",
		"main.hcl": testutil.ServiceTest + `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
  samples    = 2
}
notification "shipped" {
  user_ids = ["u1", "u2", "u3", "u4"]
  title    = "Hi ${title(user.first_name)}"
  body     = "Your order shipped"
  tag      = "shipped"
  translation "fr" {
    title = "Salut ${title(user.first_name)}"
    body  = "Votre commande est partie"
  }
}
`})
	cfg, diags := config.NewLoader().Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	human, md, js := planGoldens(t, p, "plan-personal")
	for _, want := range []string{`title:`, `"Hi ${title(user.first_name)}"`, `translation "fr":`, "locales: default 2, fr 1",
		"held, not in user_data: 1 (u4)", `sample u1 (fr): "Salut Ann" / "Votre commande est partie"`} {
		if !strings.Contains(human, want) {
			t.Errorf("human plan lacks %q", want)
		}
	}
	for _, want := range []string{"| Person | Locale | Title | Body |", "| u1 | fr | Salut Ann | Votre commande est partie |", "held, not in user_data: 1 (u4)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown plan lacks %q", want)
		}
	}
	if strings.Contains(md, "| Lock screen |") {
		t.Error("the markdown plan previews the template on the lock screen")
	}
	for _, want := range []string{`"locales": {`, `"held_by_reason": {`, `"not in user_data": 1`, `"samples": [`, `"unfilled": 1`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON plan lacks %s", want)
		}
	}
}
