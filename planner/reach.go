package planner

import (
	"pushform/message"
	"pushform/state"
)

// Reach is who a plan's sends reach, at a glance: plan --json's
// summary.reach, the plan's reach line.
type Reach struct {
	// Users is the distinct user ids the plan sends to.
	Users int `json:"users"`
	// Devices is the devices the service last reported delivering to
	// for those users (a user's latest delivery's device count; a user
	// never delivered to counts none), plus the device ids the plan
	// sends to directly.
	Devices int `json:"devices"`
	// Topics is the distinct topics the plan sends to.
	Topics int `json:"topics"`
	// NewUsers are the users of Users that no address of the state
	// records a delivery to: their first push from this state.
	NewUsers int `json:"new_users"`
	// AlreadyHad counts the targets sent content they already received
	// (TargetCounts.Repeat: repeat_after, --allow-resend).
	AlreadyHad int `json:"already_had"`
}

// ReachMaxTargets bounds the work of CountReach: a plan that sends more
// targets than this has no reach counted (the distinct ids would be held
// in memory).
const ReachMaxTargets = 1_000_000

// CountReach counts p's reach from st's delivery records (nil st: no
// state yet). It returns nil for a plan that sends more than
// ReachMaxTargets targets. It reads the addresses of st, not the ledger's
// forgotten entries, which a plan does not decode.
func CountReach(p *Plan, st *state.State) *Reach {
	total := 0
	for _, c := range p.Changes {
		total += len(c.Send)
	}
	if total > ReachMaxTargets {
		return nil
	}
	r := &Reach{}
	// users maps each user sent to its latest delivery's device count
	// (-1: none recorded yet) and that delivery's time.
	type last struct {
		devices int
		at      int64
	}
	users := map[string]last{}
	seen := map[message.TargetKind]map[string]bool{message.TargetTopics: {}, message.TargetDevices: {}}
	for _, c := range p.Changes {
		if !SendsNow(c.Action) {
			continue
		}
		r.AlreadyHad += c.Targets.Repeat
		for _, id := range c.Send {
			if c.TargetKind == message.TargetUsers {
				users[id] = last{devices: -1}
				continue
			}
			seen[c.TargetKind][id] = true
		}
	}
	r.Users, r.Topics, r.Devices = len(users), len(seen[message.TargetTopics]), len(seen[message.TargetDevices])
	if st != nil && len(users) > 0 {
		for _, m := range st.Messages {
			if m.TargetKind != message.TargetUsers {
				continue
			}
			for id, t := range m.AllTargets() {
				u, ok := users[id]
				if !ok || t.Outcome != state.Delivered {
					continue
				}
				if at := t.Time.UnixNano(); u.devices < 0 || at > u.at {
					users[id] = last{devices: max(t.DeviceCount, 0), at: at}
				}
			}
		}
	}
	for _, u := range users {
		if u.devices < 0 {
			r.NewUsers++
			continue
		}
		r.Devices += u.devices
	}
	return r
}

// SendsNow reports whether a change of action a sends something when
// applied now (create, send-new, retry, repeat, replace, resend, update:
// the actions that send, waiting ones aside); a no-op, forget, wait or any
// change that holds its targets back does not.
func SendsNow(a Action) bool { return a.Sends() && a != ActionWait }
