package config

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func errDiag(summary, detail string, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject}
}

func warnDiag(summary, detail string, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: subject}
}

func invalidName(what, name string, r hcl.Range) *hcl.Diagnostic {
	return errDiag("Invalid "+what+" name",
		fmt.Sprintf("%q is not a valid name: a name starts with a letter or underscore and contains only letters, digits, underscores and dashes.", name),
		r.Ptr())
}

// checkLabel reports a block label that cannot be part of an address.
func checkLabel(b *hcl.Block, what string) hcl.Diagnostics {
	if hclsyntax.ValidIdentifier(b.Labels[0]) {
		return nil
	}
	return hcl.Diagnostics{invalidName(what, b.Labels[0], b.LabelRanges[0])}
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

func fileStart(name string) *hcl.Range {
	if name == "" {
		return nil
	}
	p := hcl.Pos{Line: 1, Column: 1}
	return &hcl.Range{Filename: name, Start: p, End: p}
}

func rangePos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

func posOf(r hcl.Range) Pos {
	return Pos{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

// diagKey identifies a diagnostic for dedupe and for Resolve's "only new".
type diagKey struct {
	sev             hcl.DiagnosticSeverity
	summary, detail string
	subject         hcl.Range
}

func keyOf(d *hcl.Diagnostic) diagKey {
	k := diagKey{sev: d.Severity, summary: d.Summary, detail: d.Detail}
	if d.Subject != nil {
		k.subject = *d.Subject
	}
	return k
}

// dedupe drops repeated diagnostics: a for_each over a thousand rows with
// one mistake should say so once.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	seen := make(map[diagKey]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := keyOf(d)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

// sortDiags orders diagnostics by file and position, those without a
// source location first, so output reads top to bottom.
func sortDiags(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}

// quoteValue quotes a configuration value for a diagnostic, unless it may
// be a secret: diagnostics end up in CI logs.
func quoteValue(v string) string {
	if looksSecret(v) {
		return "a value that looks like a secret (not shown)"
	}
	return strconv.Quote(v)
}
