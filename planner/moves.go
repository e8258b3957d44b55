package planner

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// moveState returns st as the moved blocks of cfg rename it: every
// recorded address a moved block applies to is recorded under its new
// address. movedFrom maps each new address to the one recorded. st itself
// is not changed; the returned state shares its messages' targets.
func moveState(cfg *config.Config, st *state.State) (*state.State, map[string]string, error) {
	if st == nil || len(cfg.Moved) == 0 {
		return st, nil, nil
	}
	movedFrom := map[string]string{}
	for _, addr := range st.Addresses() {
		to, ok := movedTo(cfg, addr)
		if !ok {
			continue
		}
		if other, dup := movedFrom[to]; dup {
			return nil, nil, fmt.Errorf("moved blocks move both %s and %s of the state to %s: an address can hold the state of one only; remove one of them from the state (pushform state rm ADDR) or correct the moved blocks", other, addr, to)
		}
		movedFrom[to] = addr
	}
	if len(movedFrom) == 0 {
		return st, nil, nil
	}
	out := *st
	out.Messages = make(map[string]*state.Message, len(st.Messages))
	for addr, m := range st.Messages {
		if _, away := movedTo(cfg, addr); !away {
			out.Messages[addr] = m
		}
	}
	for _, to := range sortedStrings(movedFrom) {
		from := movedFrom[to]
		if _, taken := out.Messages[to]; taken {
			return nil, nil, fmt.Errorf("a moved block moves %s to %s, but the state already records %s: a move cannot merge two addresses. Remove one of them from the state (pushform state rm ADDR), or remove the moved block", from, to, to)
		}
		m := *st.Messages[from]
		m.Address = to
		out.Messages[to] = &m
	}
	return &out, movedFrom, nil
}

// movedTo is where the moved blocks of cfg put the recorded address addr
// (see config.Config.MovedTo); the variants and the holdout of a
// notification move with it.
func movedTo(cfg *config.Config, addr string) (string, bool) {
	if to, ok := cfg.MovedTo(addr); ok {
		return to, true
	}
	base, part, _ := splitVariantAddress(addr)
	if part == partBase {
		return addr, false
	}
	to, ok := cfg.MovedTo(base)
	if !ok {
		return addr, false
	}
	return to + addr[len(base):], true
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// renameWindow is how long after an address was forgotten a new address
// reaching its targets is still taken for a rename of it.
const renameWindow = 7 * 24 * time.Hour

// detectRenames pairs addresses the configuration no longer declares
// (forgotten by this plan, by the next one when --target leaves them out,
// or forgotten within renameWindow and kept in the ledger) with new
// notifications of the same target kind that send to targets the old one
// reached (or may have) with content that looks edited from the old one
// (see edited): a rename without a moved block. Targets that already have the very content are not sent (the
// ledger makes them already-delivered), so what remains is an edit made
// together with the rename: it is warned as the same edit on one address
// would be, and apply refuses it unless a moved block records the rename
// or --allow-resend is given. Splits and merges of blocks pair the same
// way. Each new address is paired with the gone one it overlaps most
// (ties: the first by address), each gone one at most once. It takes time
// linear in the new addresses' sends per candidate.
func detectRenames(cfg *config.Config, changes []*Change, created map[string]*config.Message, st *state.State, declared map[string]bool, now time.Time) []Rename {
	if st == nil || len(created) == 0 {
		return nil
	}
	byKind := map[message.TargetKind][]*state.Message{}
	for _, addr := range st.Addresses() {
		if m := st.Messages[addr]; !declared[addr] && m.Kind == message.KindNotification {
			byKind[m.TargetKind] = append(byKind[m.TargetKind], m)
		}
	}
	for _, m := range st.Ledger {
		if m.Kind == message.KindNotification && !m.ForgottenAt.IsZero() && now.Sub(m.ForgottenAt) < renameWindow && !movedAway(cfg, m.Address) {
			byKind[m.TargetKind] = append(byKind[m.TargetKind], m)
		}
	}
	if len(byKind) == 0 {
		return nil
	}
	used := map[*state.Message]bool{}
	var out []Rename
	for _, c := range changes {
		m := created[c.Address]
		if m == nil || c.Action == ActionExpired || c.Kind != message.KindNotification {
			continue
		}
		// What it sends; a create waiting for send_after will send its
		// targets (but not content they have: the ledger keeps them back).
		sends := c.Send
		if c.Action == ActionWait || c.Local != nil { // local time sends the rest later
			sends = m.Targets.IDs
		}
		var best *state.Message
		bestN := 0
		for _, old := range byKind[c.TargetKind] {
			if used[old] || old.Address == c.Address || c.Action == ActionWait && old.Fingerprint == c.Fingerprint || !edited(old.Content, c.Content) {
				continue
			}
			n := 0
			find := old.Finder()
			for _, id := range sends {
				if t := find.Find(id); t != nil && mayHold(t) {
					n++
				}
			}
			if n > bestN {
				best, bestN = old, n
			}
		}
		if best == nil {
			continue
		}
		used[best] = true
		r := Rename{From: best.Address, To: c.Address, Targets: bestN}
		if best.Fingerprint == c.Fingerprint {
			r.Same = true
		} else {
			r.Replaces = best.Content.Tag != "" && best.Content.Tag == c.Content.Tag
		}
		out = append(out, r)
		c.Warnings = append(c.Warnings, renameWarning(r, best.Content, c.Content))
	}
	return out
}

// movedAway reports whether a moved block of cfg moves addr elsewhere.
func movedAway(cfg *config.Config, addr string) bool {
	_, ok := movedTo(cfg, addr)
	return ok
}

// edited reports whether new looks like old edited rather than another
// notification: the same title, body or tag, or the same text but for
// spaces. Content sent again unchanged counts too.
func edited(old, new message.Content) bool {
	squash := func(c message.Content) string { return strings.Join(strings.Fields(c.Title+" "+c.Body), " ") }
	return old.Title != "" && old.Title == new.Title || old.Body != "" && old.Body == new.Body ||
		old.Tag != "" && old.Tag == new.Tag || squash(old) == squash(new)
}

// renameWarning explains a rename r from content old to new as the same
// edit on one address would be explained.
func renameWarning(r Rename, old, new message.Content) string {
	var what string
	switch {
	case r.Same:
		what = fmt.Sprintf(" (the same content, which %d of its targets already have): applying would send it to them again", r.Targets)
	case old.Tag != "" && old.Tag == new.Tag:
		what = fmt.Sprintf(" with its content changed: %d of its targets have the earlier notification (tag %q), which devices replace with this one, as after an edit of %s", r.Targets, old.Tag, r.From)
	default:
		what = fmt.Sprintf(" with its content changed: %d of its targets have the earlier notification and will show both, as after an edit of %s without the same tag", r.Targets, r.From)
	}
	return fmt.Sprintf("looks like a rename of %s%s; apply refuses this plan unless a moved block records the rename (from = %s, to = %s) or --allow-resend is given",
		r.From, what, r.From, r.To)
}
