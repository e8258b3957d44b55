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

// variable is a decoded variable block.
type variable struct {
	name        string
	typ         cty.Type
	def         cty.Value // cty.NilVal without default
	description string
	sensitive   bool
	decl        hcl.Range
}

func (s *loadState) decodeVariableBlock(b *hcl.Block) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		s.diags = append(s.diags, invalidName("variable", name, b.LabelRanges[0]))
		return
	}
	if prev, ok := s.variables[name]; ok {
		s.diags = append(s.diags, errDiag("Duplicate variable block",
			fmt.Sprintf("var.%s is already declared at %s.", name, rangePos(prev.decl)), b.DefRange.Ptr()))
		return
	}
	content, diags := b.Body.Content(variableSchema)
	s.diags = append(s.diags, diags...)
	v := &variable{name: name, typ: cty.DynamicPseudoType, decl: b.DefRange}
	if a, ok := content.Attributes["type"]; ok {
		ty, d := typeexpr.TypeConstraint(a.Expr)
		s.diags = append(s.diags, d...)
		if !d.HasErrors() {
			v.typ = ty
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		if val, ok := s.literal(a, cty.String); ok && !val.IsNull() {
			v.description = val.AsString()
		}
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		if val, ok := s.literal(a, cty.Bool); ok && !val.IsNull() {
			v.sensitive = val.True()
		}
	}
	if a, ok := content.Attributes["default"]; ok {
		val, d := a.Expr.Value(nil)
		s.diags = append(s.diags, d...)
		if d.HasErrors() {
			v.def = cty.UnknownVal(v.typ)
		} else {
			conv, err := convert.Convert(val, v.typ)
			if err != nil {
				s.diags = append(s.diags, errDiag("Invalid default value for variable",
					fmt.Sprintf("The default of var.%s does not match its type: %s.", name, err), a.Expr.Range().Ptr()))
				v.def = cty.UnknownVal(v.typ) // reported once, not again as missing
			} else {
				v.def = conv
			}
		}
	}
	s.variables[name] = v
	s.varNames = append(s.varNames, name)
}

// literal evaluates an attribute that may not refer to anything.
func (s *loadState) literal(a *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	val, d := a.Expr.Value(nil)
	s.diags = append(s.diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	conv, err := convert.Convert(val, ty)
	if err != nil {
		s.diags = append(s.diags, typeDiag(a, err, nil))
		return cty.NilVal, false
	}
	return conv, true
}

// decodeVariableValues sets every variable, in Terraform's precedence:
// default < PUSHFORM_VAR_name < --var-file (in order) < --var (in order).
func (s *loadState) decodeVariableValues() {
	vals := map[string]cty.Value{}
	for name, v := range s.variables {
		if v.def != cty.NilVal {
			vals[name] = v.def
		}
	}
	for _, kv := range s.opts.Environ {
		k, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvVarPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvVarPrefix)
		v, declared := s.variables[name]
		if !declared {
			continue // the environment is shared with other configurations
		}
		if val, ok := s.parseRawValue(v, raw, "environment variable "+k); ok {
			vals[name] = val
		}
	}
	for _, path := range s.opts.VarFiles {
		s.readVarFile(path, vals)
	}
	for _, arg := range s.opts.Vars {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			s.diags = append(s.diags, errDiag("Invalid --var option",
				fmt.Sprintf("The --var option %q is not of the form name=value.", arg), nil))
			continue
		}
		v, declared := s.variables[name]
		if !declared {
			s.diags = append(s.diags, errDiag("Value for undeclared variable",
				fmt.Sprintf("--var sets %q, but no variable block declares it. Declare it with variable %q {}.", name, name), nil))
			continue
		}
		if val, ok := s.parseRawValue(v, raw, "--var "+name); ok {
			vals[name] = val
		}
	}
	for _, name := range s.varNames {
		v := s.variables[name]
		if _, ok := vals[name]; !ok {
			s.diags = append(s.diags, errDiag("No value for required variable",
				fmt.Sprintf("var.%s has no default and no value was given. Set it with --var %s=..., a --var-file, or the environment variable %s%s.", name, name, EnvVarPrefix, name),
				v.decl.Ptr()))
			vals[name] = cty.UnknownVal(v.typ)
		}
	}
	s.vars = vals
}

// parseRawValue reads a command-line or environment value: taken as a plain
// string for string (or untyped) variables, parsed as an HCL expression
// otherwise, as Terraform does.
func (s *loadState) parseRawValue(v *variable, raw, source string) (cty.Value, bool) {
	if v.typ == cty.String || v.typ == cty.DynamicPseudoType {
		return cty.StringVal(raw), true
	}
	expr, d := hclsyntax.ParseExpression([]byte(raw), "<value for var."+v.name+">", hcl.Pos{Line: 1, Column: 1})
	if !d.HasErrors() {
		var val cty.Value
		val, d = expr.Value(nil)
		if !d.HasErrors() {
			conv, err := convert.Convert(val, v.typ)
			if err == nil {
				return conv, true
			}
			s.diags = append(s.diags, errDiag("Invalid value for variable",
				fmt.Sprintf("The value of var.%s from %s does not match its type: %s.", v.name, source, err), nil))
			return cty.NilVal, false
		}
	}
	s.diags = append(s.diags, errDiag("Invalid value for variable",
		fmt.Sprintf("The value of var.%s from %s is not a valid expression: %s.", v.name, source, d.Error()), nil))
	return cty.NilVal, false
}

func (s *loadState) readVarFile(path string, vals map[string]cty.Value) {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(s.dir, path)
	}
	name := filepath.Clean(path)
	src, err := ReadSource(full, MaxFileSize)
	if err != nil {
		s.diags = append(s.diags, errDiag("Cannot read variables file", err.Error(), nil))
		return
	}
	f, d := ParseSource(name, src)
	if f != nil {
		s.files[name] = f
	}
	s.diags = append(s.diags, d...)
	if d.HasErrors() {
		return
	}
	attrs, d := f.Body.JustAttributes()
	s.diags = append(s.diags, d...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return attrs[names[i]].Range.Start.Byte < attrs[names[j]].Range.Start.Byte })
	for _, n := range names {
		a := attrs[n]
		v, declared := s.variables[n]
		if !declared {
			// A warning, as in Terraform: one file often serves several configurations.
			s.diags = append(s.diags, warnDiag("Value for undeclared variable",
				fmt.Sprintf("%s sets %q, but no variable block declares it; the value is ignored.", name, n), a.NameRange.Ptr()))
			continue
		}
		val, d := a.Expr.Value(nil)
		s.diags = append(s.diags, d...)
		if d.HasErrors() {
			continue
		}
		conv, err := convert.Convert(val, v.typ)
		if err != nil {
			s.diags = append(s.diags, errDiag("Invalid value for variable",
				fmt.Sprintf("The value of var.%s does not match its type: %s.", n, err), a.Expr.Range().Ptr()))
			continue
		}
		vals[n] = conv
	}
}

func typeDiag(a *hcl.Attribute, err error, ctx *hcl.EvalContext) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity:    hcl.DiagError,
		Summary:     "Incorrect attribute value type",
		Detail:      fmt.Sprintf("Inappropriate value for attribute %q: %s.", a.Name, err),
		Subject:     a.Expr.Range().Ptr(),
		Expression:  a.Expr,
		EvalContext: ctx,
	}
}
