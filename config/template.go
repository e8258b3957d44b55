package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"pushform/message"
)

// Per-person text. A notification's (or a variant's) title, body,
// open_to_url and tag may read user.* (or device.*, for device targets),
// and its translation blocks give other texts by locale: such a
// notification is personalised. Its Content then holds the template, in
// canonical form (canonical.go), which is its identity in the ledger and
// its part of the review shape; Message.Template fills it in for each
// person at plan time (Render).

// textFields are the fields of a content a template fills in, in the
// order a failure is reported.
var textFields = [...]string{"title", "body", "open_to_url", "tag"}

// translatedFields are those a translation block may give.
var translatedFields = textFields[:3]

// textField is one field of a template: an expression that reads a
// person, or a value that does not (known once: static).
type textField struct {
	expr   hcl.Expression // nil when static
	static string
	set    bool // given at all
	// canon is its canonical text (see canonical.go).
	canon string
	// reads are the attributes of the person root the expression reads
	// directly (user.first_name: "first_name"), for the reasons a person
	// is held.
	reads []string
}

// translation is a translation block as a template: its locale and the
// fields it gives (title, body, open_to_url).
type translation struct {
	locale string
	fields [3]textField
	pos    Pos
}

// Template fills in a personalised notification's text for each person.
// It is safe for concurrent use.
type Template struct {
	// Root is what the template reads a person as: RootUser or RootDevice.
	Root string
	// Data is the user_data or device_data in effect; nil when there is
	// none (a person then has only id).
	Data *PersonData
	// DefaultLocale is the locale of the notification's own text (the
	// locales block's default); "" when unsaid.
	DefaultLocale string
	// OnMissing is "skip" (a person the template fails for is held) or
	// "fail" (the plan fails).
	OnMissing string
	own       [4]textField
	// levels are the translations of the variant (when it is one), of
	// the notification and of its campaign, in that order: a person gets
	// the most specific match of their locale, each level in turn.
	levels [][]translation
	base   message.Content // silent_in_foreground, badge_count
	ctx    *hcl.EvalContext
	known  []knownSecret
	lift   func() // lifts the budget: rendering is the real work
	once   sync.Once
	// fast is the template compiled for CSV tables (fastfill.go); nil
	// when the evaluator fills every person in. locales and trCache
	// keep what it computes once per locale.
	fast    *fastTemplate
	locales localeCache
	trCache translationCache
}

// Rendering is what one person is sent, or why they are not.
type Rendering struct {
	// Content is the text filled in for the person.
	Content message.Content
	// Locale is the person's locale, normalised ("" for none), and
	// Translation the translation chosen for it ("" for the
	// notification's own text).
	Locale      string
	Translation string
	// Held says why the person is not sent anything (the template failed
	// for them); "" when Content is what they get.
	Held string
}

// LocaleKey is what the plan counts the person under: the translation
// chosen, the default locale for the notification's own text, else
// "default".
func (r Rendering) LocaleKey(t *Template) string {
	switch {
	case r.Translation != "":
		return r.Translation
	case t.DefaultLocale != "":
		return t.DefaultLocale
	}
	return "default"
}

// LeakError is a rendered text holding a known secret: nothing is sent.
type LeakError struct {
	Person, Field, What string
}

func (e *LeakError) Error() string {
	return fmt.Sprintf("the %s rendered for %s holds %s: nothing is sent; take the secret out of the data or the template", e.Field, e.Person, e.What)
}

// Render fills in the template for the person id. The error is a
// LeakError, or why the people's data cannot be read: a template that
// fails for the person holds them (Rendering.Held).
func (t *Template) Render(id string) (Rendering, error) {
	return t.render(id, "", false)
}

// RenderAs is Render with the translation of locale l chosen, whatever
// the person's own locale (a test send of one translation).
func (t *Template) RenderAs(id, l string) (Rendering, error) {
	return t.render(id, l, true)
}

// NeedsPerson reports whether the text a person of locale l gets reads
// the person (user.* or device.*): it cannot be filled in without one.
func (t *Template) NeedsPerson(l string) bool {
	fields := t.own
	t.translate(l, &fields)
	for _, f := range fields {
		if f.expr != nil {
			return true
		}
	}
	return false
}

// render is Render, with the translation of locale l when as is set.
func (t *Template) render(id, l string, as bool) (Rendering, error) {
	t.once.Do(func() {
		if t.lift != nil {
			t.lift()
		}
	})
	var r Rendering
	var row int
	hasRow := false
	if t.Data != nil {
		if err := t.Data.Ready(); err != nil {
			return r, err
		}
		if t.fast != nil && !as && t.Data.table.csv != nil {
			if fr, ok := t.renderFast(id); ok {
				return fr, t.leak(id, fr.Content)
			}
		}
		row, hasRow = t.Data.table.row(id)
	}
	attrs := map[string]cty.Value{}
	if hasRow {
		attrs = t.Data.table.attrs(row)
	}
	if t.Data != nil && t.Data.LocaleAttr != "" {
		if v, ok := attrs[t.Data.LocaleAttr]; ok && !v.IsNull() && v.Type() == cty.String {
			r.Locale, _ = NormalizeLocale(v.AsString())
		}
	}
	if as {
		r.Locale = l
	}
	attrs["id"] = cty.StringVal(id)
	if r.Locale != "" {
		attrs["locale"] = cty.StringVal(r.Locale)
	} else {
		attrs["locale"] = cty.NullVal(cty.String)
	}
	person := cty.ObjectVal(attrs)
	fields := t.own
	r.Translation = t.translate(r.Locale, &fields)
	ctx := t.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{t.Root: person}
	c := t.base
	dst := [4]*string{&c.Title, &c.Body, &c.OpenToURL, &c.Tag}
	for i, f := range fields {
		if !f.set {
			continue
		}
		s := f.static
		if f.expr != nil {
			v, diags := f.expr.Value(ctx)
			if diags.HasErrors() {
				r.Held = t.reason(textFields[i], f, diags, attrs, hasRow)
				return r, nil
			}
			if v, _ = v.Unmark(); v.IsNull() {
				r.Held = "empty " + textFields[i]
				return r, nil
			}
			sv, err := convert.Convert(v, cty.String)
			if err != nil || !sv.IsKnown() {
				r.Held = fmt.Sprintf("%s is %s, not text", textFields[i], v.Type().FriendlyName())
				return r, nil
			}
			s = sv.AsString()
		}
		if why := checkRendered(textFields[i], s); why != "" {
			r.Held = why
			return r, nil
		}
		*dst[i] = s
	}
	r.Content = c
	return r, t.leak(id, c)
}

// leak reports a known secret in the text c filled in for id.
func (t *Template) leak(id string, c message.Content) error {
	for i, s := range [4]string{c.Title, c.Body, c.OpenToURL, c.Tag} {
		for _, k := range t.known {
			if k.red.Contains(s) {
				return &LeakError{Person: id, Field: textFields[i], What: k.what}
			}
		}
	}
	return nil
}

// checkRendered says why a field's rendered text cannot be sent; "" when
// it can.
func checkRendered(field, s string) string {
	switch field {
	case "title", "body", "tag":
		if strings.TrimSpace(s) == "" {
			return "empty " + field
		}
	case "open_to_url":
		if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return "invalid open_to_url"
		}
	}
	return ""
}

// reason says why field failed for a person: "missing user.first_name"
// (or "not in user_data" for a person the data does not list at all),
// "user.first_name is null", or what the evaluation said.
func (t *Template) reason(field string, f textField, diags hcl.Diagnostics, attrs map[string]cty.Value, hasRow bool) string {
	for _, name := range f.reads {
		v, ok := attrs[name]
		switch {
		case !ok && !hasRow && t.Data != nil:
			return "not in " + personRoots[t.Root]
		case !ok:
			return "missing " + t.Root + "." + name
		case v.IsNull():
			return t.Root + "." + name + " is null"
		}
	}
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			why := d.Summary
			if d.Detail != "" {
				why += ": " + d.Detail
			}
			if len(why) > 160 {
				why = why[:157] + "..."
			}
			return field + ": " + why
		}
	}
	return field + " failed"
}

// translate puts in fields the translated text a person of locale l
// gets: each field from the most specific translation of their locale
// that gives it (fr-CA, then fr), each level (variant, notification,
// campaign) in turn; none past the default locale, whose text is the
// notification's own. It returns the most specific translation used; ""
// for none.
func (t *Template) translate(l string, fields *[4]textField) string {
	used := ""
	var done [3]bool
	for _, c := range LocaleChain(l) {
		if c == t.DefaultLocale {
			break
		}
		for _, lv := range t.levels {
			for _, tr := range lv {
				if tr.locale != c {
					continue
				}
				for i, f := range tr.fields {
					if f.set && !done[i] {
						fields[i], done[i] = f, true
						if used == "" {
							used = c
						}
					}
				}
			}
		}
	}
	return used
}

// Translations returns the locales the template has a translation for,
// sorted.
func (t *Template) Translations() []string {
	var out []string
	for _, lv := range t.levels {
		for _, tr := range lv {
			if !slices.Contains(out, tr.locale) {
				out = append(out, tr.locale)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Samples is how many rendered texts a plan shows of the template.
func (t *Template) Samples() int {
	if t == nil || t.Data == nil {
		return 0
	}
	return t.Data.Samples
}

// canonicalTranslations writes the translations of a template (the
// effective one of each locale), sorted by locale, after its root: the
// rest of its identity.
func canonicalTranslations(root string, levels [][]translation) string {
	var b strings.Builder
	b.WriteString(root)
	seen := map[string]bool{}
	var all []translation
	for _, lv := range levels {
		for _, tr := range lv {
			if !seen[tr.locale] {
				seen[tr.locale] = true
				all = append(all, tr)
			}
		}
	}
	slices.SortFunc(all, func(a, b translation) int { return strings.Compare(a.locale, b.locale) })
	for _, tr := range all {
		b.WriteString("\ntranslation " + strconv.Quote(tr.locale) + " {")
		for i, f := range tr.fields {
			if f.set {
				b.WriteString(" " + translatedFields[i] + " = " + strconv.Quote(f.canon))
			}
		}
		b.WriteString(" }")
	}
	return b.String()
}
