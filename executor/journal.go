package executor

import (
	"pushform/planner"
	"pushform/state"
)

// A personalised notification is sent as one object per text, and each
// object is an item of the request's intent and outcome (the service
// answers object by object). The journal and the state need no item per
// text: consecutive items of one address and content are recorded as
// one, with each target's text (state.Item.Texts, TextOf), so a million
// texts cost a journal item per request, not a million.

// journalItem is the journal's item of a personalised part pt, whose
// objects' items precede it (it is one of them): every target of pt with
// its text, the texts a slice of the change's own (a part's texts are
// consecutive there, see planner.Personal), not a copy.
func journalItem(it state.Item, pt planner.RequestPart) state.Item {
	texts := pt.Change.Personal.Texts
	lo, hi := pt.Texts[0], pt.Texts[len(pt.Texts)-1]
	it.Targets, it.Texts, it.TextOf = pt.Targets, texts[lo:hi+1:hi+1], nil
	if lo != hi {
		it.TextOf = make([]int32, len(pt.Texts))
		for k, t := range pt.Texts {
			it.TextOf[k] = t - lo
		}
	}
	return it
}

// mergeItems returns e with every run of consecutive items of one address
// and fingerprint made one item; e itself when there is none.
func mergeItems(e state.Entry) state.Entry {
	merged := 0
	for i := 1; i < len(e.Items); i++ {
		if sameItem(&e.Items[i-1], &e.Items[i]) {
			merged++
		}
	}
	if merged == 0 {
		return e
	}
	out := e
	out.Items = make([]state.Item, 0, len(e.Items)-merged)
	for i := 0; i < len(e.Items); {
		j := i + 1
		for j < len(e.Items) && sameItem(&e.Items[j-1], &e.Items[j]) {
			j++
		}
		if j == i+1 {
			out.Items = append(out.Items, e.Items[i])
		} else {
			out.Items = append(out.Items, joinItems(e.Items[i:j]))
		}
		i = j
	}
	return out
}

// sameItem reports whether b continues a: the same address and content,
// texts or outcomes alike.
func sameItem(a, b *state.Item) bool {
	return a.Address == b.Address && a.Fingerprint == b.Fingerprint && a.Kind == b.Kind && a.TargetKind == b.TargetKind &&
		a.To == "" && b.To == "" && (len(a.Texts) > 0) == (len(b.Texts) > 0) && (a.Outcomes != nil) == (b.Outcomes != nil)
}

// joinItems makes one item of items: their targets, texts and outcomes
// in order.
func joinItems(items []state.Item) state.Item {
	n := 0
	for _, it := range items {
		n += len(it.Targets)
	}
	out := items[0]
	out.Targets = make([]string, 0, n)
	if items[0].Outcomes != nil {
		out.Outcomes = make([]*state.Target, 0, n)
	}
	if len(items[0].Texts) > 0 {
		out.Texts, out.TextOf = nil, make([]int32, 0, n)
	}
	for _, it := range items {
		out.Targets = append(out.Targets, it.Targets...)
		out.Outcomes = append(out.Outcomes, it.Outcomes...)
		if len(it.Texts) == 0 {
			continue
		}
		off := int32(len(out.Texts))
		out.Texts = append(out.Texts, it.Texts...)
		for k := range it.Targets {
			out.TextOf = append(out.TextOf, off+textIndex(&it, k))
		}
	}
	return out
}

// textIndex is the index in it.Texts of target k's text.
func textIndex(it *state.Item, k int) int32 {
	if it.TextOf == nil {
		return 0
	}
	return it.TextOf[k]
}
