package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Per-person data: user_data and device_data say, per user or device id,
// the attributes templates read as user.* and device.* (see template.go),
// and which of them holds the person's locale; locales says which
// translations every notification must have. Each block is top level or
// in a campaign, whose own wins, as for time_zones.

var personDataSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "attributes", Required: true},
		{Name: "locale"},
		{Name: "samples"},
	},
}

var localesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "required"},
		{Name: "default"},
	},
}

// Person roots: what templates read a person's attributes as.
const (
	RootUser   = "user"
	RootDevice = "device"
)

// personRoots are the per-person roots, and the block each is read from.
var personRoots = map[string]string{RootUser: "user_data", RootDevice: "device_data"}

// MaxDataFileSize caps the CSV file a user_data or device_data block reads
// with the pattern csvdecode reads fastest (see peopleFromCSV): people
// are many more than the rows a for_each is written for.
const MaxDataFileSize = 512 << 20

// PersonData is a user_data or device_data block: each person's
// attributes, by user or device id.
type PersonData struct {
	// Root is what templates read it as: RootUser or RootDevice.
	Root string
	// LocaleAttr names the attribute that holds a person's locale (a BCP
	// 47 tag such as "fr-CA"); "" when none does.
	LocaleAttr string
	// Samples is how many rendered texts per address a plan shows (none
	// by default: real names in a pull request are personal data).
	Samples int
	Pos     Pos
	table   *peopleTable
}

// Len is how many people the block holds (their data read first).
func (d *PersonData) Len() int {
	if d == nil || d.table == nil || d.table.ready() != nil {
		return 0
	}
	return d.table.len()
}

// Ready reads the people's data, when it comes from a file not read yet,
// and returns why it cannot be.
func (d *PersonData) Ready() error {
	if d == nil {
		return nil
	}
	return d.table.ready()
}

// ReadDataAhead starts reading every user_data and device_data block's
// people in the background, for what a plan fills in later (Ready waits
// for the read): a plan that fetches the recipients list reads them
// meanwhile.
func (c *Config) ReadDataAhead() {
	for _, d := range c.personData() {
		go d.Ready() //nolint:errcheck // Ready returns the error again when asked
	}
}

// personData lists every user_data and device_data block.
func (c *Config) personData() []*PersonData {
	var out []*PersonData
	add := func(d *PersonData) {
		if d != nil {
			out = append(out, d)
		}
	}
	add(c.UserData)
	add(c.DeviceData)
	for _, name := range slices.Sorted(maps.Keys(c.Campaigns)) {
		add(c.Campaigns[name].UserData)
		add(c.Campaigns[name].DeviceData)
	}
	return out
}

// CheckData reads every user_data and device_data block's people, as a
// plan that fills a text in does, and reports what is wrong with them:
// validate calls it, where a plan that needs them fails.
func (c *Config) CheckData() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, d := range c.personData() {
		if err := d.Ready(); err != nil {
			diags = append(diags, errDiag("Invalid attributes", upperFirst(err.Error())+".", d.table.rng.Ptr()))
		}
	}
	return diags
}

// Locales is a locales block: the translations every notification must
// have, and the locale of the notifications' own text.
type Locales struct {
	// Required are the locales (normalised, see NormalizeLocale) every
	// notification must have a translation for; Default needs none.
	Required []string
	// Default is the locale of the notifications' own text; "" when
	// unsaid.
	Default string
	Pos     Pos
}

// personBlocks are the user_data, device_data and locales blocks of the
// top level or of a campaign: at most one of each.
type personBlocks struct {
	user, device, locales *hcl.Block
}

// add takes b when it is one of them, reporting a second one; where is
// "A configuration" or "A campaign".
func (pb *personBlocks) add(b *hcl.Block, where string) (bool, hcl.Diagnostics) {
	var slot **hcl.Block
	switch b.Type {
	case "user_data":
		slot = &pb.user
	case "device_data":
		slot = &pb.device
	case "locales":
		slot = &pb.locales
	default:
		return false, nil
	}
	if *slot != nil {
		return true, hcl.Diagnostics{duplicateSingle(where, b.Type+" block", *slot, b)}
	}
	*slot = b
	return true, nil
}

// personSettings are the evaluated blocks.
type personSettings struct {
	user, device *PersonData
	locales      *Locales
}

// eval evaluates the blocks present; dir is the configuration directory.
func (pb *personBlocks) eval(ctx *hcl.EvalContext, dir string) (personSettings, hcl.Diagnostics) {
	var ps personSettings
	var diags hcl.Diagnostics
	if pb.user != nil {
		var d hcl.Diagnostics
		ps.user, d = evalPersonData(pb.user, RootUser, ctx, dir)
		diags = append(diags, d...)
	}
	if pb.device != nil {
		var d hcl.Diagnostics
		ps.device, d = evalPersonData(pb.device, RootDevice, ctx, dir)
		diags = append(diags, d...)
	}
	if pb.locales != nil {
		var d hcl.Diagnostics
		ps.locales, d = evalLocales(pb.locales, ctx)
		diags = append(diags, d...)
	}
	return ps, diags
}

// over returns s with what ps sets in place: a campaign's blocks win over
// the top level's.
func (ps personSettings) over(s personSettings) personSettings {
	if ps.user != nil {
		s.user = ps.user
	}
	if ps.device != nil {
		s.device = ps.device
	}
	if ps.locales != nil {
		s.locales = ps.locales
	}
	return s
}

// personSettings are the campaign's own blocks.
func (c Campaign) personSettings() personSettings {
	return personSettings{user: c.UserData, device: c.DeviceData, locales: c.Locales}
}

// data returns the block templates read as root.
func (ps personSettings) data(root string) *PersonData {
	if root == RootDevice {
		return ps.device
	}
	return ps.user
}

func evalPersonData(b *hcl.Block, root string, ctx *hcl.EvalContext, dir string) (*PersonData, hcl.Diagnostics) {
	content, diags := b.Body.Content(personDataSchema)
	d := &PersonData{Root: root, Pos: posOf(b.DefRange), table: &peopleTable{}}
	if a, ok := content.Attributes["locale"]; ok {
		s, set, dd := evalKnownString(a, ctx)
		diags = append(diags, dd...)
		if set {
			if !hclsyntax.ValidIdentifier(s) {
				diags = append(diags, errDiag("Invalid locale",
					fmt.Sprintf("locale names the attribute that holds each %s's locale, such as \"locale\"; %s is not an attribute name.", root, quoteValue(s)), a.Expr.Range().Ptr()))
			} else {
				d.LocaleAttr = s
			}
		}
	}
	if a, ok := content.Attributes["samples"]; ok {
		n, set, dd := evalCount(a, ctx)
		diags = append(diags, dd...)
		if set {
			d.Samples = n
		}
	}
	if a, ok := content.Attributes["attributes"]; ok {
		t, dd := evalPeople(a, ctx, dir, root)
		diags = append(diags, dd...)
		if t != nil {
			d.table = t
		}
	}
	return d, diags
}

func evalLocales(b *hcl.Block, ctx *hcl.EvalContext) (*Locales, hcl.Diagnostics) {
	content, diags := b.Body.Content(localesSchema)
	l := &Locales{Pos: posOf(b.DefRange)}
	if a, ok := content.Attributes["default"]; ok {
		s, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			if n, ok := NormalizeLocale(s); ok {
				l.Default = n
			} else {
				diags = append(diags, badLocale("default", s, a.Expr.Range()))
			}
		}
	}
	if a, ok := content.Attributes["required"]; ok {
		v, set, d := evalKnown(a, ctx, cty.List(cty.String))
		diags = append(diags, d...)
		if set {
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				if ev.IsNull() {
					continue
				}
				n, ok := NormalizeLocale(ev.AsString())
				if !ok {
					diags = append(diags, badLocale("required", ev.AsString(), a.Expr.Range()))
					continue
				}
				if !slices.Contains(l.Required, n) {
					l.Required = append(l.Required, n)
				}
			}
		}
	}
	return l, diags
}

func badLocale(attr, s string, r hcl.Range) *hcl.Diagnostic {
	return errDiag("Invalid locale",
		fmt.Sprintf("%s takes BCP 47 locale tags such as \"fr\" or \"fr-CA\"; got %s.", attr, quoteValue(s)), r.Ptr())
}

// NormalizeLocale returns the canonical spelling of a BCP 47 tag: subtags
// of letters and digits joined by "-" ("_" is taken for it), the language
// in lower case, a region in upper case, a script in title case
// ("zh_hant_tw" is "zh-Hant-TW"). ok is false for what is not a tag.
func NormalizeLocale(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) == 0 || strings.Count(s, "-")+strings.Count(s, "_") != len(parts)-1 {
		return "", false
	}
	for i, p := range parts {
		if len(p) > 8 {
			return "", false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return "", false
			}
		}
		switch {
		case i == 0:
			if len(p) < 2 {
				return "", false
			}
			parts[i] = strings.ToLower(p)
		case len(p) == 2 && isLetters(p):
			parts[i] = strings.ToUpper(p)
		case len(p) == 4 && isLetters(p):
			parts[i] = strings.ToUpper(p[:1]) + strings.ToLower(p[1:])
		default:
			parts[i] = strings.ToLower(p)
		}
	}
	return strings.Join(parts, "-"), true
}

func isLetters(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// LocaleChain is the tags a person of locale l may get a translation
// for, most specific first: "fr-CA" then "fr". Empty for no locale.
func LocaleChain(l string) []string {
	var out []string
	for l != "" {
		out = append(out, l)
		i := strings.LastIndexByte(l, '-')
		if i < 0 {
			break
		}
		l = l[:i]
	}
	return out
}

// peopleTable holds each person's attributes: read from a CSV file (csv)
// or from any map of objects (rows, by id). A CSV file is read on first
// use (ready).
type peopleTable struct {
	once sync.Once
	load func() error
	err  error
	rng  hcl.Range // the attributes expression, for diagnostics
	csv  *csvTable
	// ids and rows are the ids, sorted, and the attribute objects of a
	// map of objects.
	ids  []string
	rows []cty.Value
}

// ready reads the table's rows, the first time it is called.
func (t *peopleTable) ready() error {
	if t == nil {
		return nil
	}
	t.once.Do(func() {
		if t.load != nil {
			t.err = t.load()
			t.load = nil
		}
	})
	return t.err
}

// len is how many people the table holds; it is ready.
func (t *peopleTable) len() int {
	if t.csv != nil {
		return t.csv.len()
	}
	return len(t.ids)
}

// row returns the row of id; the table is ready.
func (t *peopleTable) row(id string) (int, bool) {
	switch {
	case t == nil:
		return 0, false
	case t.csv != nil:
		return t.csv.find(id)
	}
	return slices.BinarySearch(t.ids, id)
}

// attrs returns the attributes of row, in a map of their own.
func (t *peopleTable) attrs(row int) map[string]cty.Value {
	if t.csv != nil {
		out := make(map[string]cty.Value, len(t.csv.columns)+2)
		for c, col := range t.csv.columns {
			out[col] = cty.StringVal(t.csv.cell(row, c))
		}
		return out
	}
	o := t.rows[row]
	out := make(map[string]cty.Value, len(o.Type().AttributeTypes())+2)
	for it := o.ElementIterator(); it.Next(); {
		k, v := it.Element()
		out[k.AsString()] = v
	}
	return out
}

// evalPeople evaluates the attributes attribute: a map from id to an
// object of strings, numbers and bools. The pattern
// { for r in csvdecode(file(PATH)) : r.COLUMN => r } is read without
// making a value of every row (see peopleFromCSV); anything else is
// evaluated as written.
func evalPeople(a *hcl.Attribute, ctx *hcl.EvalContext, dir, root string) (*peopleTable, hcl.Diagnostics) {
	if t, diags, ok := peopleFromCSV(a, ctx, dir, root); ok {
		return t, diags
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	bad := func(detail string) (*peopleTable, hcl.Diagnostics) {
		return nil, append(diags, errDiag("Invalid attributes", detail, a.Expr.Range().Ptr()))
	}
	if !v.IsWhollyKnown() {
		return bad("attributes must be known at validate time: from literals, variables, locals or files, not data sources.")
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsMapType() || ty.IsObjectType()) {
		return bad(fmt.Sprintf("attributes maps each %s id to an object of its attributes, such as { for r in csvdecode(file(\"%ss.csv\")) : r.%s_id => r }; got %s.", root, root, root, ty.FriendlyName()))
	}
	t := &peopleTable{rng: a.Expr.Range()}
	for it := v.ElementIterator(); it.Next(); {
		k, pv := it.Element()
		id := k.AsString()
		pty := pv.Type()
		if pv.IsNull() || !(pty.IsObjectType() || pty.IsMapType()) {
			return bad(fmt.Sprintf("the attributes of %s %s are %s, not an object.", root, quoteValue(id), pty.FriendlyName()))
		}
		if pty.IsMapType() {
			pv = cty.ObjectVal(pv.AsValueMap())
			if pv.LengthInt() == 0 {
				pv = cty.EmptyObjectVal
			}
		}
		for ait := pv.ElementIterator(); ait.Next(); {
			an, av := ait.Element()
			if at := av.Type(); !av.IsNull() && at != cty.String && at != cty.Number && at != cty.Bool {
				return bad(fmt.Sprintf("attribute %s of %s %s is %s; attributes are strings, numbers or bools.", an.AsString(), root, quoteValue(id), at.FriendlyName()))
			}
		}
		t.ids = append(t.ids, id) // cty iterates keys sorted; a map has no key twice
		t.rows = append(t.rows, pv)
	}
	return t, diags
}

// unwrapExpr returns the expression a wrapper of the budget (budget.go)
// or parentheses hold.
func unwrapExpr(e hcl.Expression) hclsyntax.Expression {
	for {
		switch w := e.(type) {
		case *meteredText:
			e = w.Expression
		case *meteredCollection:
			e = w.Expression
		case *hclsyntax.ParenthesesExpr:
			e = w.Expression
		case hclsyntax.Expression:
			return w
		default:
			return nil
		}
	}
}
