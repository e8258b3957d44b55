package operation

import (
	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/views"
)

// audienceMaxTargets bounds the work of planAudience: past this many
// recorded targets (or recipients) it leaves the device counts (or the
// list's change) out rather than hold an index of millions in memory.
const audienceMaxTargets = 500_000

// Audience is what the state read says about the audience of p's
// changes, for the plan comment (see planAudience).
func (r *Run) Audience(p *planner.Plan) *views.Audience {
	return planAudience(p, r.Session.State)
}

// planAudience is what the state says about the audience of p's changes,
// for the plan comment: the devices the service last reported for each
// change's targets, and how the recipients list changed since the list
// recorded at the last apply. Nil when there is no state.
func planAudience(p *planner.Plan, st *state.State) *views.Audience {
	if st == nil {
		return nil
	}
	a := &views.Audience{}
	if idx := deviceIndex(st); idx != nil {
		for _, c := range p.Changes {
			if c.Kind == message.KindBadge || c.TargetKind == message.TargetDevices || len(c.Send) == 0 {
				continue
			}
			var d views.Devices
			for _, id := range c.Send {
				if s, ok := idx[c.TargetKind][id]; ok {
					d.Count += s.devices
					d.Of++
				}
			}
			if d.Of > 0 {
				if a.Devices == nil {
					a.Devices = map[string]views.Devices{}
				}
				a.Devices[c.Address] = d
			}
		}
	}
	if p.Refreshed && p.Recipients != nil && st.Recipients != nil {
		a.Recipients = listDiff(st.Recipients.UserIDs, p.Recipients.UserIDs)
	}
	if a.Devices == nil && a.Recipients == nil {
		return nil
	}
	return a
}

// lastDevices is the device count of a target's latest delivery, and
// when that was (UnixNano).
type lastDevices struct {
	devices int
	at      int64
}

// deviceIndex maps each recorded user and topic to its latest delivery's
// device count, or nil when the state is too large to index.
func deviceIndex(st *state.State) map[message.TargetKind]map[string]lastDevices {
	total := 0
	for _, m := range st.Messages {
		total += m.TargetCount()
	}
	if total > audienceMaxTargets {
		return nil
	}
	latest := map[message.TargetKind]map[string]lastDevices{}
	for _, m := range st.Messages {
		if m.Kind == message.KindBadge || m.TargetKind == message.TargetDevices {
			continue
		}
		byID := latest[m.TargetKind]
		if byID == nil {
			byID = map[string]lastDevices{}
			latest[m.TargetKind] = byID
		}
		for id, t := range m.AllTargets() {
			if t.Outcome != state.Delivered || t.DeviceCount <= 0 {
				continue
			}
			if prev, ok := byID[id]; !ok || t.Time.UnixNano() > prev.at {
				byID[id] = lastDevices{t.DeviceCount, t.Time.UnixNano()}
			}
		}
	}
	return latest
}

// listDiff compares the recipients list before and after, or nil when
// either is too long to compare in memory.
func listDiff(before, after []string) *views.ListDiff {
	if len(before) > audienceMaxTargets || len(after) > audienceMaxTargets {
		return nil
	}
	was := make(map[string]bool, len(before))
	for _, id := range before {
		was[id] = true
	}
	d := &views.ListDiff{}
	now := make(map[string]bool, len(after))
	for _, id := range after {
		if now[id] {
			continue
		}
		now[id] = true
		if !was[id] {
			d.Added++
		}
	}
	for id := range was {
		if !now[id] {
			d.Removed++
		}
	}
	d.Total = len(now)
	return d
}
