package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Translations: translation "fr" { title = ... body = ... } in a
// notification, a variant or a campaign gives the text of people whose
// locale it matches best (fr-CA, then fr); the fields it leaves out are
// the notification's (or variant's) own.

var translationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "title"},
		{Name: "body"},
		{Name: "open_to_url"},
	},
}

// translationBlock is a decoded translation block.
type translationBlock struct {
	locale string // normalised
	block  *hcl.Block
	attrs  hcl.Attributes
}

// decodeTranslations decodes the translation blocks of blocks, reporting
// invalid and repeated locales.
func decodeTranslations(blocks hcl.Blocks) ([]*translationBlock, hcl.Diagnostics) {
	var out []*translationBlock
	var diags hcl.Diagnostics
	seen := map[string]*hcl.Block{}
	for _, b := range blocks {
		if b.Type != "translation" {
			continue
		}
		l, ok := NormalizeLocale(b.Labels[0])
		if !ok {
			diags = append(diags, errDiag("Invalid locale",
				fmt.Sprintf("A translation is labelled with a BCP 47 locale tag such as \"fr\" or \"fr-CA\"; got %q.", b.Labels[0]), b.LabelRanges[0].Ptr()))
			continue
		}
		if first, dup := seen[l]; dup {
			diags = append(diags, errDiag("Duplicate translation",
				fmt.Sprintf("There is one translation %q here; the first is at %s.", l, rangePos(first.DefRange)), b.LabelRanges[0].Ptr()))
			continue
		}
		seen[l] = b
		content, d := b.Body.Content(translationSchema)
		diags = append(diags, d...)
		if len(content.Attributes) == 0 {
			diags = append(diags, errDiag("Empty translation",
				fmt.Sprintf("translation %q gives no text: set title, body or open_to_url.", l), b.DefRange.Ptr()))
			continue
		}
		out = append(out, &translationBlock{locale: l, block: b, attrs: content.Attributes})
	}
	return out, diags
}

// templateInput is what a notification's or a variant's template is made
// of: its text attributes (a variant's own, else the notification's) and
// the translation blocks of each level, most specific first.
type templateInput struct {
	what   string // "notification.x", "variant \"a\" of notification.x": for diagnostics
	decl   hcl.Range
	attrs  map[string]*hcl.Attribute // title, body, open_to_url, tag
	levels [][]*translationBlock
}

// templateEnv is what every template of a Load shares.
type templateEnv struct {
	known []knownSecret
	lift  func()
	reads personReads
}

// personal reports whether in makes a template: a text attribute reads a
// person, or there are translations.
func (in templateInput) personal(reads personReads) bool {
	for _, a := range in.attrs {
		if a != nil && len(reads.of(a.Expr)) > 0 {
			return true
		}
	}
	for _, lv := range in.levels {
		if len(lv) > 0 {
			return true
		}
	}
	return false
}

// rootFor is the person root a target kind's templates read; "" for
// topics.
func rootFor(k TargetKind) string {
	switch k {
	case TargetUsers:
		return RootUser
	case TargetDevices:
		return RootDevice
	}
	return ""
}

// buildTemplate makes the template of in for message m (its targets and
// content decoded), in ctx; content is the content it gives m: its
// canonical templates. nil when in is not personal.
func buildTemplate(m *Message, in templateInput, ctx *hcl.EvalContext, ps personSettings, onMissing string, env *templateEnv) (*Template, *Content, hcl.Diagnostics) {
	if !in.personal(env.reads) || m.Targets.Kind == "" {
		return nil, nil, nil
	}
	var diags hcl.Diagnostics
	root := rootFor(m.Targets.Kind)
	check := func(a *hcl.Attribute) bool {
		for _, r := range env.reads.of(a.Expr) {
			if r == root {
				continue
			}
			detail := fmt.Sprintf("%s.* is read by notifications to %s; %s addresses %s.", r, map[string]string{RootUser: "user_ids", RootDevice: "device_ids"}[r], in.what, m.Targets.Kind)
			if root == "" {
				detail = fmt.Sprintf("%s addresses topics, whose subscribers pushform knows nothing of: its text is the same for everyone, so it cannot read %s.*.", in.what, r)
			}
			diags = append(diags, errDiag("Invalid reference to "+r, detail, a.Expr.Range().Ptr()))
			return false
		}
		return true
	}
	if root == "" {
		for _, a := range in.attrs {
			if a != nil {
				check(a)
			}
		}
		for _, lv := range in.levels {
			if len(lv) > 0 {
				diags = append(diags, errDiag("Translation of a topics notification",
					fmt.Sprintf("%s addresses topics, whose subscribers pushform knows nothing of, so no translation would ever be chosen: send one notification per locale's topic instead.", in.what), lv[0].block.DefRange.Ptr()))
				break
			}
		}
		return nil, nil, diags
	}
	t := &Template{Root: root, Data: ps.data(root), OnMissing: onMissing, base: m.Content, ctx: ctx, known: env.known, lift: env.lift}
	if ps.locales != nil {
		t.DefaultLocale = ps.locales.Default
	}
	// Person roots are unknown while the template is checked.
	tctx := ctx.NewChild()
	tctx.Variables = map[string]cty.Value{RootUser: cty.DynamicVal, RootDevice: cty.DynamicVal}
	field := func(a *hcl.Attribute) (textField, bool) {
		if a == nil {
			return textField{}, true
		}
		if !check(a) {
			return textField{}, false
		}
		f := textField{set: true}
		if len(env.reads.of(a.Expr)) == 0 {
			v, set, d := evalKnownString(a, ctx)
			diags = append(diags, d...)
			if !set {
				return textField{}, false
			}
			f.static = v
			var b strings.Builder
			writeTemplateText(&b, v, false)
			f.canon = b.String()
			return f, true
		}
		if _, d := evalAttr(a, tctx, cty.String); d.HasErrors() {
			diags = append(diags, d...)
			return textField{}, false
		}
		canon, d := canonicalTemplate(a.Expr, ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			return textField{}, false
		}
		f.expr, f.canon, f.reads = a.Expr, canon, readsOf(a.Expr, root)
		return f, true
	}
	ok := true
	for i, name := range textFields {
		f, good := field(in.attrs[name])
		t.own[i], ok = f, ok && good
	}
	for _, lv := range in.levels {
		var trs []translation
		for _, tb := range lv {
			tr := translation{locale: tb.locale, pos: posOf(tb.block.DefRange)}
			for i, name := range translatedFields {
				f, good := field(tb.attrs[name])
				tr.fields[i], ok = f, ok && good
			}
			trs = append(trs, tr)
		}
		t.levels = append(t.levels, trs)
	}
	if !ok {
		return nil, nil, diags
	}
	c := m.Content
	c.Title, c.Body, c.OpenToURL, c.Tag = t.own[0].canon, t.own[1].canon, t.own[2].canon, t.own[3].canon
	c.Template = canonicalTranslations(root, t.levels)
	t.base = m.Content
	t.base.Template = ""
	t.fast = compileTemplate(t)
	if t.Data == nil && len(t.Translations()) > 0 {
		diags = append(diags, warnDiag("Translations without locales",
			fmt.Sprintf("%s has translations, but no %s block says each %s's locale: everyone gets its own text.", in.what, personRoots[root], root), in.decl.Ptr()))
	}
	return t, &c, diags
}

// readsOf returns the attributes of root expr reads directly, in order.
func readsOf(expr hcl.Expression, root string) []string {
	var out []string
	for _, tr := range expr.Variables() {
		if tr.RootName() != root || len(tr) < 2 {
			continue
		}
		var name string
		switch s := tr[1].(type) {
		case hcl.TraverseAttr:
			name = s.Name
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
				name = s.Key.AsString()
			}
		}
		if name != "" && name != "id" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// checkRequiredLocales reports the locales required that a person of
// would not get a translation for (nor the default locale's own text).
func checkRequiredLocales(levels [][]*translationBlock, l *Locales, what string, decl hcl.Range) hcl.Diagnostics {
	if l == nil || len(l.Required) == 0 {
		return nil
	}
	def := l.Default
	var missing []string
	for _, req := range l.Required {
		covered := false
		for _, c := range LocaleChain(req) {
			if c == def {
				covered = true
			}
			for _, lv := range levels {
				for _, tb := range lv {
					if tb.locale == c {
						covered = true
					}
				}
			}
		}
		if !covered {
			missing = append(missing, req)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return hcl.Diagnostics{errDiag("Missing translation",
		fmt.Sprintf("locales.required lists %s, and %s has no translation for %s: add translation %q { title = ... body = ... } (here, in the variant, or in its campaign).",
			strings.Join(quoteAll(l.Required), ", "), what, strings.Join(quoteAll(missing), ", "), missing[0]), decl.Ptr())}
}

// textContext is ctx with every person unknown when one of the text
// attributes of attrs reads one, so that they evaluate (to unknown) while
// the rest of the block is decoded; ctx itself otherwise.
func textContext(attrs hcl.Attributes, ctx *hcl.EvalContext, reads personReads) *hcl.EvalContext {
	for _, name := range textFields {
		if a, ok := attrs[name]; ok && len(reads.of(a.Expr)) > 0 {
			tctx := ctx.NewChild()
			tctx.Variables = map[string]cty.Value{RootUser: cty.DynamicVal, RootDevice: cty.DynamicVal}
			return tctx
		}
	}
	return ctx
}

// decodeTemplates makes the templates of a notification and of its
// variants (see buildTemplate), and checks its translations against the
// locales required.
func decodeTemplates(m *Message, mb *messageBlock, ctx *hcl.EvalContext, sc *scope) hcl.Diagnostics {
	if mb.kind != KindNotification {
		return nil
	}
	var diags hcl.Diagnostics
	onMissing := "skip"
	if a, ok := mb.content.Attributes["on_missing"]; ok {
		s, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		switch {
		case !set:
		case s == "skip" || s == "fail":
			onMissing = s
		default:
			diags = append(diags, errDiag("Invalid on_missing",
				fmt.Sprintf("on_missing says what happens when a person's text cannot be filled in (an attribute missing): \"skip\" holds that person, \"fail\" refuses the plan; got %s.", quoteValue(s)), a.Expr.Range().Ptr()))
		}
	}
	ps := sc.campaigns[mb.campaign].personSettings().over(sc.persons)
	var campaignTr []*translationBlock
	if cb := sc.campaignBlocks[mb.campaign]; cb != nil {
		campaignTr = cb.translations
	}
	attrs := map[string]*hcl.Attribute{}
	for _, name := range textFields {
		if a, ok := mb.content.Attributes[name]; ok {
			attrs[name] = a
		}
	}
	what := mb.address()
	in := templateInput{what: what, decl: mb.block.DefRange, attrs: attrs, levels: [][]*translationBlock{mb.translations, campaignTr}}
	t, content, d := buildTemplate(m, in, ctx, ps, onMissing, sc.env)
	diags = append(diags, d...)
	if t != nil {
		m.Template, m.Content = t, *content
	}
	check := m.Targets.Kind != TargetTopics && m.Targets.Kind != ""
	if check && len(mb.variants) == 0 {
		diags = append(diags, checkRequiredLocales(in.levels, ps.locales, what, mb.block.DefRange)...)
	}
	for i := range m.Variants {
		v := &m.Variants[i]
		var vb *variantBlock
		for _, b := range mb.variants {
			if b.block.Labels[0] == v.Name {
				vb = b
			}
		}
		if vb == nil {
			continue
		}
		vattrs := maps.Clone(attrs)
		for _, name := range translatedFields {
			if a, ok := vb.attrs[name]; ok {
				vattrs[name] = a
			}
		}
		vwhat := fmt.Sprintf("variant %q of %s", v.Name, what)
		vin := templateInput{what: vwhat, decl: vb.block.DefRange, attrs: vattrs,
			levels: [][]*translationBlock{vb.translations, mb.translations, campaignTr}}
		vm := *m
		vm.Content = v.Content
		vt, vc, d := buildTemplate(&vm, vin, ctx, ps, onMissing, sc.env)
		diags = append(diags, d...)
		if vt != nil {
			v.Template, v.Content = vt, *vc
		}
		if check {
			diags = append(diags, checkRequiredLocales(vin.levels, ps.locales, vwhat, vb.block.DefRange)...)
		}
	}
	return diags
}
