package planner

import (
	"pushform/bucket"
	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// Address suffixes of a notification's variants and holdout: variant "a"
// of notification.spring is planned, sent and recorded as
// notification.spring.variant.a, its holdout as notification.spring.holdout,
// so the ledger and history say which variant each target got.
const (
	VariantInfix  = ".variant."
	HoldoutSuffix = ".holdout"
)

// VariantAddress is the address of variant name of the notification at of.
func VariantAddress(of, name string) string { return of + VariantInfix + name }

// VariantInfo says which variant of which address a change is.
type VariantInfo struct {
	Of     string `json:"of"`
	Name   string `json:"name"` // "" for the holdout
	Weight int    `json:"weight,omitempty"`
	// Share is the part of the audience the variant (or holdout) gets:
	// its weight's part of what the holdout leaves.
	Share float64 `json:"share"`
	// Kept counts the targets the ledger had assigned to it already: they
	// keep it, whatever the weights, holdout and salt say now. The share
	// applies to the others.
	Kept int `json:"kept,omitempty"`
}

// variantOf reports whether addr names a variant or the holdout of m.
func variantOf(addr string, m *config.Message) bool {
	if m.Holdout > 0 && addr == m.Address+HoldoutSuffix {
		return true
	}
	for _, v := range m.Variants {
		if addr == VariantAddress(m.Address, v.Name) {
			return true
		}
	}
	return false
}

// variantSalt is what variants are assigned with: the block's salt, apart
// from its rollout's buckets, so a stage holds every variant alike.
func variantSalt(m *config.Message) string { return m.Salt + "/variants" }

// expandVariants replaces each message with variants or a holdout, or
// whose family the ledger records split (see identity.go), by one message
// per variant (and one for the holdout), each with the targets assigned
// to it: by the ledger when it holds their assignment, by bucket
// otherwise. holdouts maps the holdout messages' addresses to their info;
// variants those of the variant messages; gone, by address, the targets
// that received a variant no longer declared (they already had the
// notification); heldKept, by holdout address, how many targets stay
// held out although the configuration holds out no one now.
func expandVariants(msgs []*config.Message, fams *familyIndex) (out []*config.Message, info map[string]*VariantInfo, holdouts map[string]bool, gone map[string]map[string]already, heldKept map[string]int) {
	for _, m := range msgs {
		fam := fams.family(m)
		if len(m.Variants) == 0 && m.Holdout == 0 && fam == nil {
			out = append(out, m)
			continue
		}
		if info == nil {
			info, holdouts = map[string]*VariantInfo{}, map[string]bool{}
		}
		parts := splitVariants(m, fams.assigner(m, fam))
		for i, p := range parts {
			c := *m
			c.Variants, c.Holdout = nil, 0
			c.Targets.IDs = p.ids
			vi := &VariantInfo{Of: m.Address, Share: p.share, Kept: p.kept}
			switch {
			case i == 0: // the holdout
				if m.Holdout == 0 && len(p.ids) == 0 {
					continue
				}
				c.Address = m.Address + HoldoutSuffix
				holdouts[c.Address] = true
				if m.Holdout == 0 {
					if heldKept == nil {
						heldKept = map[string]int{}
					}
					heldKept[c.Address] = len(p.ids)
				}
			case len(m.Variants) == 0: // no variants: the rest get the content
				vi = nil
			default:
				v := m.Variants[i-1]
				c.Address = VariantAddress(m.Address, v.Name)
				c.Content, c.Template = v.Content, v.Template
				vi.Name, vi.Weight = v.Name, v.Weight
			}
			if vi != nil {
				info[c.Address] = vi
			}
			if len(p.gone) > 0 {
				if gone == nil {
					gone = map[string]map[string]already{}
				}
				gone[c.Address] = p.gone
			}
			out = append(out, &c)
		}
	}
	return out, info, holdouts, gone, heldKept
}

type variantPart struct {
	ids   []string
	share float64
	// kept counts the ids whose assignment the ledger held; gone maps
	// those that received a variant no longer declared to that record.
	kept int
	gone map[string]already
}

// splitVariants assigns m's targets: parts[0] the holdout, parts[1+i]
// variant i (parts[1] everyone else when there are no variants). A
// target the family's records assign (as) keeps that assignment; one
// that received a variant no longer declared goes to a variant by bucket
// (never the holdout) and is noted gone. Any other target's point in
// [0, Scale) is below the holdout's cut, or falls in the variants'
// weights laid out over the rest, in their order.
func splitVariants(m *config.Message, as *assigner) []variantPart {
	weights := []int{1}
	if len(m.Variants) > 0 {
		weights = weights[:0]
		for _, v := range m.Variants {
			weights = append(weights, v.Weight)
		}
	}
	total := 0
	for _, w := range weights {
		total += w
	}
	hold := uint64(bucket.Cut(m.Holdout))
	// cuts[i] is the first point past variant i, after the holdout's cut
	// hold (0: the variants alone).
	cutsAfter := func(hold uint64) []uint64 {
		rest := uint64(bucket.Scale) - hold
		cuts := make([]uint64, len(weights))
		acc := 0
		for i, w := range weights {
			acc += w
			cuts[i] = hold + rest*uint64(acc)/uint64(total)
		}
		return cuts
	}
	cuts, noHold := cutsAfter(hold), cutsAfter(0)
	parts := make([]variantPart, 1+len(weights))
	parts[0].share = m.Holdout
	for i, w := range weights {
		parts[1+i].share = (1 - m.Holdout) * float64(w) / float64(total)
	}
	h := bucket.New(variantSalt(m))
	for _, id := range m.Targets.IDs {
		a, ok := as.assigned(id)
		if ok && a.group != groupGone {
			parts[a.group].ids = append(parts[a.group].ids, id)
			parts[a.group].kept++
			continue
		}
		p := uint64(h.Point(id))
		if ok { // a variant no longer declared: it had the notification
			i := variantAt(noHold, p)
			if parts[1+i].gone == nil {
				parts[1+i].gone = map[string]already{}
			}
			parts[1+i].gone[id] = already{rec: a.rec, src: a.src}
			parts[1+i].ids = append(parts[1+i].ids, id)
			parts[1+i].kept++
			continue
		}
		if p < hold {
			parts[0].ids = append(parts[0].ids, id)
			continue
		}
		i := variantAt(cuts, p)
		parts[1+i].ids = append(parts[1+i].ids, id)
	}
	return parts
}

// variantAt is the variant whose range of points holds p.
func variantAt(cuts []uint64, p uint64) int {
	i := 0
	for i < len(cuts)-1 && p >= cuts[i] {
		i++
	}
	return i
}

// holdoutChange plans a holdout: nothing is sent; the targets not yet
// recorded are recorded, those no longer held out forgotten.
func holdoutChange(m *config.Message, prior *state.Message) *Change {
	c := &Change{Address: m.Address, Action: ActionHoldout, Kind: m.Kind, TargetKind: m.Targets.Kind,
		Fingerprint: Fingerprint(m.Kind, m.Content), Content: m.Content}
	c.noteState(prior)
	c.Targets.Total = len(m.Targets.IDs)
	var find *state.TargetFinder
	if prior != nil {
		find = prior.Finder()
		c.Forget = forgotten(m.Targets.IDs, prior, -1)
		c.Targets.Forget = len(c.Forget)
	}
	for _, id := range m.Targets.IDs {
		if find != nil && find.Find(id) != nil {
			continue
		}
		c.Holdout = append(c.Holdout, id)
	}
	c.Targets.Holdout = len(c.Holdout)
	return c
}

// Assign says which part of m each of ids gets, as a plan of cfg over st
// would assign it (by the ledger's records, else by bucket): the message
// of its variant, of m itself when m has no variants, or nil for the
// holdout. render uses it to show a person's text.
func Assign(cfg *config.Config, st *state.State, m *config.Message, ids []string) (map[string]*config.Message, error) {
	moved, _, err := moveState(cfg, st)
	if err != nil {
		return nil, err
	}
	var contents map[string]message.Content
	if moved != nil {
		contents = moved.Contents()
	}
	one := *m
	one.Targets.IDs = ids
	parts, _, holdouts, _, _ := expandVariants([]*config.Message{&one}, newFamilyIndex(moved, cfg, contents))
	out := make(map[string]*config.Message, len(ids))
	for _, p := range parts {
		for _, id := range p.Targets.IDs {
			if holdouts[p.Address] {
				out[id] = nil
			} else {
				out[id] = p
			}
		}
	}
	return out, nil
}
