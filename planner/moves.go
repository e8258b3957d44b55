package planner

import (
	"fmt"
	"sort"

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
		to, ok := cfg.MovedTo(addr)
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
		if _, away := cfg.MovedTo(addr); !away {
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

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// detectRenames pairs addresses the state records and the configuration no
// longer declares (forgotten by this plan, or by the next one when
// --target leaves them out) with new notifications of the same content and
// target kind whose targets overlap: a rename without a moved block, which
// would show the notification again. Each new address is paired with the
// gone one it overlaps most (ties: the first by address), each gone one at
// most once. Expired changes send nothing and are left out. It takes time
// linear in the new addresses' targets.
func detectRenames(changes []*Change, created map[string]*config.Message, st *state.State, declared map[string]bool) []Rename {
	if st == nil || len(created) == 0 {
		return nil
	}
	type key struct {
		fp string
		tk message.TargetKind
	}
	forgotten := map[key][]*state.Message{}
	for _, addr := range st.Addresses() {
		if m := st.Messages[addr]; !declared[addr] && m.Kind == message.KindNotification {
			k := key{m.Fingerprint, m.TargetKind}
			forgotten[k] = append(forgotten[k], m)
		}
	}
	if len(forgotten) == 0 {
		return nil
	}
	used := map[string]bool{}
	var out []Rename
	for _, c := range changes {
		m := created[c.Address]
		if m == nil || c.Action == ActionExpired || c.Kind != message.KindNotification {
			continue
		}
		var best *state.Message
		bestN := 0
		for _, old := range forgotten[key{c.Fingerprint, c.TargetKind}] {
			if used[old.Address] {
				continue
			}
			n := 0
			find := old.Finder()
			for _, id := range m.Targets.IDs {
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
		used[best.Address] = true
		r := Rename{From: best.Address, To: c.Address, Targets: bestN}
		out = append(out, r)
		c.Warnings = append(c.Warnings, fmt.Sprintf("looks like a rename of %s (the same content, which %d of its targets already have): applying would forget %s and send it to them again, so apply refuses this plan unless a moved block records the rename (from = %s, to = %s) or --allow-resend is given",
			r.From, r.Targets, r.From, r.From, r.To))
	}
	return out
}
