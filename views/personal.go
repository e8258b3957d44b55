package views

import (
	"fmt"
	"slices"
	"strings"

	"pushform/message"
	"pushform/planner"
	"pushform/termtext"
)

// What plans show of a personalised notification: its template (the
// content's fields, and a line per translation), how many people get each
// locale, who is held and why, and, only when the data block asks for
// them, a few texts filled in.

// personalLines are the lines under a personalised change: the locales
// its targets get, and the reasons people are held (with a few ids).
func personalLines(c *planner.Change) []string {
	var out []string
	if len(c.Locales) > 0 {
		out = append(out, "locales: "+countsLine(c.Locales))
	}
	for _, why := range c.HeldReasons() {
		line := fmt.Sprintf("held, %s: %s", why, Count(c.HeldByReason[why]))
		if ids := c.HeldIDs[why]; len(ids) > 0 {
			line += " (" + strings.Join(cleanAll(ids), ", ")
			if len(ids) < c.HeldByReason[why] {
				line += ", ..."
			}
			line += ")"
		}
		out = append(out, line)
	}
	return out
}

// sampleLines are the samples of a personalised change, for the human
// plan (the markdown comment has them in a table).
func sampleLines(c *planner.Change) []string {
	if c.Personal == nil {
		return nil
	}
	var out []string
	for _, s := range c.Personal.Samples {
		out = append(out, fmt.Sprintf("sample %s (%s): %s / %s", termtext.Clean(s.Target), termtext.Clean(s.Locale), termtext.Quote(s.Text.Title), termtext.Quote(s.Text.Body)))
	}
	return out
}

// countsLine writes counts by key, most first: "fr 3, default 2".
func countsLine(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = termtext.Clean(k) + " " + Count(m[k])
	}
	return strings.Join(parts, ", ")
}

func cleanAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = termtext.Clean(x)
	}
	return out
}

// translationFields are the translations of a template, as fields named
// `translation "fr"` with what each gives: the lines of Content.Template
// after its first (see config.canonicalTranslations).
func translationFields(c message.Content) []textField {
	if !c.Personal() {
		return nil
	}
	lines := strings.Split(c.Template, "\n")
	var out []textField
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, " {")
		if !ok {
			continue
		}
		out = append(out, textField{name, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "}"))})
	}
	return out
}

// translationDiff is the translations that differ between two contents,
// by name: old and new values ("" when absent).
func translationDiff(old, new message.Content) (names []string, olds, news map[string]string) {
	olds, news = map[string]string{}, map[string]string{}
	for _, f := range translationFields(old) {
		olds[f.name] = f.value
		names = append(names, f.name)
	}
	for _, f := range translationFields(new) {
		news[f.name] = f.value
		if _, ok := olds[f.name]; !ok {
			names = append(names, f.name)
		}
	}
	slices.Sort(names)
	names = slices.DeleteFunc(names, func(n string) bool { return olds[n] == news[n] })
	return names, olds, news
}

// samplePreview shows the samples of a personalised change as the
// strictest lock screen cuts them, in a table of the markdown comment.
func samplePreview(c *planner.Change) string {
	if c.Personal == nil || len(c.Personal.Samples) == 0 {
		return ""
	}
	title, body := lockScreens[0].title, lockScreens[0].body
	for _, ls := range lockScreens[1:] {
		title, body = min(title, ls.title), min(body, ls.body)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| Person | Locale | Title | Body |\n|---|---|---|---|\n")
	for _, s := range c.Personal.Samples {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(s.Target), md(s.Locale), md(cutAt(s.Text.Title, title)), md(cutAt(s.Text.Body, body)))
	}
	fmt.Fprintf(&b, "\nSamples of the texts filled in per person, cut where the strictest lock screen cuts them (title %d, body %d characters).\n", title, body)
	return b.String()
}
