package config

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

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

// Len is how many people the block holds.
func (d *PersonData) Len() int {
	if d == nil || d.table == nil {
		return 0
	}
	return len(d.table.ids)
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

// peopleTable holds each person's attributes: read from a CSV file
// (columns and cells, row by row) or from any map of objects (rows).
type peopleTable struct {
	ids []string // by row
	// index maps ids to rows; nil when ids are sorted (binary search).
	index map[string]int32
	// A CSV file's columns, and its cells row after row.
	columns []string
	cells   []string
	// rows are the attribute objects of a map of objects.
	rows []cty.Value
}

// row returns the row of id.
func (t *peopleTable) row(id string) (int, bool) {
	if t == nil {
		return 0, false
	}
	if t.index == nil {
		i, ok := slices.BinarySearch(t.ids, id)
		return i, ok
	}
	i, ok := t.index[id]
	return int(i), ok
}

// attr returns attribute name of row; ok is false when the row has none.
func (t *peopleTable) attr(row int, name string) (cty.Value, bool) {
	if t.rows != nil {
		o := t.rows[row]
		if !o.Type().IsObjectType() || !o.Type().HasAttribute(name) {
			return cty.NilVal, false
		}
		return o.GetAttr(name), true
	}
	for c, col := range t.columns {
		if col == name {
			return cty.StringVal(t.cells[row*len(t.columns)+c]), true
		}
	}
	return cty.NilVal, false
}

// attrs returns the attributes of row, in a map of their own.
func (t *peopleTable) attrs(row int) map[string]cty.Value {
	if t.rows != nil {
		o := t.rows[row]
		out := make(map[string]cty.Value, len(o.Type().AttributeTypes())+2)
		for it := o.ElementIterator(); it.Next(); {
			k, v := it.Element()
			out[k.AsString()] = v
		}
		return out
	}
	out := make(map[string]cty.Value, len(t.columns)+2)
	for c, col := range t.columns {
		out[col] = cty.StringVal(t.cells[row*len(t.columns)+c])
	}
	return out
}

// finish indexes the rows by id, reporting an id given twice.
func (t *peopleTable) finish() (dup string, rows [2]int, ok bool) {
	if slices.IsSorted(t.ids) {
		for i := 1; i < len(t.ids); i++ {
			if t.ids[i] == t.ids[i-1] {
				return t.ids[i], [2]int{i - 1, i}, false
			}
		}
		return "", rows, true
	}
	t.index = make(map[string]int32, len(t.ids))
	for i, id := range t.ids {
		if j, seen := t.index[id]; seen {
			return id, [2]int{int(j), i}, false
		}
		t.index[id] = int32(i)
	}
	return "", rows, true
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
	t := &peopleTable{}
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
		t.ids = append(t.ids, id) // cty iterates keys sorted
		t.rows = append(t.rows, pv)
	}
	t.finish() // a map has no key twice
	return t, diags
}

// peopleFromCSV reads attributes written as
// { for VAR in csvdecode(file(PATH)) : VAR.COLUMN => VAR } (or
// VAR["COLUMN"]) straight from the file: a million rows as values of the
// language take seconds and gigabytes, and more than a configuration's
// budget. The result is what the expression means, with file up to
// MaxDataFileSize. ok is false for any other expression.
func peopleFromCSV(a *hcl.Attribute, ctx *hcl.EvalContext, dir, root string) (*peopleTable, hcl.Diagnostics, bool) {
	fe, ok := unwrapExpr(a.Expr).(*hclsyntax.ForExpr)
	if !ok || fe.KeyExpr == nil || fe.CondExpr != nil || fe.Group || fe.KeyVar != "" {
		return nil, nil, false
	}
	if v, ok := unwrapExpr(fe.ValExpr).(*hclsyntax.ScopeTraversalExpr); !ok || len(v.Traversal) != 1 || v.Traversal.RootName() != fe.ValVar {
		return nil, nil, false
	}
	column, ok := columnOf(unwrapExpr(fe.KeyExpr), fe.ValVar)
	if !ok {
		return nil, nil, false
	}
	dec, ok := unwrapExpr(fe.CollExpr).(*hclsyntax.FunctionCallExpr)
	if !ok || dec.Name != "csvdecode" || len(dec.Args) != 1 || dec.ExpandFinal || !hasFunction(ctx, "csvdecode") {
		return nil, nil, false
	}
	fc, ok := unwrapExpr(dec.Args[0]).(*hclsyntax.FunctionCallExpr)
	if !ok || fc.Name != "file" || len(fc.Args) != 1 || fc.ExpandFinal || !hasFunction(ctx, "file") {
		return nil, nil, false
	}
	pv, diags := fc.Args[0].Value(ctx)
	if diags.HasErrors() {
		return nil, diags, true
	}
	if !pv.IsWhollyKnown() || pv.IsNull() || pv.Type() != cty.String {
		return nil, nil, false
	}
	path := pv.AsString()
	fail := func(detail string) (*peopleTable, hcl.Diagnostics, bool) {
		return nil, append(diags, errDiag("Invalid attributes", detail, a.Expr.Range().Ptr())), true
	}
	full, err := resolvePath(dir, path)
	if err != nil {
		return fail(fmt.Sprintf("Reading the %s data: %s.", root, err))
	}
	if info, err := os.Stat(full); err != nil || !info.Mode().IsRegular() {
		return fail(fmt.Sprintf("Reading the %s data: %s is not a regular file.", root, path))
	}
	src, err := ReadSource(full, MaxDataFileSize)
	if err != nil {
		return fail(fmt.Sprintf("Reading the %s data: %s.", root, err))
	}
	t, err := parsePeopleCSV(string(src), column)
	if err != nil {
		return fail(fmt.Sprintf("csvdecode of %s: %s.", path, err))
	}
	if dup, rows, ok := t.finish(); !ok {
		return fail(fmt.Sprintf("Two rows of %s have %s %s (rows %d and %d): each %s is one row.", path, column, quoteValue(dup), rows[0]+1, rows[1]+1, root))
	}
	return t, diags, true
}

// columnOf returns COLUMN of VAR.COLUMN or VAR["COLUMN"].
func columnOf(e hclsyntax.Expression, v string) (string, bool) {
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if len(e.Traversal) != 2 || e.Traversal.RootName() != v {
			return "", false
		}
		switch s := e.Traversal[1].(type) {
		case hcl.TraverseAttr:
			return s.Name, true
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				return s.Key.AsString(), true
			}
		}
	case *hclsyntax.IndexExpr:
		c, ok := unwrapExpr(e.Collection).(*hclsyntax.ScopeTraversalExpr)
		k, ok2 := unwrapExpr(e.Key).(*hclsyntax.TemplateExpr)
		if ok && ok2 && len(c.Traversal) == 1 && c.Traversal.RootName() == v && k.IsStringLiteral() {
			kv, _ := k.Value(nil)
			return kv.AsString(), true
		}
	}
	return "", false
}

// parsePeopleCSV reads src as csvdecode does (RFC 4180, the first row
// naming the columns, every row as long) into a table keyed by column.
// Cells are substrings of src: a file without quotes is split in place,
// at a cost of a few nanoseconds a cell.
func parsePeopleCSV(src, column string) (*peopleTable, error) {
	var header []string
	var cells []string
	if strings.IndexByte(src, '"') < 0 {
		line := 0
		for rest := src; rest != ""; {
			var l string
			l, rest, _ = strings.Cut(rest, "\n")
			line++
			l = strings.TrimSuffix(l, "\r")
			if l == "" {
				continue // encoding/csv skips empty lines
			}
			if header == nil {
				header = strings.Split(l, ",")
				continue
			}
			n := len(cells)
			for {
				c, more, found := strings.Cut(l, ",")
				cells = append(cells, c)
				if !found {
					break
				}
				l = more
			}
			if len(cells)-n != len(header) {
				return nil, fmt.Errorf("CSV parse error on line %d: wrong number of fields", line)
			}
		}
	} else {
		r := csv.NewReader(strings.NewReader(src))
		r.ReuseRecord = true
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("CSV parse error on line %d: %w", pe.Line, pe.Err)
			}
			if err != nil {
				return nil, err
			}
			if header == nil {
				header = slices.Clone(rec)
				continue
			}
			cells = append(cells, rec...)
		}
	}
	if header == nil {
		return nil, errors.New("missing header line")
	}
	key := -1
	for i, h := range header {
		if slices.Index(header, h) != i {
			return nil, fmt.Errorf("duplicate column name %q", h)
		}
		if h == column {
			key = i
		}
	}
	if key < 0 {
		return nil, fmt.Errorf("no column %q (the columns are %s)", column, strings.Join(header, ", "))
	}
	t := &peopleTable{columns: header, cells: cells, ids: make([]string, len(cells)/len(header))}
	for i := range t.ids {
		t.ids[i] = cells[i*len(header)+key]
	}
	return t, nil
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
