package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pushform/state"
)

// personalUsers are 30 users of guardsSeed in five locales: g0005 is
// fr-CA (no fr-CA translation: fr), g0029 Italian (no translation: the
// default text). g0030 has no row, g0031 a row without first_name.
func personalUsers() (csv string, locales map[string]string, names map[string]string) {
	locales, names = map[string]string{}, map[string]string{}
	var b strings.Builder
	b.WriteString("user_id,first_name,locale\n")
	cycle := []string{"en", "fr", "de", "es"}
	for i := range 30 {
		id := fmt.Sprintf("g%04d", i)
		l := cycle[i%4]
		switch i {
		case 5:
			l = "fr-CA"
		case 29:
			l = "it"
		}
		name := fmt.Sprintf("name%d", i)
		if i == 7 {
			name = "zoe"
		}
		locales[id], names[id] = l, name
		fmt.Fprintf(&b, "%s,%s,%s\n", id, name, l)
	}
	return b.String(), locales, names
}

const personalCampaign = `
locals {
  extra = { g0031 = { locale = "en" } }
}
user_data {
  attributes = merge({ for r in csvdecode(file("users.csv")) : r.user_id => r }, local.extra)
  locale     = "locale"
}
locales {
  required = ["en", "fr", "de", "es"]
  default  = "en"
}
notification "shipped" {
  user_ids = [for i in range(32) : format("g%%04d", i)]
  title    = "%s ${title(user.first_name)}"
  body     = "Your order shipped"
  %s
  translation "fr" {
    title = "Bonjour ${title(user.first_name)}"
    body  = "Votre commande est partie"
  }
  translation "de" {
    title = "Hallo ${title(user.first_name)}"
    body  = "Ihre Bestellung ist unterwegs"
  }
  translation "es" {
    title = "Hola ${title(user.first_name)}"
    body  = "Tu pedido ha salido"
  }
}
`

// wantText is the title and body user id should see, greeted in English
// by greeting.
func wantText(greeting, locale, name string) (string, string) {
	name = strings.ToUpper(name[:1]) + name[1:]
	switch strings.SplitN(locale, "-", 2)[0] {
	case "fr":
		return "Bonjour " + name, "Votre commande est partie"
	case "de":
		return "Hallo " + name, "Ihre Bestellung ist unterwegs"
	case "es":
		return "Hola " + name, "Tu pedido ha salido"
	}
	return greeting + " " + name, "Your order shipped"
}

// TestPersonalContent: 30 users in five locales each get their own text
// from a CSV (fr-CA falls back to fr, Italian to the default); two who
// cannot be filled in are held with the reason and get nothing; render
// shows what each device got; a fixed typo sends nothing; a template edit
// under a tag replaces, without one it is warned; test-send sends what a
// person gets.
func TestPersonalContent(t *testing.T) {
	sb := startSandbox(t, guardsSeed, "--quiet")
	csv, locales, names := personalUsers()
	w := newWorkspace(t, sb, fmt.Sprintf(personalCampaign, "Hi", `tag      = "shipped"`))
	writeCSV := func(s string) {
		if err := os.WriteFile(filepath.Join(w.dir, "users.csv"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCSV(csv)

	plan := w.mustRun(0, "plan").stdout
	for _, want := range []string{"locales: en 9, de 7, es 7, fr 7", "held, missing user.first_name: 1 (g0031)", "held, not in user_data: 1 (g0030)"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	w.apply("--auto-approve")
	check := func(greeting string) {
		t.Helper()
		for i := range 32 {
			id := fmt.Sprintf("g%04d", i)
			d := sb.device(fmt.Sprintf("gd%04d", i))
			if i >= 30 {
				if d.Received != 0 {
					t.Errorf("%s is held but its device received %+v", id, d.Inbox)
				}
				continue
			}
			title, body := wantText(greeting, locales[id], names[id])
			if len(d.Inbox) != 1 || d.Inbox[0].Title != title || d.Inbox[0].Body != body {
				t.Errorf("%s (%s): device shows %+v, want %q / %q", id, locales[id], d.Inbox, title, body)
			}
		}
	}
	check("Hi")
	st := w.readState()
	for id, why := range map[string]string{"g0030": "not in user_data", "g0031": "missing user.first_name"} {
		if r := st.Messages["notification.shipped"].Targets[id]; r == nil || r.Outcome != state.Unfilled || r.Reason != why {
			t.Errorf("%s recorded %+v, want held: %s", id, r, why)
		}
	}
	if h := w.mustRun(0, "history", "--user", "g0031").stdout; !strings.Contains(h, "held (text not filled in: missing user.first_name)") {
		t.Errorf("history of a held user:\n%s", h)
	}
	if h := w.mustRun(0, "history", "--user", "g0005").stdout; !strings.Contains(h, `"Bonjour Name5" (fr)`) {
		t.Errorf("history of g0005 does not show the text it got:\n%s", h)
	}

	// render shows what each device got, and why a person is held.
	var doc struct {
		Renders []struct {
			Target      string  `json:"target"`
			Translation *string `json:"translation"`
			Held        *string `json:"held"`
			Text        *struct{ Title, Body string }
		} `json:"renders"`
	}
	r := w.mustRun(0, "render", "notification.shipped", "--user", "g0005", "--user", "g0029", "--user", "g0031", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Renders) != 3 {
		t.Fatalf("render --json: %v\n%s", err, r.stdout)
	}
	for i, dev := range []string{"gd0005", "gd0029"} {
		got, d := doc.Renders[i], sb.device(dev)
		if got.Text == nil || got.Text.Title != d.Inbox[0].Title || got.Text.Body != d.Inbox[0].Body {
			t.Errorf("render of %s: %+v; its device got %+v", got.Target, got.Text, d.Inbox)
		}
	}
	if tr := doc.Renders[0].Translation; tr == nil || *tr != "fr" {
		t.Errorf("g0005 (fr-CA) translation %v, want fr", tr)
	}
	if held := doc.Renders[2].Held; held == nil || *held != "missing user.first_name" || doc.Renders[2].Text != nil {
		t.Errorf("render of a held user: %+v", doc.Renders[2])
	}
	if r := w.mustRun(0, "render", "notification.shipped", "--user", "g0031").stdout; !strings.Contains(r, "held: missing user.first_name") {
		t.Errorf("render of a held user:\n%s", r)
	}

	// A typo fixed in the data sends nothing again.
	before := sb.stats()
	writeCSV(strings.Replace(csv, "g0007,zoe,", "g0007,zoé,", 1))
	w.mustRun(0, "plan", "--detailed-exitcode")
	w.apply("--auto-approve")
	if after := sb.stats(); after.SendRequests != before.SendRequests {
		t.Errorf("a data change sent %d requests", after.SendRequests-before.SendRequests)
	}

	// The template edited under its tag: a replace on every device.
	w.write(fmt.Sprintf(personalCampaign, "Hello", `tag      = "shipped"`), sb)
	plan = w.mustRun(2, "plan", "--detailed-exitcode").stdout
	if !strings.Contains(plan, "will be replaced on devices") || !strings.Contains(plan, `"[-Hi-]{+Hello+} ${title(user.first_name)}"`) {
		t.Errorf("template edit with a tag:\n%s", plan)
	}
	w.apply("--auto-approve")
	names["g0007"] = "zoé"
	check("Hello")

	// Edited again without a tag: sent as a second notification, warned.
	w.write(fmt.Sprintf(personalCampaign, "Hey", ""), sb)
	plan = w.mustRun(2, "plan", "--detailed-exitcode").stdout
	if !strings.Contains(plan, "was removed") || !strings.Contains(plan, "will show both") {
		t.Errorf("template edit without a tag is not warned:\n%s", plan)
	}

	// test-send: what one person gets, or one translation of it.
	w.mustRun(0, "test-send", "notification.shipped", "--device", "gd0100", "--as-user", "g0005")
	if d := sb.device("gd0100"); len(d.Inbox) != 1 || d.Inbox[0].Title != "Bonjour Name5" {
		t.Errorf("test-send --as-user g0005: %+v", d.Inbox)
	}
	w.mustRun(0, "test-send", "notification.shipped", "--device", "gd0101", "--as-user", "g0005", "--locale", "de")
	if d := sb.device("gd0101"); len(d.Inbox) != 1 || d.Inbox[0].Title != "Hallo Name5" {
		t.Errorf("test-send --as-user g0005 --locale de: %+v", d.Inbox)
	}
	r = w.run("test-send", "notification.shipped", "--device", "gd0102", "--locale", "de")
	if r.code != 1 || !strings.Contains(r.stderr, "--as-user") || sb.device("gd0102").Received != 0 {
		t.Errorf("test-send --locale of a template that reads a person: exit %d\n%s", r.code, r.stderr)
	}
}
