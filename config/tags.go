package config

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// TagGroups returns the notifications that share a tag with at least one
// other address, by tag, each group in address order. On a device a later
// send with the same tag replaces the earlier one (spec 2.1 rule 5), so the
// planner warns when groups overlap through recipients lists; overlaps of
// targets known in the configuration are errors of Load unless SharedTag.
func (c *Config) TagGroups() map[string][]*Message {
	// Sorted by tag, not counted in a map: tags are often unique (one per
	// order), and a map of ten thousand of them costs more than a sort.
	var tagged []*Message
	for _, m := range c.Messages {
		if m.Kind == KindNotification && m.Content.Tag != "" {
			tagged = append(tagged, m)
		}
	}
	sort.SliceStable(tagged, func(i, j int) bool { return tagged[i].Content.Tag < tagged[j].Content.Tag })
	groups := map[string][]*Message{}
	for i := 0; i < len(tagged); {
		j := i + 1
		for j < len(tagged) && tagged[j].Content.Tag == tagged[i].Content.Tag {
			j++
		}
		if j-i > 1 {
			groups[tagged[i].Content.Tag] = tagged[i:j:j]
		}
		i = j
	}
	return groups
}

// checkSharedTags reports two addresses with the same tag and target kind
// whose targets, known in the configuration (not from recipients lists),
// overlap, unless either sets shared_tag. It runs in time linear in the
// number of target ids: each id remembers the first message that reached
// it, and a later one is compared with that first one only.
func (e *evaluation) checkSharedTags(cfg *Config) hcl.Diagnostics {
	groups := cfg.TagGroups()
	if len(groups) == 0 {
		return nil
	}
	blockOf := map[*Message]*blockResult{}
	fromData := map[*Message]bool{}
	for _, br := range e.blocks {
		data := false
		for _, k := range targetAttrs {
			if a, ok := br.mb.content.Attributes[string(k)]; ok && refersToData(a.Expr, e.dataLocals) {
				data = true
			}
		}
		for _, m := range br.messages {
			blockOf[m] = br
			fromData[m] = data
		}
	}
	tags := make([]string, 0, len(groups))
	for tag := range groups {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	var diags hcl.Diagnostics
	for _, tag := range tags {
		diags = append(diags, sharedTagOverlaps(tag, groups[tag], blockOf, fromData)...)
	}
	return diags
}

// sharedTagOverlaps checks one tag group; one diagnostic per pair of
// blocks, however many of their instances overlap.
func sharedTagOverlaps(tag string, group []*Message, blockOf map[*Message]*blockResult, fromData map[*Message]bool) hcl.Diagnostics {
	type pair struct{ first, later *blockResult }
	type overlap struct {
		first, later *Message // the first two addresses found
		pairs        int      // pairs of addresses that overlap
		shared       int      // targets those pairs have in common
	}
	var order []pair
	found := map[pair]*overlap{}
	owner := map[TargetKind]map[string]*Message{}
	// In source order, so the error is at the block written second.
	group = append([]*Message(nil), group...)
	sort.SliceStable(group, func(i, j int) bool {
		a, b := group[i].Pos, group[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	for _, m := range group {
		if m.SharedTag || m.Targets.Unknown || fromData[m] || blockOf[m] == nil {
			continue
		}
		first := owner[m.Targets.Kind]
		if first == nil {
			first = map[string]*Message{}
			owner[m.Targets.Kind] = first
		}
		counts := map[*Message]int{}
		var owners []*Message // in the order met, for stable output
		for _, id := range m.Targets.IDs {
			o, ok := first[id]
			if !ok {
				first[id] = m
				continue
			}
			if counts[o] == 0 {
				owners = append(owners, o)
			}
			counts[o]++
		}
		for _, o := range owners {
			p := pair{blockOf[o], blockOf[m]}
			ov := found[p]
			if ov == nil {
				ov = &overlap{first: o, later: m}
				found[p] = ov
				order = append(order, p)
			}
			ov.pairs++
			ov.shared += counts[o]
		}
	}
	var diags hcl.Diagnostics
	for _, p := range order {
		ov := found[p]
		kind := ov.later.Targets.Kind
		var what string
		if ov.pairs == 1 {
			what = fmt.Sprintf("%s and %s (%s) both use tag %s and reach %d of the same %s.",
				ov.later.Address, ov.first.Address, rangePos(p.first.mb.block.DefRange), quoteValue(tag), ov.shared, kind)
		} else {
			what = fmt.Sprintf("%d pairs of addresses of %s and %s (%s), such as %s and %s, use tag %s and reach the same %s: %d shared targets in all.",
				ov.pairs, p.later.mb.address(), p.first.mb.address(), rangePos(p.first.mb.block.DefRange), ov.later.Address, ov.first.Address, quoteValue(tag), kind, ov.shared)
		}
		diags = append(diags, errDiag("Shared tag",
			what+" On those devices the later send replaces the earlier one, while the state records both as delivered (spec 2.1 rules 5 and 7). Give each thing announced its own tag, or set shared_tag = true on either block if the replacement is intended.",
			p.later.mb.content.Attributes["tag"].Expr.Range().Ptr()))
	}
	return diags
}
