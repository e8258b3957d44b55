package planner

import (
	"strings"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// Frequency caps. A frequency_cap { max, per } holds a user back once max
// notifications were delivered to them within per before the plan's time:
// the top-level cap counts every notification address of the state, a
// campaign's cap the campaign's own. Every delivery in the ledger counts:
// forgotten addresses and content an address replaced included (an
// address's view keeps each target's last outcome, so one content of an
// address counts once per user, with the time of its last delivery). An
// unknown outcome counts as a delivery: the service may have processed the
// request whose answer was lost, and a cap is a promise to the user. Only
// notifications to user_ids count and are held: badges
// are never capped, and the users behind device ids and topics are not
// known. Within one plan, sends count as they are planned, in address
// order: with max = 1, of two new notifications to the same user the
// first by address is sent and the second held. A held target stays
// unsent, so a later plan sends it once the cap allows.

// capCounter counts, per user, the notifications under one cap: those
// delivered within the window and those this plan sends.
type capCounter struct {
	cap    *config.FrequencyCap
	counts map[string]int32
}

// newCapCounter counts the deliveries of st's notification addresses for
// which in(addr) holds, delivered after now - per.
func newCapCounter(fc *config.FrequencyCap, st *state.State, now time.Time, in func(addr string) bool) *capCounter {
	cc := &capCounter{cap: fc}
	if st == nil {
		cc.counts = map[string]int32{}
		return cc
	}
	counted := func(addr string, m *state.Message) bool {
		return m.Kind == message.KindNotification && m.TargetKind == message.TargetUsers && in(addr)
	}
	// Sized for the largest address: growing a map of a million users
	// step by step costs more than counting them.
	size := 0
	for addr, m := range st.Messages {
		if counted(addr, m) {
			size = max(size, m.TargetCount())
		}
	}
	cc.counts = make(map[string]int32, size)
	since := now.Add(-fc.Per)
	for m := range st.LedgerMessages() {
		if !counted(m.Address, m) || !mayDeliverSince(m, since) {
			continue
		}
		// Equal records are shared between targets: decide once each.
		var last *state.Target
		lastIn := false
		for id, t := range m.AllTargets() {
			if t != last {
				last, lastIn = t, mayHaveReached(t) && t.Time.After(since)
			}
			if lastIn {
				cc.counts[id]++
			}
		}
	}
	return cc
}

// mayHaveReached reports whether t's notification may be on the device: a
// delivery, or a send whose answer never came (counted as delivered).
func mayHaveReached(t *state.Target) bool {
	return t.Outcome == state.Delivered || t.Outcome == state.Unknown
}

// mayDeliverSince reports whether m may hold a delivery after since: a
// ledger entry forgotten before it holds none (its targets are not read).
func mayDeliverSince(m *state.Message, since time.Time) bool {
	return m.ForgottenAt.IsZero() || m.ForgottenAt.After(since)
}

// capping holds the counters of the caps a plan applies.
type capping struct {
	top       *capCounter
	campaigns map[string]*capCounter
}

func newCapping(cfg *config.Config, st *state.State, now time.Time) *capping {
	cp := &capping{campaigns: map[string]*capCounter{}}
	if cfg.FrequencyCap != nil {
		cp.top = newCapCounter(cfg.FrequencyCap, st, now, func(string) bool { return true })
	}
	for name, c := range cfg.Campaigns {
		if c.FrequencyCap != nil {
			prefix := "campaign." + name + "."
			cp.campaigns[name] = newCapCounter(c.FrequencyCap, st, now, func(addr string) bool { return strings.HasPrefix(addr, prefix) })
		}
	}
	return cp
}

// applyCaps holds back, change by change in address order, the targets a
// cap does not allow, and counts the others as sent.
func applyCaps(cfg *config.Config, st *state.State, now time.Time, changes []*Change, msgs map[string]*config.Message) {
	if cfg.FrequencyCap == nil && !anyCampaignCap(cfg) {
		return
	}
	cp := newCapping(cfg, st, now)
	for _, c := range changes {
		m := msgs[c.Address]
		if m == nil || len(c.Send) == 0 || c.Kind != message.KindNotification || c.TargetKind != message.TargetUsers {
			continue
		}
		var caps []*capCounter
		if cp.top != nil {
			caps = append(caps, cp.top)
		}
		if cc := cp.campaigns[m.Campaign]; m.Campaign != "" && cc != nil {
			caps = append(caps, cc)
		}
		if len(caps) == 0 {
			continue
		}
		capped := 0
		c.keepSend(func(id string) bool {
			for _, cc := range caps {
				if cc.counts[id] >= int32(cc.cap.Max) {
					capped++
					return false
				}
			}
			for _, cc := range caps {
				cc.counts[id]++
			}
			return true
		})
		if capped == 0 {
			continue
		}
		c.Targets.Capped = capped
		c.Targets.Send = len(c.Send)
		if len(c.Send) == 0 {
			c.Action = ActionCapped
		}
	}
}

// capTime is the time frequency caps count back from: the plan's, or when
// its sends go out earlier (SendAt), that.
func (opts Options) capTime() time.Time {
	if !opts.SendAt.IsZero() && opts.SendAt.Before(opts.Now) {
		return opts.SendAt
	}
	return opts.Now
}

func anyCampaignCap(cfg *config.Config) bool {
	for _, c := range cfg.Campaigns {
		if c.FrequencyCap != nil {
			return true
		}
	}
	return false
}
