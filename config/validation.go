package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
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
