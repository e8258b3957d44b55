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
)

// messageSchema serves both notification and badge blocks, so that a title
// in a badge block gets a diagnostic that says why, not just "unsupported".
var messageSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each"},
		{Name: "user_ids"},
		{Name: "device_ids"},
		{Name: "topics"},
		{Name: "title"},
		{Name: "body"},
		{Name: "open_to_url"},
		{Name: "badge_count"},
		{Name: "silent_in_foreground"},
		{Name: "tag"},
		{Name: "send_after"},
		{Name: "send_before"},
		{Name: "send_rate"},
		{Name: "max_targets"},
		{Name: "shared_tag"},
		{Name: "enabled"},
		{Name: "repeat_after"},
		{Name: "deliver_at_local"},
		{Name: "ignore_quiet_hours"},
		{Name: "salt"},
		{Name: "holdout"},
		{Name: "on_missing"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "rollout"},
		{Type: "variant", LabelNames: []string{"name"}},
		{Type: "translation", LabelNames: []string{"locale"}},
	},
}

// badgeForbidden are the message attributes a badge block must not set.
var badgeForbidden = []string{"title", "body", "open_to_url", "tag", "silent_in_foreground", "shared_tag", "on_missing"}

// blockAttrs are the message attributes that hold for the whole block, all
// its for_each instances together: evaluated once, without each.
var blockAttrs = []string{"send_rate", "max_targets"}

// messageBlock is a decoded notification or badge block, before for_each
// expansion and evaluation.
type messageBlock struct {
	kind     Kind
	campaign string
	block    *hcl.Block
	content  *hcl.BodyContent
	// duplicate blocks are checked but left out of the Config.
	duplicate bool
	rollout   *rolloutBlock
	variants  []*variantBlock
	// translations are its translation blocks.
	translations []*translationBlock
}

// decodeMessageBlock decodes a notification or badge block, at top level
// (campaign "") or in a campaign; nil when its name is invalid.
func decodeMessageBlock(b *hcl.Block, campaign string) (*messageBlock, hcl.Diagnostics) {
	diags := checkLabel(b, b.Type)
	if diags.HasErrors() {
		return nil, diags
	}
	content, d := b.Body.Content(messageSchema)
	diags = append(diags, d...)
	mb := &messageBlock{kind: Kind(b.Type), campaign: campaign, block: b, content: content}
	mb.rollout, d = decodeRollouts(content.Blocks, "A "+b.Type+" block")
	diags = append(diags, d...)
	mb.variants, d = decodeVariantBlocks(content.Blocks)
	diags = append(diags, d...)
	mb.translations, d = decodeTranslations(content.Blocks)
	diags = append(diags, d...)
	if len(mb.translations) > 0 && mb.kind == KindBadge {
		diags = append(diags, errDiag("Translation of a badge",
			"A badge block sets a count; translations of title and body belong in a notification block.", mb.translations[0].block.DefRange.Ptr()))
	}
	return mb, diags
}

// address is the address of the block before for_each expansion.
func (mb *messageBlock) address() string {
	return blockAddress(mb.campaign, mb.kind, mb.block.Labels[0])
}

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

// forEachInstances evaluates for_each; one unkeyed instance without it.
// ok is false when the block cannot be expanded.
func forEachInstances(mb *messageBlock, ctx *hcl.EvalContext) ([]instance, bool, hcl.Diagnostics) {
	a, ok := mb.content.Attributes["for_each"]
	if !ok {
		return []instance{{}}, true, nil
	}
	bad := func(detail string) ([]instance, bool, hcl.Diagnostics) {
		return nil, false, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Invalid for_each argument", Detail: detail,
			Subject: a.Expr.Range().Ptr(), Expression: a.Expr, EvalContext: ctx,
		}}
	}
	if dependsOnData(a.Expr) {
		return bad("for_each must be known at validate time, so it cannot use data sources. To send to every recipient, use one block with user_ids = data.recipients.NAME.user_ids instead.")
	}
	if out, ok := toSetOfStrings(a.Expr, ctx); ok {
		return out, true, nil
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, false, diags
	}
	withDiags := func(out []instance, ok bool, d hcl.Diagnostics) ([]instance, bool, hcl.Diagnostics) {
		return out, ok, append(diags, d...)
	}
	notKnown := "The for_each value is not known at validate time; it must come from literals, variables, locals or files."
	ty := v.Type()
	// A set is walked once: every walk of a cty set sorts it, which takes
	// most of a second at 100,000 elements.
	if !v.IsKnown() || !ty.IsSetType() && !v.IsWhollyKnown() {
		return withDiags(bad(notKnown))
	}
	if v.IsNull() {
		return withDiags(bad("for_each must be a map or a set of strings, not null."))
	}
	var out []instance
	switch {
	case ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out = append(out, instance{keyed: true, key: k.AsString(), value: ev})
		}
	case ty.IsSetType():
		if !ty.ElementType().Equals(cty.String) {
			return withDiags(bad(fmt.Sprintf("for_each takes a set of strings; this is a set of %s.", ty.ElementType().FriendlyName())))
		}
		for _, ev := range v.AsValueSlice() {
			if !ev.IsKnown() {
				return withDiags(bad(notKnown))
			}
			if ev.IsNull() {
				return withDiags(bad("for_each sets must not contain null."))
			}
			out = append(out, instance{keyed: true, key: ev.AsString(), value: ev})
		}
	case ty.IsListType() || ty.IsTupleType():
		return withDiags(bad("for_each takes a map or a set of strings, and this is a list, whose order would become part of each address. Convert it with toset(...), e.g. for_each = toset([\"a\", \"b\"])."))
	default:
		return withDiags(bad(fmt.Sprintf("for_each takes a map or a set of strings, not %s.", ty.FriendlyName())))
	}
	return out, true, diags
}

// toSetOfStrings evaluates for_each = toset(LIST) when LIST is a known
// list or tuple of strings, without making the set: its instances are
// the distinct strings, exactly as of the set toset would make, whose
// every walk sorts it (most of a second at 100,000 strings). ok is false
// for anything else, which is evaluated as usual.
func toSetOfStrings(expr hcl.Expression, ctx *hcl.EvalContext) ([]instance, bool) {
	call, isCall := expr.(*hclsyntax.FunctionCallExpr)
	if !isCall || call.Name != "toset" || len(call.Args) != 1 || call.ExpandFinal || !hasFunction(ctx, "toset") {
		return nil, false
	}
	v, diags := call.Args[0].Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.IsMarked() || v.ContainsMarked() {
		return nil, false
	}
	ty := v.Type()
	switch {
	case ty.IsListType() && ty.ElementType().Equals(cty.String):
	case ty.IsTupleType() && len(ty.TupleElementTypes()) > 0: // toset([]) is a set of dynamic
		for _, et := range ty.TupleElementTypes() {
			if !et.Equals(cty.String) {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	seen := make(map[string]bool, v.LengthInt())
	out := make([]instance, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if !ev.IsKnown() || ev.IsNull() {
			return nil, false
		}
		k := ev.AsString()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, instance{keyed: true, key: k, value: ev})
	}
	return out, true
}

// hasFunction reports whether ctx (or a parent) defines function name.
func hasFunction(ctx *hcl.EvalContext, name string) bool {
	for ; ctx != nil; ctx = ctx.Parent() {
		if _, ok := ctx.Functions[name]; ok {
			return true
		}
	}
	return false
}

// blockSettings are the values of blockAttrs.
type blockSettings struct {
	sendRate      *Rate
	maxTargets    int
	maxTargetsPos Pos
}

// evalBlockSettings evaluates the attributes that hold for the whole block.
func evalBlockSettings(mb *messageBlock, ctx *hcl.EvalContext) (blockSettings, hcl.Diagnostics) {
	var bs blockSettings
	var diags hcl.Diagnostics
	for _, name := range blockAttrs {
		a, ok := mb.content.Attributes[name]
		if !ok {
			continue
		}
		if usesEach(a.Expr) {
			diags = append(diags, errDiag("Invalid reference to each",
				fmt.Sprintf("%s holds for the whole block, all its for_each instances together, so it cannot use each.", name), a.Expr.Range().Ptr()))
			continue
		}
		switch name {
		case "send_rate":
			r, d := evalRate(a, ctx)
			diags = append(diags, d...)
			bs.sendRate = r
		case "max_targets":
			n, _, d := evalCount(a, ctx)
			diags = append(diags, d...)
			bs.maxTargets, bs.maxTargetsPos = n, posOf(a.NameRange)
		}
	}
	return bs, diags
}

func usesEach(expr hcl.Expression) bool {
	for _, t := range expr.Variables() {
		if t.RootName() == "each" {
			return true
		}
	}
	return false
}

// decodeMessage evaluates one instance of a message block. sc gives the
// declarations names are checked against and the recipients, if fetched.
func decodeMessage(mb *messageBlock, bs blockSettings, in instance, ctx *hcl.EvalContext, sc *scope) (*Message, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	b := mb.block
	attrs := mb.content.Attributes
	m := &Message{
		Address:       mb.address(),
		Kind:          mb.kind,
		Campaign:      mb.campaign,
		Name:          b.Labels[0],
		Key:           in.key,
		Pos:           posOf(b.DefRange),
		SendRate:      bs.sendRate,
		MaxTargets:    bs.maxTargets,
		MaxTargetsPos: bs.maxTargetsPos,
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
		diags = append(diags, errDiag("Missing target",
			fmt.Sprintf("A %s needs exactly one of user_ids, device_ids or topics.", what), b.DefRange.Ptr()))
	case 1:
		diags = append(diags, decodeTargets(m, targets[0], kinds[0], ctx, sc)...)
	default:
		diags = append(diags, decodeTargets(m, targets[0], kinds[0], ctx, sc)...)
		diags = append(diags, errDiag("Conflicting targets",
			fmt.Sprintf("%s and %s cannot be combined: a message addresses exactly one of user_ids, device_ids or topics. Use one block per kind of target.", kinds[0], kinds[1]),
			targets[1].NameRange.Ptr()))
	}

	if mb.kind == KindBadge {
		for _, n := range badgeForbidden {
			if a, ok := attrs[n]; ok {
				diags = append(diags, errDiag("Unsupported argument in badge block",
					fmt.Sprintf("A badge block only sets the badge count; %s belongs in a notification block.", n), a.NameRange.Ptr()))
			}
		}
	}

	// The text attributes may read a person (template.go): they are
	// checked here with every person unknown.
	tctx := textContext(attrs, ctx, sc.env.reads)
	title, titleAttr, hasTitle, d := present(attrs, "title", tctx, cty.String)
	diags = append(diags, d...)
	body, bodyAttr, hasBody, d := present(attrs, "body", tctx, cty.String)
	diags = append(diags, d...)
	count, countAttr, hasCount, d := present(attrs, "badge_count", ctx, cty.Number)
	diags = append(diags, d...)
	if mb.kind == KindNotification && len(mb.variants) == 0 {
		switch {
		case hasTitle && !hasBody:
			diags = append(diags, errDiag("Missing body",
				"A visible notification needs both title and body.", titleAttr.NameRange.Ptr()))
		case hasBody && !hasTitle:
			diags = append(diags, errDiag("Missing title",
				"A visible notification needs both title and body.", bodyAttr.NameRange.Ptr()))
		case !hasTitle && !hasBody && !hasCount && titleAttr == nil && bodyAttr == nil && countAttr == nil:
			diags = append(diags, errDiag("Missing content",
				"A notification needs title and body, or badge_count for a badge-only update (a badge block says that more plainly).", b.DefRange.Ptr()))
		}
	}
	if mb.kind == KindNotification {
		var d hcl.Diagnostics
		m.Content.Title, d = nonEmpty(title, titleAttr, hasTitle)
		diags = append(diags, d...)
		m.Content.Body, d = nonEmpty(body, bodyAttr, hasBody)
		diags = append(diags, d...)
	} else if countAttr == nil {
		diags = append(diags, errDiag("Missing badge_count",
			"A badge block sets the app badge: give badge_count, a whole number of 0 or more.", b.DefRange.Ptr()))
	}
	if hasCount && count.IsKnown() {
		bf := count.AsBigFloat()
		n, acc := bf.Int64()
		if !bf.IsInt() || bf.Sign() < 0 || acc != 0 || n > math.MaxInt32 {
			diags = append(diags, errDiag("Invalid badge_count",
				fmt.Sprintf("badge_count must be a whole number from 0 to %d, got %s.", math.MaxInt32, bf.Text('g', -1)), countAttr.Expr.Range().Ptr()))
		} else {
			c := int(n)
			m.Content.BadgeCount = &c
		}
	}

	if mb.kind == KindNotification {
		diags = append(diags, decodeNotificationOptions(m, attrs, ctx, tctx)...)
	}
	diags = append(diags, decodeRepeat(m, attrs, ctx, sc.campaigns[mb.campaign])...)
	diags = append(diags, decodeLocalDelivery(m, attrs, ctx, sc)...)
	diags = append(diags, decodeSplits(m, mb, ctx, sc.campaigns[mb.campaign])...)
	diags = append(diags, decodeVariants(m, mb, ctx, sc.env.reads)...)
	diags = append(diags, decodeTemplates(m, mb, ctx, sc)...)
	diags = append(diags, decodeWindow(m, attrs, ctx)...)
	return m, diags
}

// decodeNotificationOptions sets what only a notification has: its link,
// its tag (and whether the tag is shared on purpose), and whether it is
// silent in the foreground. The link and the tag may read a person: they
// are evaluated in tctx (see textContext).
func decodeNotificationOptions(m *Message, attrs hcl.Attributes, ctx, tctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	v, a, ok, d := present(attrs, "open_to_url", tctx, cty.String)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		if u, err := url.Parse(v.AsString()); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			diags = append(diags, errDiag("Invalid open_to_url",
				fmt.Sprintf("open_to_url must be an absolute http or https URL, such as \"https://shop.example.com/sale\"; got %q.", v.AsString()), a.Expr.Range().Ptr()))
		} else {
			m.Content.OpenToURL = v.AsString()
		}
	}
	v, a, ok, d = present(attrs, "tag", tctx, cty.String)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		if strings.TrimSpace(v.AsString()) == "" {
			diags = append(diags, errDiag("Empty tag",
				"tag labels the thing announced, so a later send with the same tag replaces this one; omit it rather than leave it empty.", a.Expr.Range().Ptr()))
		} else {
			m.Content.Tag = v.AsString()
		}
	}
	v, _, ok, d = present(attrs, "silent_in_foreground", ctx, cty.Bool)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		m.Content.SilentInForeground = v.True()
	}
	v, a, ok, d = present(attrs, "shared_tag", ctx, cty.Bool)
	diags = append(diags, d...)
	if ok && v.IsKnown() && v.True() {
		m.SharedTag = true
		if _, tagged := attrs["tag"]; !tagged {
			diags = append(diags, warnDiag("shared_tag without tag",
				"shared_tag = true says this notification's tag is shared on purpose; without a tag it has no effect.", a.NameRange.Ptr()))
		}
	}
	return diags
}

// decodeWindow sets send_after and send_before, refusing a window that
// would never open.
func decodeWindow(m *Message, attrs hcl.Attributes, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a, ok := attrs["send_after"]; ok {
		var d hcl.Diagnostics
		m.SendAfter, d = evalTime(a, ctx)
		diags = append(diags, d...)
	}
	if a, ok := attrs["send_before"]; ok {
		var d hcl.Diagnostics
		m.SendBefore, d = evalTime(a, ctx)
		diags = append(diags, d...)
		if m.SendAfter != nil && m.SendBefore != nil && !m.SendBefore.After(*m.SendAfter) {
			diags = append(diags, errDiag("Invalid delivery window",
				fmt.Sprintf("send_before (%s) must be after send_after (%s): the window would never open.",
					m.SendBefore.Format(time.RFC3339), m.SendAfter.Format(time.RFC3339)), a.Expr.Range().Ptr()))
			m.SendBefore = nil
		}
	}
	return diags
}

// decodeRepeat sets enabled and repeat_after on m: the block's own values,
// else those of its campaign c (the zero Campaign at top level). Both may
// differ per for_each instance.
func decodeRepeat(m *Message, attrs hcl.Attributes, ctx *hcl.EvalContext, c Campaign) hcl.Diagnostics {
	m.Disabled, m.RepeatAfter = c.Disabled, c.RepeatAfter
	var diags hcl.Diagnostics
	v, _, ok, d := present(attrs, "enabled", ctx, cty.Bool)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		m.Disabled = v.False()
	}
	v, a, ok, d := present(attrs, "repeat_after", ctx, cty.String)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		r, err := parseDuration(v.AsString())
		if err != nil {
			return append(diags, errDiag("Invalid repeat_after",
				fmt.Sprintf("repeat_after is how long after its last delivery the same content may reach a target again: %s; got %s.", err, quoteValue(v.AsString())), a.Expr.Range().Ptr()))
		}
		m.RepeatAfter = r
	}
	return diags
}

// nonEmpty returns a known title or body, reporting an empty one.
func nonEmpty(v cty.Value, a *hcl.Attribute, set bool) (string, hcl.Diagnostics) {
	if !set || !v.IsKnown() {
		return "", nil
	}
	if strings.TrimSpace(v.AsString()) == "" {
		return "", hcl.Diagnostics{errDiag("Empty "+a.Name,
			fmt.Sprintf("A visible notification needs a non-empty %s.", a.Name), a.Expr.Range().Ptr())}
	}
	return v.AsString(), nil
}
