package planner

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"pushform/config"
)

// paceGroups returns the send_rate groups message m's sends count in, and
// adds any new one to paces: the block's own send_rate (all its for_each
// instances together) and its campaign's.
func paceGroups(cfg *config.Config, m *config.Message, paces map[string]*Pace) []string {
	var groups []string
	add := func(g string, r *config.Rate) {
		if r == nil || r.Count < 1 || r.Per <= 0 {
			return
		}
		if paces[g] == nil {
			paces[g] = &Pace{Group: g, Count: r.Count, Per: r.Per}
		}
		groups = append(groups, g)
	}
	if m.Campaign != "" {
		c := cfg.Campaigns[m.Campaign]
		add("campaign."+m.Campaign, c.SendRate)
	}
	add(blockOf(m.Address), m.SendRate)
	sort.Strings(groups)
	return groups
}

// blockOf is the address of the block an instance address belongs to:
// notification.order["A-1"] is of notification.order.
func blockOf(addr string) string {
	if i := strings.IndexByte(addr, '['); i >= 0 {
		return addr[:i]
	}
	return addr
}

// chunk is how many targets one request of a paced group carries: about
// one second of the slowest rate (at least one target, at most limit), so
// pacing is smooth and an interrupt leaves little in flight.
func chunk(groups []string, paces map[string]*Pace, limit int) int {
	n := limit
	for _, g := range groups {
		p := paces[g]
		perSecond := int(int64(p.Count) * int64(time.Second) / int64(p.Per))
		n = min(n, max(perSecond, 1))
	}
	return n
}

// batches packs the changes' Send lists into requests of at most limit
// targets; small notifications share a request (spec 4.1). Changes paced
// by send_rate are packed only with changes of the same groups, in
// requests of about a second of their rate; unpaced requests come first,
// then the paced ones of each set of groups in turn, so that groups are
// paced side by side.
func batches(changes []*Change, limit int, paces map[string]*Pace) []Batch {
	byKey := map[string][]int{}
	var keys []string
	for i, c := range changes {
		if len(c.Send) == 0 {
			continue
		}
		k := strings.Join(c.Paces, "\x00")
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	sort.Strings(keys) // "" (unpaced) first
	var out []Batch
	var paced [][]Batch
	for _, k := range keys {
		idx := byKey[k]
		n := limit
		if k != "" {
			n = chunk(changes[idx[0]].Paces, paces, limit)
		}
		bs := pack(changes, idx, n)
		if k == "" {
			out = bs
		} else {
			paced = append(paced, bs)
		}
	}
	for i := 0; ; i++ {
		more := false
		for _, bs := range paced {
			if i < len(bs) {
				out = append(out, bs[i])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// pack packs changes idx into requests of at most limit targets. A
// target never joins a request that another change in it already
// addresses (see addressed): the request ends before it.
func pack(changes []*Change, idx []int, limit int) []Batch {
	var out []Batch
	var cur Batch
	var in addressed
	n := 0
	flush := func() {
		out = append(out, cur)
		cur, n = Batch{}, 0
		in.reset()
	}
	for _, i := range idx {
		c := changes[i]
		for from := 0; from < len(c.Send); {
			if n == limit {
				flush()
			}
			to := min(len(c.Send), from+limit-n)
			to = from + in.fit(i, c.TargetKind, c.Send[from:to])
			if to == from {
				flush() // the next target is in the request already
				continue
			}
			cur.Parts = append(cur.Parts, Part{Change: i, From: from, To: to})
			in.add(i, c.TargetKind, c.Send[from:to])
			n += to - from
			from = to
		}
	}
	if n > 0 {
		out = append(out, cur)
	}
	return out
}

// pacing fills in what the plan sends in each group, sorted by group, and
// warns about a delivery window the pacing will not fit in.
func pacing(p *Plan, paces map[string]*Pace, now time.Time) []Pace {
	if len(paces) == 0 {
		return nil
	}
	for _, c := range p.Changes {
		for _, g := range c.Paces {
			paces[g].Targets += len(c.Send)
		}
	}
	for _, b := range p.Batches {
		for _, g := range p.Changes[b.Parts[0].Change].Paces {
			paces[g].Requests++
		}
	}
	var out []Pace
	for _, g := range sortedStrings(paces) {
		pc := paces[g]
		if pc.Targets == 0 {
			continue
		}
		pc.Duration = pc.Interval(pc.Targets)
		out = append(out, *pc)
	}
	for _, c := range p.Changes {
		if c.SendBefore == nil || len(c.Send) == 0 || len(c.Paces) == 0 {
			continue
		}
		var slowest Pace
		for _, g := range c.Paces {
			if pc := paces[g]; pc.Duration > slowest.Duration {
				slowest = *pc
			}
		}
		if left := c.SendBefore.Sub(now); slowest.Duration > left {
			c.Warnings = append(c.Warnings, fmt.Sprintf("at %s, %s takes about %s to send %d targets, but send_before (%s) is %s away: the targets not sent by then are recorded failed and expire",
				slowest.Rate(), slowest.Group, roundDuration(slowest.Duration), slowest.Targets, c.SendBefore.UTC().Format(time.RFC3339), roundDuration(max(left, 0))))
		}
	}
	return out
}

// roundDuration rounds d for people: whole seconds, or minutes past an hour.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
