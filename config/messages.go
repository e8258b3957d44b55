package config

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// blockAddress is the address of a block before for_each expansion.
func blockAddress(campaign string, kind Kind, name string) string {
	if campaign == "" {
		return string(kind) + "." + name
	}
	return "campaign." + campaign + "." + string(kind) + "." + name
}

// instance is one for_each element; keyed is false without for_each.
type instance struct {
	keyed bool
	key   string
	value cty.Value
}

func (s *loadState) expandMessages() {
	for _, mb := range s.messages {
		insts, ok := s.forEachInstances(mb)
		if !ok {
			continue
		}
		for _, in := range insts {
			ctx := s.ctx
			if in.keyed {
				ctx = s.ctx.NewChild()
				ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{
					"key":   cty.StringVal(in.key),
					"value": in.value,
				})}
			}
			if m := s.decodeMessage(mb, in, ctx); !mb.duplicate {
				s.cfg.Messages = append(s.cfg.Messages, m)
			}
		}
	}
}

func (s *loadState) forEachInstances(mb *messageBlock) ([]instance, bool) {
	a, ok := mb.content.Attributes["for_each"]
	if !ok {
		return []instance{{}}, true
	}
	bad := func(detail string) ([]instance, bool) {
		s.diags = append(s.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Invalid for_each argument", Detail: detail,
			Subject: a.Expr.Range().Ptr(), Expression: a.Expr, EvalContext: s.ctx,
		})
		return nil, false
	}
	if dependsOnData(a.Expr) {
		return bad("for_each must be known at validate time, so it cannot use data sources. To send to every recipient, use one block with user_ids = data.recipients.NAME.user_ids instead.")
	}
	v, d := a.Expr.Value(s.ctx)
	s.diags = append(s.diags, d...)
	if d.HasErrors() {
		return nil, false
	}
	if !v.IsWhollyKnown() {
		return bad("The for_each value is not known at validate time; it must come from literals, variables, locals or files.")
	}
	if v.IsNull() {
		return bad("for_each must be a map or a set of strings, not null.")
	}
	ty := v.Type()
	var out []instance
	switch {
	case ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out = append(out, instance{keyed: true, key: k.AsString(), value: ev})
		}
	case ty.IsSetType():
		if !ty.ElementType().Equals(cty.String) {
			return bad(fmt.Sprintf("for_each takes a set of strings; this is a set of %s.", ty.ElementType().FriendlyName()))
		}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if ev.IsNull() {
				return bad("for_each sets must not contain null.")
			}
			out = append(out, instance{keyed: true, key: ev.AsString(), value: ev})
		}
	case ty.IsListType() || ty.IsTupleType():
		return bad("for_each takes a map or a set of strings, and this is a list, whose order would become part of each address. Convert it with toset(...), e.g. for_each = toset([\"a\", \"b\"]).")
	default:
		return bad(fmt.Sprintf("for_each takes a map or a set of strings, not %s.", ty.FriendlyName()))
	}
	return out, true
}

// present evaluates an optional attribute; set is false when it is absent
// or null. The value is unknown when it could not be evaluated.
func (s *loadState) present(attrs hcl.Attributes, name string, ctx *hcl.EvalContext, ty cty.Type) (cty.Value, *hcl.Attribute, bool) {
	a, ok := attrs[name]
	if !ok {
		return cty.NilVal, nil, false
	}
	v, ok := s.evalAttr(a, ctx, ty)
	if !ok {
		// Already reported; count it as given so no second error follows.
		return cty.UnknownVal(ty), a, true
	}
	if v.IsNull() {
		return cty.NilVal, a, false
	}
	return v, a, true
}

func (s *loadState) decodeMessage(mb *messageBlock, in instance, ctx *hcl.EvalContext) *Message {
	b := mb.block
	attrs := mb.content.Attributes
	m := &Message{
		Address:  blockAddress(mb.campaign, mb.kind, b.Labels[0]),
		Kind:     mb.kind,
		Campaign: mb.campaign,
		Name:     b.Labels[0],
		Key:      in.key,
		Pos:      posOf(b.DefRange),
	}
	if in.keyed {
		m.Address += "[" + strconv.Quote(in.key) + "]"
	}
	what := string(mb.kind) + " block"

	var targets []*hcl.Attribute
	var kinds []TargetKind
	for _, k := range targetAttrs {
		if a, ok := attrs[string(k)]; ok {
			targets = append(targets, a)
			kinds = append(kinds, k)
		}
	}
	switch len(targets) {
	case 0:
		s.diags = append(s.diags, errDiag("Missing target",
			fmt.Sprintf("A %s needs exactly one of user_ids, device_ids or topics.", what), b.DefRange.Ptr()))
	case 1:
		s.decodeTargets(m, targets[0], kinds[0], ctx)
	default:
		s.decodeTargets(m, targets[0], kinds[0], ctx)
		s.diags = append(s.diags, errDiag("Conflicting targets",
			fmt.Sprintf("%s and %s cannot be combined: a message addresses exactly one of user_ids, device_ids or topics. Use one block per kind of target.", kinds[0], kinds[1]),
			targets[1].NameRange.Ptr()))
	}

	if mb.kind == KindBadge {
		for _, n := range badgeForbidden {
			if a, ok := attrs[n]; ok {
				s.diags = append(s.diags, errDiag("Unsupported argument in badge block",
					fmt.Sprintf("A badge block only sets the badge count; %s belongs in a notification block.", n), a.NameRange.Ptr()))
			}
		}
	}

	title, titleAttr, hasTitle := s.present(attrs, "title", ctx, cty.String)
	body, bodyAttr, hasBody := s.present(attrs, "body", ctx, cty.String)
	count, countAttr, hasCount := s.present(attrs, "badge_count", ctx, cty.Number)
	if mb.kind == KindNotification {
		switch {
		case hasTitle && !hasBody:
			s.diags = append(s.diags, errDiag("Missing body",
				"A visible notification needs both title and body.", titleAttr.NameRange.Ptr()))
		case hasBody && !hasTitle:
			s.diags = append(s.diags, errDiag("Missing title",
				"A visible notification needs both title and body.", bodyAttr.NameRange.Ptr()))
		case !hasTitle && !hasBody && !hasCount && titleAttr == nil && bodyAttr == nil && countAttr == nil:
			s.diags = append(s.diags, errDiag("Missing content",
				"A notification needs title and body, or badge_count for a badge-only update (a badge block says that more plainly).", b.DefRange.Ptr()))
		}
		m.Content.Title = s.nonEmpty(title, titleAttr, hasTitle)
		m.Content.Body = s.nonEmpty(body, bodyAttr, hasBody)
	} else if countAttr == nil {
		s.diags = append(s.diags, errDiag("Missing badge_count",
			"A badge block sets the app badge: give badge_count, a whole number of 0 or more.", b.DefRange.Ptr()))
	}
	if hasCount && count.IsKnown() {
		bf := count.AsBigFloat()
		n, acc := bf.Int64()
		if !bf.IsInt() || bf.Sign() < 0 || acc != 0 || n > math.MaxInt32 {
			s.diags = append(s.diags, errDiag("Invalid badge_count",
				fmt.Sprintf("badge_count must be a whole number from 0 to %d, got %s.", math.MaxInt32, bf.Text('g', -1)), countAttr.Expr.Range().Ptr()))
		} else {
			c := int(n)
			m.Content.BadgeCount = &c
		}
	}

	if mb.kind == KindNotification {
		if v, a, ok := s.present(attrs, "open_to_url", ctx, cty.String); ok && v.IsKnown() {
			if u, err := url.Parse(v.AsString()); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				s.diags = append(s.diags, errDiag("Invalid open_to_url",
					fmt.Sprintf("open_to_url must be an absolute http or https URL, such as \"https://shop.example.com/sale\"; got %q.", v.AsString()), a.Expr.Range().Ptr()))
			} else {
				m.Content.OpenToURL = v.AsString()
			}
		}
		if v, a, ok := s.present(attrs, "tag", ctx, cty.String); ok && v.IsKnown() {
			if strings.TrimSpace(v.AsString()) == "" {
				s.diags = append(s.diags, errDiag("Empty tag",
					"tag labels the thing announced, so a later send with the same tag replaces this one; omit it rather than leave it empty.", a.Expr.Range().Ptr()))
			} else {
				m.Content.Tag = v.AsString()
			}
		}
		if v, _, ok := s.present(attrs, "silent_in_foreground", ctx, cty.Bool); ok && v.IsKnown() {
			m.Content.SilentInForeground = v.True()
		}
	}
	if v, a, ok := s.present(attrs, "send_after", ctx, cty.String); ok && v.IsKnown() {
		t, err := time.Parse(time.RFC3339, v.AsString())
		if err != nil {
			s.diags = append(s.diags, errDiag("Invalid send_after",
				fmt.Sprintf("send_after must be an RFC 3339 time such as \"2026-05-01T09:00:00Z\"; got %q.", v.AsString()), a.Expr.Range().Ptr()))
		} else {
			m.SendAfter = &t
		}
	}
	return m
}

// nonEmpty returns a known title or body, reporting an empty one.
func (s *loadState) nonEmpty(v cty.Value, a *hcl.Attribute, set bool) string {
	if !set || !v.IsKnown() {
		return ""
	}
	if strings.TrimSpace(v.AsString()) == "" {
		s.diags = append(s.diags, errDiag("Empty "+a.Name,
			fmt.Sprintf("A visible notification needs a non-empty %s.", a.Name), a.Expr.Range().Ptr()))
		return ""
	}
	return v.AsString()
}

func (s *loadState) decodeTargets(m *Message, a *hcl.Attribute, kind TargetKind, ctx *hcl.EvalContext) {
	m.Targets.Kind = kind
	m.TargetsPos = posOf(a.NameRange)
	if name, ok := recipientsRef(a.Expr); ok && kind == TargetUsers {
		if _, declared := s.data[name]; !declared {
			s.diags = append(s.diags, errDiag("Reference to undeclared data source",
				fmt.Sprintf("There is no data source data.recipients.%s; declare it with data \"recipients\" %q {}.", name, name), a.Expr.Range().Ptr()))
			return
		}
		m.Targets.Recipients = name
		if ids, ok := s.opts.Recipients[name]; ok {
			m.Targets.IDs = ids // shared, not copied: the list may be huge
		} else {
			m.Targets.Unknown = true
		}
		return
	}
	v, ok := s.evalAttr(a, ctx, cty.DynamicPseudoType)
	if !ok {
		return
	}
	if !v.IsWhollyKnown() {
		m.Targets.Unknown = true
		return
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) {
		got := "null"
		if !v.IsNull() {
			got = ty.FriendlyName()
		}
		s.diags = append(s.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Invalid " + string(kind),
			Detail:     fmt.Sprintf("%s must be a list of strings, such as [\"id-1\"]; got %s.", kind, got),
			Subject:    a.Expr.Range().Ptr(),
			Expression: a.Expr, EvalContext: ctx,
		})
		return
	}
	n := v.LengthInt()
	if n == 0 && !dependsOnData(a.Expr) {
		s.diags = append(s.diags, errDiag("Empty target list",
			fmt.Sprintf("%s is empty, so this message would reach no one. List at least one id or remove the block.", kind), a.Expr.Range().Ptr()))
		return
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
			s.diags = append(s.diags, errDiag("Invalid id", fmt.Sprintf("Element %d of %s is null; ids are non-empty strings.", i, kind), rng.Ptr()))
			continue
		}
		conv, err := convert.Convert(e, cty.String)
		if err != nil {
			s.diags = append(s.diags, errDiag("Invalid id", fmt.Sprintf("Element %d of %s must be a string, got %s.", i, kind, e.Type().FriendlyName()), rng.Ptr()))
			continue
		}
		id := conv.AsString()
		if strings.TrimSpace(id) == "" {
			s.diags = append(s.diags, errDiag("Empty id", fmt.Sprintf("Element %d of %s is an empty string; ids are non-empty strings.", i, kind), rng.Ptr()))
			continue
		}
		if seen[id] {
			// A warning: the duplicate is dropped, so nobody gets two
			// pushes, but it often hides a copy-paste mistake.
			s.diags = append(s.diags, warnDiag("Duplicate id",
				fmt.Sprintf("%q appears more than once in %s; it is sent to once.", id, kind), rng.Ptr()))
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if kind == TargetTopics {
			if _, declared := s.cfg.Topics[id]; !declared {
				s.diags = append(s.diags, warnDiag("Undeclared topic",
					fmt.Sprintf("No topic block declares %q. Declare it with topic %q {} and refer to it as topic.%s.name, so typos show up in review.", id, id, id), rng.Ptr()))
			}
		}
	}
	m.Targets.IDs = ids
}
