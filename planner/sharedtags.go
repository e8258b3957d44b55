package planner

import (
	"fmt"
	"sort"

	"pushform/config"
)

// warnSharedTags warns about tagged notifications that share a tag and
// reach the same targets (spec 2.1 rule 7): on those devices the one sent
// later replaces the other, while the state records both as delivered.
// Lists from recipients are only known now, so validate cannot see these.
// A pair is flagged when one of them sends in this plan and neither is
// marked shared_tag. It takes time linear in the targets of the messages
// whose tag another message shares.
func warnSharedTags(msgs []*config.Message, changes []*Change) {
	var tagged []int
	for i, m := range msgs {
		if m.Kind == config.KindNotification && m.Content.Tag != "" {
			tagged = append(tagged, i)
		}
	}
	sort.Slice(tagged, func(a, b int) bool {
		ma, mb := msgs[tagged[a]], msgs[tagged[b]]
		if ma.Targets.Kind != mb.Targets.Kind {
			return ma.Targets.Kind < mb.Targets.Kind
		}
		if ma.Content.Tag != mb.Content.Tag {
			return ma.Content.Tag < mb.Content.Tag
		}
		return ma.Address < mb.Address
	})
	for from := 0; from < len(tagged); {
		to := from + 1
		first := msgs[tagged[from]]
		for to < len(tagged) && msgs[tagged[to]].Targets.Kind == first.Targets.Kind && msgs[tagged[to]].Content.Tag == first.Content.Tag {
			to++
		}
		members := tagged[from:to]
		from = to
		if len(members) < 2 {
			continue
		}
		// Each target remembers the last member reaching it: a chain of
		// replacements is reported pair by pair.
		last := map[string]int{}
		type pair struct{ a, b int }
		overlap := map[pair]int{}
		var pairs []pair
		for j, mi := range members {
			for _, id := range msgs[mi].Targets.IDs {
				if i, ok := last[id]; ok {
					p := pair{i, j}
					if overlap[p] == 0 {
						pairs = append(pairs, p)
					}
					overlap[p]++
				}
				last[id] = j
			}
		}
		for _, p := range pairs {
			a, b := msgs[members[p.a]], msgs[members[p.b]]
			ca, cb := changes[members[p.a]], changes[members[p.b]]
			if a.SharedTag || b.SharedTag || ca.Targets.Send+cb.Targets.Send == 0 {
				continue
			}
			cb.Warnings = append(cb.Warnings, fmt.Sprintf("shares tag %q with %s, and both reach %d of the same %s: on those devices the one sent later replaces the other (spec 2.1 rules 5 and 7) while the state records both as delivered; give each its own tag, or set shared_tag = true on the one meant to replace the other",
				first.Content.Tag, a.Address, overlap[p], targetNoun(first.Targets.Kind)))
		}
	}
}

func targetNoun(k config.TargetKind) string {
	switch k {
	case config.TargetDevices:
		return "devices"
	case config.TargetTopics:
		return "topics"
	}
	return "users"
}
