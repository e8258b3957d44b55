package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const usersCSV = "user_id,first_name,locale,city\n" +
	"u1,ann,fr-CA,Montréal\n" +
	"u2,bob,fr,Paris\n" +
	"u3,carla,de_de,Berlin\n" +
	"u4,dan,,Leeds\n" +
	"u5,,en,York\n"

func personalFiles(extra string) map[string]string {
	return map[string]string{
		"users.csv": usersCSV,
		"main.hcl": svc + `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}
variable "greeting" { default = "Hi" }
` + extra,
	}
}

func TestRenderPerPerson(t *testing.T) {
	cfg := mustLoad(t, personalFiles(`
notification "n" {
  user_ids = ["u1", "u2", "u3", "u4", "u5", "u9"]
  title    = "${var.greeting} ${ title( user.first_name ) }"
  body     = "Your order ships to ${user.city}"
  tag      = "order-${user.id}"
  translation "fr" {
    title = "Salut ${title(user.first_name)}"
  }
  translation "fr-CA" {
    body = "Votre commande part pour ${user.city}"
  }
}
`), Options{})
	m := findMessage(t, cfg, "notification.n")
	if m.Template == nil {
		t.Fatal("no template")
	}
	if got, want := m.Content.Title, "Hi ${title(user.first_name)}"; got != want {
		t.Errorf("canonical title = %q, want %q", got, want)
	}
	if got, want := m.Content.Tag, "order-${user.id}"; got != want {
		t.Errorf("canonical tag = %q, want %q", got, want)
	}
	if !strings.Contains(m.Content.Template, `translation "fr-CA"`) {
		t.Errorf("template %q lacks the translations", m.Content.Template)
	}
	tests := []struct {
		id, title, body, tr, held string
	}{
		{"u1", "Salut Ann", "Votre commande part pour Montréal", "fr-CA", ""},
		{"u2", "Salut Bob", "Your order ships to Paris", "fr", ""},
		{"u3", "Hi Carla", "Your order ships to Berlin", "", ""},
		{"u4", "Hi Dan", "Your order ships to Leeds", "", ""},
		{"u5", "Hi ", "Your order ships to York", "", ""},
		{"u9", "", "", "", "not in user_data"},
	}
	for _, tt := range tests {
		r, err := m.Template.Render(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Held != tt.held || r.Content.Title != tt.title || r.Content.Body != tt.body || r.Translation != tt.tr {
			t.Errorf("%s: got %+v", tt.id, r)
		}
		if tt.held == "" && r.Content.Tag != "order-"+tt.id {
			t.Errorf("%s: tag %q", tt.id, r.Content.Tag)
		}
	}
}

func TestCanonicalTemplateIgnoresFormatting(t *testing.T) {
	a := findMessage(t, mustLoad(t, personalFiles(`
notification "n" {
  user_ids = ["u1"]
  title    = "Hi ${title(user.first_name)}"
  body     = "x"
}`), Options{}), "notification.n")
	b := findMessage(t, mustLoad(t, personalFiles(`
notification "n" {
  user_ids = ["u1"]
  # a comment
  title    = "${var.greeting} ${ title( (user.first_name) ) }"
  body     = "x"
}`), Options{}), "notification.n")
	if a.Content != b.Content {
		t.Errorf("contents differ:\n%+v\n%+v", a.Content, b.Content)
	}
	if a.Shape != b.Shape {
		t.Errorf("shapes differ")
	}
	c := findMessage(t, mustLoad(t, personalFiles(`
notification "n" {
  user_ids = ["u1"]
  title    = "Hello ${title(user.first_name)}"
  body     = "x"
}`), Options{}), "notification.n")
	if a.Content == c.Content || a.Shape == c.Shape {
		t.Errorf("an edited template has the same content or shape")
	}
}

func TestTemplateDiagnostics(t *testing.T) {
	tests := []struct {
		name, hcl, want string
	}{
		{"topics", `
topic "t" {}
notification "n" {
  topics = ["t"]
  title  = "Hi ${user.first_name}"
  body   = "x"
}`, "Invalid reference to user"},
		{"device in users", `
notification "n" {
  user_ids = ["u1"]
  title    = "Hi ${device.model}"
  body     = "x"
}`, "Invalid reference to device"},
		{"unknown function", `
notification "n" {
  user_ids = ["u1"]
  title    = "Hi ${nope(user.first_name)}"
  body     = "x"
}`, "Call to unknown function"},
		{"on_missing", `
notification "n" {
  user_ids   = ["u1"]
  title      = "Hi ${user.first_name}"
  body       = "x"
  on_missing = "ignore"
}`, "Invalid on_missing"},
		{"required", `
locales {
  required = ["fr", "de"]
  default  = "en"
}
notification "n" {
  user_ids = ["u1"]
  title    = "Hi"
  body     = "x"
  translation "fr" { title = "Salut" }
}`, `no translation for "de"`},
		{"bad locale", `
notification "n" {
  user_ids = ["u1"]
  title    = "Hi"
  body     = "x"
  translation "f r" { title = "Salut" }
}`, "Invalid locale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := load(t, personalFiles(tt.hcl), Options{})
			if !strings.Contains(diagText(diags), tt.want) {
				t.Errorf("diagnostics %s lack %q", diagText(diags), tt.want)
			}
		})
	}
}

func diagText(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}

// TestFastFillMatchesEvaluator: the compiled templates of a CSV table
// give, person by person, exactly what the language's evaluator gives:
// texts, translations, locales and reasons.
func TestFastFillMatchesEvaluator(t *testing.T) {
	csv := "user_id,first_name,locale,city\n" +
		"u1,ann,fr-CA,Montréal\n" +
		"u2,e\u0301mile,fr,Paris\n" + // an NFD é: cty normalises it
		"u3,,de_de,Berlin\n" +
		"u4,dan,,Leeds\n" +
		"u5,BOB,EN-gb,\n"
	files := map[string]string{"users.csv": csv, "main.hcl": svc + `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}
variable "greeting" { default = "Hi" }
locals { shop = "https://shop.example.com" }
notification "n" {
  user_ids    = ["u1"]
  title       = "${var.greeting} ${user.first_name == "" ? "there" : title(user.first_name)}!"
  body        = "${upper(try(user.nickname, user.city))} ${trimspace(" x ")}"
  open_to_url = "${local.shop}/o/${user.id}"
  tag         = user.city != "" ? "t-${lower(user.city)}" : "t-none"
  translation "fr" {
    title = "Salut ${try(title(user.first_name), "toi")}"
  }
  translation "de" {
    body = "Nach ${user.city}"
  }
}
`}
	m := findMessage(t, mustLoad(t, files, Options{}), "notification.n")
	if m.Template.fast == nil {
		t.Fatal("the template was not compiled")
	}
	fast := m.Template.fast
	for _, id := range []string{"u1", "u2", "u3", "u4", "u5", "u9"} {
		m.Template.fast = fast
		got, err := m.Template.Render(id)
		if err != nil {
			t.Fatal(err)
		}
		m.Template.fast = nil
		want, err := m.Template.Render(id)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: compiled %+v, evaluator %+v", id, got, want)
		}
	}
	m.Template.fast = fast
	for _, id := range []string{"u1", "u2", "u4", "u5"} {
		if _, ok := m.Template.renderFast(id); !ok {
			t.Errorf("%s was filled in by the evaluator, not the compiled template", id)
		}
	}
}

// TestDeviceDataAndCampaignBlocks: device targets read device.*; a
// campaign's data and locales win over the top level's; a campaign's
// translation serves its notifications that have none of that locale, a
// variant's own comes first.
func TestDeviceDataAndCampaignBlocks(t *testing.T) {
	files := map[string]string{
		"users.csv":   usersCSV,
		"devices.csv": "device_id,model,lang\nd1,Pixel,fr\nd2,iPhone,de\n",
		"main.hcl": svc + `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}
device_data {
  attributes = { for r in csvdecode(file("devices.csv")) : r.device_id => r }
  locale     = "lang"
}
notification "d" {
  device_ids = ["d1", "d2"]
  title      = "Your ${device.model}"
  body       = "x"
  translation "fr" { title = "Votre ${device.model}" }
}
campaign "c" {
  user_data {
    attributes = { u1 = { first_name = "Camille", locale = "de" } }
    locale     = "locale"
  }
  translation "de" {
    title = "Hallo ${user.first_name}"
  }
  notification "n" {
    user_ids = ["u1"]
    title    = "Hi ${user.first_name}"
    body     = "x"
    variant "a" {
      weight = 1
      translation "de" { title = "Servus ${user.first_name}" }
    }
    variant "b" {
      weight = 1
    }
  }
}
`}
	cfg := mustLoad(t, files, Options{})
	d := findMessage(t, cfg, "notification.d")
	for id, want := range map[string]string{"d1": "Votre Pixel", "d2": "Your iPhone"} {
		if r, err := d.Template.Render(id); err != nil || r.Content.Title != want {
			t.Errorf("device %s: %+v, %v; want %q", id, r, err, want)
		}
	}
	n := findMessage(t, cfg, "campaign.c.notification.n")
	for _, v := range n.Variants {
		r, err := v.Template.Render("u1")
		want := map[string]string{"a": "Servus Camille", "b": "Hallo Camille"}[v.Name]
		if err != nil || r.Content.Title != want || r.Translation != "de" {
			t.Errorf("variant %s: %+v, %v; want %q", v.Name, r, err, want)
		}
	}
}

// TestTemplateShapeAndSecrets: the shape holds the templates and not the
// people's data; a template that holds a secret is a diagnostic, and a
// text filled in with one refuses to render.
func TestTemplateShapeAndSecrets(t *testing.T) {
	const key = "k-test-CANARY-0123456789"
	files := func(csv, title string) map[string]string {
		return map[string]string{"users.csv": csv, "main.hcl": `service {
  base_url    = "https://push.example.com/v1"
  api_key_env = "PF_KEY"
  environment = "test"
}
variable "k" { default = "" }
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
}
notification "n" {
  user_ids = ["u1", "u2"]
  title    = ` + title + `
  body     = "x"
}
`}
	}
	env := Options{Environ: []string{"PF_KEY=" + key}}
	a := findMessage(t, mustLoad(t, files("user_id,name\nu1,Ann\nu2,Bob\n", `"Hi ${user.name}"`), env), "notification.n")
	b := findMessage(t, mustLoad(t, files("user_id,name\nu1,Anne\nu2,Bob\n", `"Hi ${user.name}"`), env), "notification.n")
	if a.Shape != b.Shape || a.Content != b.Content {
		t.Error("a change in the people's data changed the shape or the identity")
	}
	_, diags := load(t, files("user_id,name\nu1,Ann\n", `"Hi ${user.name} ${var.k}"`), Options{Environ: append(env.Environ, "PUSHFORM_VAR_k="+key)})
	if !hasSecretDiag(diags, "The API key (PF_KEY) appears in title", 12) {
		t.Errorf("a template holding the key: %s", diagText(diags))
	}
	m := findMessage(t, mustLoad(t, files("user_id,name\nu1,Ann\nu2,"+key+"\n", `"Hi ${user.name}"`), env), "notification.n")
	if _, err := m.Template.Render("u1"); err != nil {
		t.Fatal(err)
	}
	_, err := m.Template.Render("u2")
	var le *LeakError
	if !errors.As(err, &le) || le.Person != "u2" || le.Field != "title" || strings.Contains(err.Error(), key) {
		t.Errorf("a text filled in with the key: %v", err)
	}
}
