package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix starts environment variables that set configuration variables.
const EnvVarPrefix = "PUSHFORM_VAR_"

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "sensitive"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

// variable is a decoded variable block.
type variable struct {
	name        string
	typ         cty.Type
	def         cty.Value // cty.NilVal without default
	description string
	sensitive   bool
	decl        hcl.Range
	// validations are its validation blocks, in order (validation.go).
	validations []*validation
}

// decodeVariableBlock decodes a variable block; nil when its name is invalid.
func decodeVariableBlock(b *hcl.Block) (*variable, hcl.Diagnostics) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		return nil, hcl.Diagnostics{invalidName("variable", name, b.LabelRanges[0])}
	}
	content, diags := b.Body.Content(variableSchema)
	v := &variable{name: name, typ: cty.DynamicPseudoType, decl: b.DefRange}
	for _, vb := range content.Blocks {
		val, d := decodeValidationBlock(vb)
		diags = append(diags, d...)
		if val != nil {
			v.validations = append(v.validations, val)
		}
	}
	if a, ok := content.Attributes["type"]; ok {
		ty, d := typeexpr.TypeConstraint(a.Expr)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v.typ = ty
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		s, set, d := literalString(a)
		diags = append(diags, d...)
		if set {
			v.description = s
		}
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		val, d := literal(a, cty.Bool)
		diags = append(diags, d...)
		if !d.HasErrors() && !val.IsNull() {
			v.sensitive = val.True()
		}
	}
	if a, ok := content.Attributes["default"]; ok {
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			v.def = cty.UnknownVal(v.typ)
		} else if conv, err := convert.Convert(val, v.typ); err != nil {
			diags = append(diags, errDiag("Invalid default value for variable",
				fmt.Sprintf("The default of var.%s does not match its type: %s.", name, err), a.Expr.Range().Ptr()))
			v.def = cty.UnknownVal(v.typ) // reported once, not again as missing
		} else {
			v.def = conv
		}
	}
	return v, diags
}

// varFile is a parsed --var-file, kept so diagnostics can quote it.
type varFile struct {
	name string
	file *hcl.File
}

// variableValues sets every variable, in Terraform's precedence:
// default < PUSHFORM_VAR_name < --var-file (in order) < --var (in order)
// < Options.Values.
// A variable without a value is reported and set to unknown.
func variableValues(mod *module, opts Options) (map[string]cty.Value, []varFile, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vals := map[string]cty.Value{}
	for name, v := range mod.variables {
		if v.def != cty.NilVal {
			vals[name] = v.def
		}
	}
	for _, kv := range opts.Environ {
		k, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvVarPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvVarPrefix)
		v, declared := mod.variables[name]
		if !declared {
			continue // the environment is shared with other configurations
		}
		val, d := parseRawValue(v, raw, "environment variable "+k)
		diags = append(diags, d...)
		if !d.HasErrors() {
			vals[name] = val
		}
	}
	var files []varFile
	for _, path := range opts.VarFiles {
		f, d := readVarFile(mod, path, vals)
		diags = append(diags, d...)
		if f.file != nil {
			files = append(files, f)
		}
	}
	for _, arg := range opts.Vars {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			diags = append(diags, errDiag("Invalid --var option",
				fmt.Sprintf("The --var option %q is not of the form name=value.", arg), nil))
			continue
		}
		v, declared := mod.variables[name]
		if !declared {
			diags = append(diags, errDiag("Value for undeclared variable",
				fmt.Sprintf("--var sets %q, but no variable block declares it. Declare it with variable %q {}.", name, name), nil))
			continue
		}
		val, d := parseRawValue(v, raw, "--var "+name)
		diags = append(diags, d...)
		if !d.HasErrors() {
			vals[name] = val
		}
	}
	for name, given := range opts.Values {
		v, declared := mod.variables[name]
		if !declared {
			diags = append(diags, errDiag("Value for undeclared variable",
				fmt.Sprintf("A value is given for %q, but no variable block of the configuration declares it.", name), given.Range.Ptr()))
			continue
		}
		conv, err := convert.Convert(given.Value, v.typ)
		if err != nil {
			diags = append(diags, errDiag("Invalid value for variable",
				fmt.Sprintf("The value of var.%s does not match its type: %s.", name, err), given.Range.Ptr()))
			continue
		}
		vals[name] = conv
	}
	for _, name := range mod.varNames {
		v := mod.variables[name]
		if _, ok := vals[name]; !ok {
			diags = append(diags, errDiag("No value for required variable",
				fmt.Sprintf("var.%s has no default and no value was given. Set it with --var %s=..., a --var-file, or the environment variable %s%s.", name, name, EnvVarPrefix, name),
				v.decl.Ptr()))
			vals[name] = cty.UnknownVal(v.typ)
		}
	}
	return vals, files, diags
}

// parseRawValue reads a command-line or environment value: taken as a plain
// string for string (or untyped) variables, parsed as an HCL expression
// otherwise, as Terraform does.
func parseRawValue(v *variable, raw, source string) (cty.Value, hcl.Diagnostics) {
	if v.typ == cty.String || v.typ == cty.DynamicPseudoType {
		return cty.StringVal(raw), nil
	}
	expr, d := hclsyntax.ParseExpression([]byte(raw), "<value for var."+v.name+">", hcl.Pos{Line: 1, Column: 1})
	if !d.HasErrors() {
		var val cty.Value
		val, d = expr.Value(nil)
		if !d.HasErrors() {
			conv, err := convert.Convert(val, v.typ)
			if err == nil {
				return conv, nil
			}
			return cty.NilVal, hcl.Diagnostics{errDiag("Invalid value for variable",
				fmt.Sprintf("The value of var.%s from %s does not match its type: %s.", v.name, source, err), nil)}
		}
	}
	return cty.NilVal, hcl.Diagnostics{errDiag("Invalid value for variable",
		fmt.Sprintf("The value of var.%s from %s is not a valid expression: %s.", v.name, source, d.Error()), nil)}
}

// readVarFile reads one --var-file into vals. The returned file is set
// whenever it parsed, for diagnostics to quote.
func readVarFile(mod *module, path string, vals map[string]cty.Value) (varFile, hcl.Diagnostics) {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(mod.dir, path)
	}
	name := filepath.Clean(path)
	src, err := ReadSource(full, MaxFileSize)
	if err != nil {
		return varFile{}, hcl.Diagnostics{errDiag("Cannot read variables file", err.Error(), nil)}
	}
	f, diags := ParseSource(name, src)
	vf := varFile{name: name, file: f}
	if diags.HasErrors() {
		return vf, diags
	}
	attrs, d := f.Body.JustAttributes()
	diags = append(diags, d...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return attrs[names[i]].Range.Start.Byte < attrs[names[j]].Range.Start.Byte })
	for _, n := range names {
		a := attrs[n]
		v, declared := mod.variables[n]
		if !declared {
			// A warning, as in Terraform: one file often serves several configurations.
			diags = append(diags, warnDiag("Value for undeclared variable",
				fmt.Sprintf("%s sets %q, but no variable block declares it; the value is ignored.", name, n), a.NameRange.Ptr()))
			continue
		}
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		conv, err := convert.Convert(val, v.typ)
		if err != nil {
			diags = append(diags, errDiag("Invalid value for variable",
				fmt.Sprintf("The value of var.%s does not match its type: %s.", n, err), a.Expr.Range().Ptr()))
			continue
		}
		vals[n] = conv
	}
	return vf, diags
}
