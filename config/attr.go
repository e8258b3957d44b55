package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// attrBlock is a block of attributes only (service, frequency_cap,
// rollout, variant), decoded against its schema and evaluated once the
// context it may refer to (variables, locals, for_each) is known.
type attrBlock struct {
	block *hcl.Block
	attrs hcl.Attributes
}

func decodeAttrBlock(b *hcl.Block, schema *hcl.BodySchema) (*attrBlock, hcl.Diagnostics) {
	content, diags := b.Body.Content(schema)
	return &attrBlock{block: b, attrs: content.Attributes}, diags
}

// Attribute evaluation shared by the block decoders. Each returns its
// diagnostics; an error among them means the value is unusable.

// evalAttr evaluates a in ctx and converts it to ty. The value may be null
// or unknown; it is cty.NilVal after an error.
func evalAttr(a *hcl.Attribute, ctx *hcl.EvalContext, ty cty.Type) (cty.Value, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	conv, err := convert.Convert(v, ty)
	if err != nil {
		return cty.NilVal, append(diags, typeDiag(a, err, ctx))
	}
	return conv, diags
}

// literal evaluates an attribute that may not refer to anything.
func literal(a *hcl.Attribute, ty cty.Type) (cty.Value, hcl.Diagnostics) {
	return evalAttr(a, nil, ty)
}

// literalString evaluates a string attribute that may not refer to
// anything; set is false when it is null or could not be evaluated.
func literalString(a *hcl.Attribute) (val string, set bool, diags hcl.Diagnostics) {
	v, diags := literal(a, cty.String)
	if diags.HasErrors() || v.IsNull() {
		return "", false, diags
	}
	return v.AsString(), true, diags
}

// evalKnown evaluates an attribute that must be known before recipients
// are fetched. set is false when it is null or could not be evaluated.
func evalKnown(a *hcl.Attribute, ctx *hcl.EvalContext, ty cty.Type) (v cty.Value, set bool, diags hcl.Diagnostics) {
	v, diags = evalAttr(a, ctx, ty)
	if diags.HasErrors() || v.IsNull() {
		return cty.NilVal, false, diags
	}
	if !v.IsKnown() {
		if dependsOnData(a.Expr) {
			diags = append(diags, errDiag("Value depends on a data source",
				fmt.Sprintf("%s must be known before recipients are fetched; it cannot use data sources.", a.Name), a.Expr.Range().Ptr()))
		}
		return cty.NilVal, false, diags
	}
	return v, true, diags
}

// evalKnownString is evalKnown for a string.
func evalKnownString(a *hcl.Attribute, ctx *hcl.EvalContext) (val string, set bool, diags hcl.Diagnostics) {
	v, set, diags := evalKnown(a, ctx, cty.String)
	if !set {
		return "", false, diags
	}
	return v.AsString(), true, diags
}

// present evaluates an optional attribute; set is false when it is absent
// or null. After an error the value is unknown and set is true, so that no
// second error ("missing ...") follows.
func present(attrs hcl.Attributes, name string, ctx *hcl.EvalContext, ty cty.Type) (v cty.Value, a *hcl.Attribute, set bool, diags hcl.Diagnostics) {
	a, ok := attrs[name]
	if !ok {
		return cty.NilVal, nil, false, nil
	}
	v, diags = evalAttr(a, ctx, ty)
	if diags.HasErrors() {
		return cty.UnknownVal(ty), a, true, diags
	}
	if v.IsNull() {
		return cty.NilVal, a, false, diags
	}
	return v, a, true, diags
}

// dependsOnData reports whether expr refers to a data source directly.
func dependsOnData(expr hcl.Expression) bool {
	for _, t := range expr.Variables() {
		if t.RootName() == "data" {
			return true
		}
	}
	return false
}
