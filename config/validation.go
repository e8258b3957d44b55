package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// validation is a variable's validation block, Terraform's custom rule
// for a variable's value: condition must hold, or the configuration is
// refused with error_message.
type validation struct {
	condition    hcl.Expression
	errorMessage hcl.Expression
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

// ValidationFailure is the Extra of the error a failed validation block
// reports (hcl.DiagnosticExtra finds it): pushform test's expect_failures
// names the variables whose validation it expects to fail.
type ValidationFailure struct {
	// Variable is the variable's name, without var.
	Variable string
}

// decodeValidationBlock decodes a validation block; nil when it lacks an
// attribute. Its expressions may read variables only: they are checked
// before anything else is evaluated.
func decodeValidationBlock(b *hcl.Block) (*validation, hcl.Diagnostics) {
	content, diags := b.Body.Content(validationSchema)
	cond, okCond := content.Attributes["condition"]
	msg, okMsg := content.Attributes["error_message"]
	if !okCond || !okMsg {
		return nil, diags
	}
	for _, a := range []*hcl.Attribute{cond, msg} {
		for _, t := range a.Expr.Variables() {
			if t.RootName() != "var" {
				diags = append(diags, errDiag("Invalid reference in variable validation",
					fmt.Sprintf("A validation block may refer to variables only (var.NAME), not to %s: it is checked before anything else is evaluated.", t.RootName()),
					t.SourceRange().Ptr()))
			}
		}
	}
	return &validation{condition: cond.Expr, errorMessage: msg.Expr}, diags
}

// checkValidations checks every validation block against the variables'
// values, in declaration order. A variable whose validation fails is
// reported once, with an error carrying a ValidationFailure, and its value
// becomes unknown: what is evaluated from it reports nothing more.
func checkValidations(mod *module, vals map[string]cty.Value, funcs map[string]function.Function) hcl.Diagnostics {
	var diags hcl.Diagnostics
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": objectOrEmpty(vals)}, Functions: funcs}
	failed := map[string]bool{}
	for _, name := range mod.varNames {
		v := mod.variables[name]
		if val, ok := vals[name]; !ok || !val.IsWhollyKnown() {
			continue // not set: reported already
		}
		for _, rule := range v.validations {
			d := rule.check(v, ctx)
			diags = append(diags, d...)
			if d.HasErrors() {
				failed[name] = true
				break
			}
		}
	}
	for name := range failed {
		vals[name] = cty.UnknownVal(mod.variables[name].typ)
	}
	return diags
}

// check evaluates the rule for v in ctx: nothing when the condition holds.
func (rule *validation) check(v *variable, ctx *hcl.EvalContext) hcl.Diagnostics {
	cond, diags := rule.condition.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	if cond, err := convert.Convert(cond, cty.Bool); err != nil || cond.IsNull() {
		why := "it is null"
		if err != nil {
			why = err.Error()
		}
		return append(diags, errDiag("Invalid validation condition",
			fmt.Sprintf("The condition of a validation of var.%s must be true or false: %s.", v.name, why), rule.condition.Range().Ptr()))
	} else if !cond.IsKnown() || cond.True() {
		return diags
	}
	msg := "(its error_message could not be evaluated)"
	if mv, d := rule.errorMessage.Value(ctx); !d.HasErrors() {
		if s, err := convert.Convert(mv, cty.String); err == nil && s.IsKnown() && !s.IsNull() {
			msg = s.AsString()
		}
	}
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value for variable",
		Detail:   msg,
		Subject:  rule.condition.Range().Ptr(),
		Extra:    ValidationFailure{Variable: v.name},
	}
	if !v.sensitive {
		d.Expression, d.EvalContext = rule.condition, ctx // the writer shows the value it saw
	}
	return append(diags, d)
}

// dropDependents drops from diags the errors that follow from the
// variables whose validation failed: those inside a block (or a local)
// that reads one of them, directly or through locals. A failed variable
// is unknown, and what is evaluated from an unknown value may report that
// it is not known, or missing: echoes of the one failure already
// reported. So Terraform evaluates nothing that depends on an invalid
// variable, and pushform test's expect_failures sees the failure alone.
func dropDependents(mod *module, diags hcl.Diagnostics) hcl.Diagnostics {
	failed := map[string]bool{}
	for _, d := range diags {
		if vf, ok := hcl.DiagnosticExtra[ValidationFailure](d); ok {
			failed[vf.Variable] = true
		}
	}
	if len(failed) == 0 {
		return diags
	}
	// The locals that read a failed variable, directly or through another.
	tainted := map[string]bool{}
	reads := func(ts []hcl.Traversal) bool {
		for _, t := range ts {
			if len(t) < 2 {
				continue
			}
			a, ok := t[1].(hcl.TraverseAttr)
			if ok && (t.RootName() == "var" && failed[a.Name] || t.RootName() == "local" && tainted[a.Name]) {
				return true
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for name, a := range mod.locals {
			if !tainted[name] && reads(a.Expr.Variables()) {
				tainted[name], changed = true, true
			}
		}
	}
	var ranges []hcl.Range
	for _, body := range mod.bodies {
		for _, b := range body.Blocks {
			switch b.Type {
			case "variable":
			case "locals":
				for name, a := range b.Body.Attributes {
					if tainted[name] {
						ranges = append(ranges, a.SrcRange)
					}
				}
			default:
				if reads(traversals(b.Body)) {
					ranges = append(ranges, b.Range())
				}
			}
		}
	}
	out := diags[:0:0]
	for _, d := range diags {
		if _, ok := hcl.DiagnosticExtra[ValidationFailure](d); !ok && d.Severity == hcl.DiagError && d.Subject != nil && inRanges(ranges, *d.Subject) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// traversals are the references of every expression in body, nested
// blocks' too.
func traversals(body *hclsyntax.Body) []hcl.Traversal {
	var out []hcl.Traversal
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		if e, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
			out = append(out, e.Traversal)
		}
		return nil
	})
	return out
}

// inRanges reports whether r lies inside one of ranges.
func inRanges(ranges []hcl.Range, r hcl.Range) bool {
	for _, o := range ranges {
		if o.Filename == r.Filename && o.Start.Byte <= r.Start.Byte && r.End.Byte <= o.End.Byte {
			return true
		}
	}
	return false
}
