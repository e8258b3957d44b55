package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// targetAttrs are the target attributes in the order they are reported.
var targetAttrs = []TargetKind{TargetUsers, TargetDevices, TargetTopics}

// scope is what message evaluation checks names against: the declared data
// sources and topics, and the fetched recipients (nil: not fetched); and the
// evaluated campaigns, whose settings their messages inherit.
type scope struct {
	data       map[string]*dataSource
	topics     map[string]Topic
	recipients map[string][]string
	campaigns  map[string]Campaign
	// timeZones and quietHours are the top level's.
	timeZones  *TimeZones
	quietHours *QuietHours
	// persons are the top level's user_data, device_data and locales;
	// campaignBlocks the campaign blocks (their translations); env what
	// templates share.
	persons        personSettings
	campaignBlocks map[string]*campaignBlock
	env            *templateEnv
}

// recipientsRef reports whether expr is exactly data.recipients.NAME.user_ids.
func recipientsRef(expr hcl.Expression) (string, bool) {
	t, d := hcl.AbsTraversalForExpr(expr)
	if d.HasErrors() || len(t) != 4 || t.RootName() != "data" {
		return "", false
	}
	a1, ok1 := t[1].(hcl.TraverseAttr)
	a2, ok2 := t[2].(hcl.TraverseAttr)
	a3, ok3 := t[3].(hcl.TraverseAttr)
	if !ok1 || !ok2 || !ok3 || a1.Name != "recipients" || a3.Name != "user_ids" {
		return "", false
	}
	return a2.Name, true
}

// decodeTargets sets m.Targets from the target attribute a.
func decodeTargets(m *Message, a *hcl.Attribute, kind TargetKind, ctx *hcl.EvalContext, sc *scope) hcl.Diagnostics {
	m.Targets.Kind = kind
	m.TargetsPos = posOf(a.NameRange)
	if name, ok := recipientsRef(a.Expr); ok && kind == TargetUsers {
		if _, declared := sc.data[name]; !declared {
			return hcl.Diagnostics{errDiag("Reference to undeclared data source",
				fmt.Sprintf("There is no data source data.recipients.%s; declare it with data \"recipients\" %q {}.", name, name), a.Expr.Range().Ptr())}
		}
		m.Targets.Recipients = name
		if ids, ok := sc.recipients[name]; ok {
			m.Targets.IDs = ids // shared, not copied: the list may be huge
		} else {
			m.Targets.Unknown = true
		}
		return nil
	}
	v, diags := evalAttr(a, ctx, cty.DynamicPseudoType)
	if diags.HasErrors() {
		return diags
	}
	if !v.IsWhollyKnown() {
		m.Targets.Unknown = true
		return diags
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) {
		got := "null"
		if !v.IsNull() {
			got = ty.FriendlyName()
		}
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Invalid " + string(kind),
			Detail:     fmt.Sprintf("%s must be a list of strings, such as [\"id-1\"]; got %s.", kind, got),
			Subject:    a.Expr.Range().Ptr(),
			Expression: a.Expr, EvalContext: ctx,
		})
	}
	n := v.LengthInt()
	if n == 0 && !dependsOnData(a.Expr) {
		return append(diags, errDiag("Empty target list",
			fmt.Sprintf("%s is empty, so this message would reach no one. List at least one id or remove the block.", kind), a.Expr.Range().Ptr()))
	}
	tuple, _ := a.Expr.(*hclsyntax.TupleConsExpr)
	ids := make([]string, 0, n)
	seen := make(map[string]bool, n)
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		rng := a.Expr.Range()
		if tuple != nil && len(tuple.Exprs) == n && !ty.IsSetType() {
			rng = tuple.Exprs[i].Range()
		}
		if e.IsNull() {
			diags = append(diags, errDiag("Invalid id", fmt.Sprintf("Element %d of %s is null; ids are non-empty strings.", i, kind), rng.Ptr()))
			continue
		}
		conv, err := convert.Convert(e, cty.String)
		if err != nil {
			diags = append(diags, errDiag("Invalid id", fmt.Sprintf("Element %d of %s must be a string, got %s.", i, kind, e.Type().FriendlyName()), rng.Ptr()))
			continue
		}
		id := conv.AsString()
		if strings.TrimSpace(id) == "" {
			diags = append(diags, errDiag("Empty id", fmt.Sprintf("Element %d of %s is an empty string; ids are non-empty strings.", i, kind), rng.Ptr()))
			continue
		}
		if seen[id] {
			// A warning: the duplicate is dropped, so nobody gets two
			// pushes, but it often hides a copy-paste mistake.
			diags = append(diags, warnDiag("Duplicate id",
				fmt.Sprintf("%q appears more than once in %s; it is sent to once.", id, kind), rng.Ptr()))
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if kind == TargetTopics {
			if _, declared := sc.topics[id]; !declared {
				diags = append(diags, warnDiag("Undeclared topic",
					fmt.Sprintf("No topic block declares %q. Declare it with topic %q {} and refer to it as topic.%s.name, so typos show up in review.", id, id, id), rng.Ptr()))
			}
		}
	}
	m.Targets.IDs = ids
	return diags
}
