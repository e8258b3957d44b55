package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Variant is a variant block: one version of a notification's content,
// sent to a share of its audience in proportion to Weight.
type Variant struct {
	Name   string
	Weight int
	// Content is the notification's content with the variant's title,
	// body and open_to_url in place.
	Content Content
	// Template fills in a personalised variant's text per person (see
	// Message.Template); nil for a variant sent as it is.
	Template *Template
	Pos      Pos
}

var variantSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "weight", Required: true},
		{Name: "title"},
		{Name: "body"},
		{Name: "open_to_url"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "translation", LabelNames: []string{"locale"}},
	},
}

// variantBlock is a decoded variant block, evaluated per message instance.
type variantBlock struct {
	attrBlock
	translations []*translationBlock
}

// decodeVariantBlocks decodes the variant blocks of blocks, reporting
// invalid and repeated names.
func decodeVariantBlocks(blocks hcl.Blocks) ([]*variantBlock, hcl.Diagnostics) {
	var out []*variantBlock
	var diags hcl.Diagnostics
	seen := map[string]*hcl.Block{}
	for _, b := range blocks {
		if b.Type != "variant" {
			continue
		}
		if d := checkLabel(b, "variant"); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if first, dup := seen[b.Labels[0]]; dup {
			diags = append(diags, errDiag("Duplicate variant",
				fmt.Sprintf("A notification has one variant %q; the first is at %s.", b.Labels[0], rangePos(first.DefRange)), b.LabelRanges[0].Ptr()))
			continue
		}
		seen[b.Labels[0]] = b
		content, d := b.Body.Content(variantSchema)
		diags = append(diags, d...)
		vb := &variantBlock{attrBlock: attrBlock{block: b, attrs: content.Attributes}}
		vb.translations, d = decodeTranslations(content.Blocks)
		diags = append(diags, d...)
		out = append(out, vb)
	}
	return out, diags
}

// decodeVariants sets m's variants and holdout.
func decodeVariants(m *Message, mb *messageBlock, ctx *hcl.EvalContext, reads personReads) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if len(mb.variants) > 0 && mb.kind == KindBadge {
		return hcl.Diagnostics{errDiag("Variants of a badge",
			"A badge block sets a count; variants of title and body belong in a notification block.", mb.variants[0].block.DefRange.Ptr())}
	}
	for _, vb := range mb.variants {
		v := Variant{Name: vb.block.Labels[0], Content: m.Content, Pos: posOf(vb.block.DefRange)}
		ok := true
		templated := map[string]bool{}
		for _, name := range textFields {
			if a, has := mb.content.Attributes[name]; has && len(reads.of(a.Expr)) > 0 {
				templated[name] = true // the notification's own, filled in per person
			}
		}
		if a, has := vb.attrs["weight"]; has {
			n, set, d := evalCount(a, ctx)
			diags = append(diags, d...)
			v.Weight, ok = n, set
		}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"title", &v.Content.Title}, {"body", &v.Content.Body}, {"open_to_url", &v.Content.OpenToURL}} {
			a, has := vb.attrs[f.name]
			if !has {
				continue
			}
			if len(reads.of(a.Expr)) > 0 {
				templated[f.name] = true // filled in per person (decodeTemplates)
				continue
			}
			s, set, d := evalKnownString(a, ctx)
			diags = append(diags, d...)
			if !set {
				ok = false
				continue
			}
			if strings.TrimSpace(s) == "" {
				diags = append(diags, errDiag("Empty "+f.name, fmt.Sprintf("variant %q sets an empty %s; omit it to keep the notification's own.", v.Name, f.name), a.Expr.Range().Ptr()))
				ok = false
				continue
			}
			*f.dst = s
		}
		if v.Content.Title == "" && !templated["title"] || v.Content.Body == "" && !templated["body"] {
			diags = append(diags, errDiag("Incomplete variant",
				fmt.Sprintf("variant %q needs a title and a body: its own, or the notification's.", v.Name), vb.block.DefRange.Ptr()))
			ok = false
		}
		if ok {
			m.Variants = append(m.Variants, v)
		}
	}
	a, has := mb.content.Attributes["holdout"]
	if !has {
		return diags
	}
	s, set, d := evalKnownString(a, ctx)
	diags = append(diags, d...)
	if !set {
		return diags
	}
	f, err := ParsePercent(s, false)
	switch {
	case err != nil:
		return append(diags, errDiag("Invalid holdout",
			fmt.Sprintf("holdout is the share of the audience that receives nothing, for comparison: %s; got %s.", err, quoteValue(s)), a.Expr.Range().Ptr()))
	case f >= 1:
		return append(diags, errDiag("Invalid holdout",
			"a holdout of 100% leaves no audience: nobody would receive the notification.", a.Expr.Range().Ptr()))
	case mb.kind == KindBadge:
		return append(diags, errDiag("Holdout of a badge", "A badge block sets a count; a holdout belongs in a notification block.", a.NameRange.Ptr()))
	case m.Targets.Kind == TargetTopics:
		return append(diags, errDiag("Holdout with no audience",
			"A holdout keeps some users or devices from the notification; a topics notification has no list of them to hold out from. Address user_ids or device_ids.", a.NameRange.Ptr()))
	}
	m.Holdout = f
	return diags
}
