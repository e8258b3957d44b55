package planner

import (
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"pushform/config"
	"pushform/message"
)

// Local-time delivery and quiet hours. A notification with
// deliver_at_local is due, target by target, at that wall-clock time in
// the target's own zone (config.TimeZones); one under quiet_hours is held
// while the target's local time is inside the window. Both depend on the
// zone alone, so each zone is decided once per change and each target
// costs one zone lookup. Held targets stay unsent (new, or failed, ...),
// so a later plan sends them once they are due: the plan says when, in
// waves.
//
// When a target is due:
//   - "2026-12-01 09:00": at 09:00 on that date in its zone;
//   - "09:00" with send_after: at the first 09:00 in its zone at or after
//     send_after;
//   - "09:00" alone: at 09:00 of its current local day (a plan later that
//     day sends at once; a plan before 09:00 holds it until 09:00).
//
// A wall time a DST change skips is due at the first valid time after it
// (02:30 on a spring-forward night that jumps from 02:00 to 03:00 is
// due at 03:00); a wall time that occurs twice is due at the first.

// Local is what deliver_at_local and quiet_hours do to a change's targets
// not yet delivered; nil on a change they do not touch.
type Local struct {
	// DeliverAtLocal is the configured time ("09:00"), "" without one.
	DeliverAtLocal string `json:"deliver_at_local,omitempty"`
	// QuietHours is the window applied ("21:00-08:00"), "" without one
	// (or with ignore_quiet_hours).
	QuietHours string `json:"quiet_hours,omitempty"`
	// Waves counts, by the UTC time they fall due, the targets this plan
	// looked at: those it sends now (due before the plan's time), those
	// still waiting (due when their moment comes, or when the quiet
	// window it falls in ends), held by quiet hours, or expired. Sorted
	// by At.
	Waves []Wave `json:"waves,omitempty"`
	// NextWave is the earliest time after the plan's at which a held
	// target becomes sendable (a wave falls due or a quiet window ends);
	// nil when none is held.
	NextWave *time.Time `json:"next_wave,omitempty"`
	// QuietOpens is when the first quiet window of the held targets ends.
	QuietOpens *time.Time `json:"quiet_opens,omitempty"`
	// QuietFrom is when the first quiet window of the targets this plan
	// sends begins: the plan's decision to send them holds until then
	// (Plan.DecidedUntil). Nil without quiet hours or targets to send.
	QuietFrom *time.Time `json:"quiet_from,omitempty"`
	// DefaultZone counts the targets looked at whose zone is time_zones'
	// default (not listed in by_user or by_device, or a topic).
	DefaultZone int `json:"default_zone"`
	// Zones is how many distinct zones the targets looked at are in.
	Zones int `json:"zones"`
}

// Wave is the targets of one change that fall due at one time.
type Wave struct {
	At time.Time `json:"at"`
	// Send are sent by this plan, Waiting are not due yet, Quiet are due
	// but held by quiet hours, Expired fall due at or after send_before.
	Send    int `json:"send,omitempty"`
	Waiting int `json:"waiting,omitempty"`
	Quiet   int `json:"quiet,omitempty"`
	Expired int `json:"expired,omitempty"`
}

// verdict is what happens now to the targets of one zone.
type verdict struct {
	what    int       // one of the verdicts below
	due     time.Time // when the wave is due (zero: no deliver_at_local and not held)
	release time.Time // for quiet: when the window ends
}

const (
	vSend = iota
	vWait
	vQuiet
	vExpired
)

// localRule decides zones for one message at one time.
type localRule struct {
	at         *config.LocalTime
	quiet      *config.QuietHours
	sendAfter  *time.Time
	sendBefore *time.Time
	now        time.Time
}

// wallTime is y-mo-d h:m in loc. A wall time that occurs twice (clocks
// set back) is its first occurrence; one skipped by a DST change is the
// first valid time after it (02:30 on a night that jumps from 02:00 to
// 03:00 is 03:00). time.Date promises neither: it picks either side.
func wallTime(y int, mo time.Month, d int, c config.ClockTime, loc *time.Location) time.Time {
	t := time.Date(y, mo, d, c.Hour(), c.Minute(), 0, 0, loc)
	want := time.Date(y, mo, d, c.Hour(), c.Minute(), 0, 0, time.UTC) // the wall time, as if in UTC
	start, end := t.ZoneBounds()
	if t.Hour() == c.Hour() && t.Minute() == c.Minute() {
		// The zone before t's shows this wall time too when its offset
		// was larger: earlier, at want less that offset.
		if !start.IsZero() {
			_, off := start.Add(-time.Second).Zone()
			if e := want.Add(-time.Duration(off) * time.Second); e.Before(start) {
				if l := e.In(loc); time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC).Equal(want) {
					return l
				}
			}
		}
		return t
	}
	got := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
	if got.After(want) { // landed after the gap: the gap ends where its zone starts
		return start
	}
	return end // landed before the gap: it ends where that zone ends
}

// due is when a target in loc falls due under deliver_at_local.
func (r *localRule) due(loc *time.Location) time.Time {
	switch {
	case r.at.Dated:
		return wallTime(r.at.Year, r.at.Month, r.at.Day, r.at.Clock, loc)
	case r.sendAfter != nil:
		s := r.sendAfter.In(loc)
		t := wallTime(s.Year(), s.Month(), s.Day(), r.at.Clock, loc)
		if t.Before(*r.sendAfter) {
			t = wallTime(s.Year(), s.Month(), s.Day()+1, r.at.Clock, loc)
		}
		return t
	}
	n := r.now.In(loc)
	return wallTime(n.Year(), n.Month(), n.Day(), r.at.Clock, loc)
}

// quietEnd is the end of the quiet window t is in, in loc; t itself when
// it is in none.
func (r *localRule) quietEnd(t time.Time, loc *time.Location) time.Time {
	if r.quiet == nil {
		return t
	}
	l := t.In(loc)
	if !r.quiet.Contains(config.ClockTime(l.Hour()*60 + l.Minute())) {
		return t
	}
	end := wallTime(l.Year(), l.Month(), l.Day(), r.quiet.To, loc)
	if !end.After(t) {
		end = wallTime(l.Year(), l.Month(), l.Day()+1, r.quiet.To, loc)
	}
	return end
}

// quietStart is the start of the first quiet window at or after t in loc
// (t when t is in one); zero without quiet hours.
func (r *localRule) quietStart(t time.Time, loc *time.Location) time.Time {
	if r.quiet == nil {
		return time.Time{}
	}
	l := t.In(loc)
	if r.quiet.Contains(config.ClockTime(l.Hour()*60 + l.Minute())) {
		return t
	}
	start := wallTime(l.Year(), l.Month(), l.Day(), r.quiet.From, loc)
	if !start.After(t) {
		start = wallTime(l.Year(), l.Month(), l.Day()+1, r.quiet.From, loc)
	}
	return start
}

// decide is the verdict for the targets in loc.
func (r *localRule) decide(loc *time.Location) verdict {
	var v verdict
	at := r.now
	if r.at != nil {
		v.due = r.due(loc)
		if v.due.After(r.now) {
			// It is due when its time comes, or when the quiet window
			// that time falls in ends: its wave is then.
			at = r.quietEnd(v.due, loc)
			v.what, v.due = vWait, at
			if r.sendBefore != nil && !at.Before(*r.sendBefore) {
				v.what = vExpired
			}
			return v
		}
	}
	if end := r.quietEnd(r.now, loc); end.After(r.now) {
		v.what, v.release = vQuiet, end
		if r.sendBefore != nil && !end.Before(*r.sendBefore) {
			v.what = vExpired
		}
		return v
	}
	return v // vSend
}

// localRuleOf returns the rule for m, nil when neither deliver_at_local
// nor quiet hours apply (badges are never held).
func localRuleOf(m *config.Message, now time.Time) *localRule {
	if m == nil || m.Kind != config.KindNotification {
		return nil
	}
	r := &localRule{at: m.DeliverAtLocal, sendAfter: m.SendAfter, sendBefore: m.SendBefore, now: now}
	if !m.IgnoreQuietHours {
		r.quiet = m.QuietHours
	}
	if r.at == nil && r.quiet == nil {
		return nil
	}
	return r
}

// localParallelFrom is the Send list length from which the zone lookups
// are split between cores.
const localParallelFrom = 50_000

// unsortedMapFrom is the unsorted Send list length from which its zones
// are looked up in a map rather than by binary search.
const unsortedMapFrom = 4096

// holdForLocalTime holds back the targets of c (planned for m) that are
// not due yet or are inside quiet hours, and expires those whose moment
// falls after send_before. It runs before the ledger notes what the plan
// sends and before the frequency caps, which count only what is sent.
func holdForLocalTime(c *Change, m *config.Message, now time.Time) {
	if len(c.Send) == 0 || c.Action == ActionExpired {
		return
	}
	r := localRuleOf(m, now)
	if r == nil {
		return
	}
	zones := m.TimeZones
	if zones == nil {
		zones = config.NewTimeZones(time.UTC, nil, nil)
	}
	applyLocalRule(c, r, zones, m.Targets.Kind)
}

// zoneSlots returns the zone index of each of ids (see config.ZoneList),
// and how many are not listed (in the default zone, index 0). A sorted
// ids list is walked beside the sorted zone list; any other is looked up
// in byID when given (a long list), else searched.
func zoneSlots(ids []string, list *config.ZoneList, sorted bool, byID map[string]uint16) ([]uint16, int) {
	slots := make([]uint16, len(ids))
	defaults := 0
	if len(list.IDs) == 0 {
		return slots, len(ids)
	}
	if !sorted {
		for i, id := range ids {
			var z int
			var ok bool
			if byID != nil {
				var zi uint16
				zi, ok = byID[id]
				z = int(zi)
			} else {
				z, ok = list.Find(id)
			}
			if !ok {
				defaults++
			}
			slots[i] = uint16(z)
		}
		return slots, defaults
	}
	j, _ := slices.BinarySearch(list.IDs, ids[0])
	for i, id := range ids {
		for j < len(list.IDs) && list.IDs[j] < id {
			j++
		}
		if j < len(list.IDs) && list.IDs[j] == id {
			slots[i] = list.Zone[j]
		} else {
			defaults++
		}
	}
	return slots, defaults
}

func applyLocalRule(c *Change, r *localRule, zones *config.TimeZones, kind message.TargetKind) {
	send := c.Send
	list := zones.List(kind)
	sorted := len(list.IDs) > 0 && distinct(send)
	var byID map[string]uint16
	if !sorted && len(list.IDs) > 0 && len(send) >= unsortedMapFrom {
		// Binary searches of a long list miss the cache at every step:
		// one map costs less than a million of them.
		byID = make(map[string]uint16, len(list.IDs))
		for i, id := range list.IDs {
			byID[id] = list.Zone[i]
		}
	}
	workers := 1
	if len(send) >= localParallelFrom {
		workers = min(runtime.GOMAXPROCS(0), 8)
	}
	slots := make([][]uint16, workers)
	defaults := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		from, to := w*len(send)/workers, (w+1)*len(send)/workers
		wg.Go(func() { slots[w], defaults[w] = zoneSlots(send[from:to], list, sorted, byID) })
	}
	// Each zone is decided once, while the workers look targets up.
	verdicts := make([]verdict, len(zones.Zones))
	for i, loc := range zones.Zones {
		verdicts[i] = r.decide(loc)
	}
	wg.Wait()

	l := &Local{QuietHours: quietString(r.quiet)}
	if r.at != nil {
		l.DeliverAtLocal = r.at.String()
	}
	counts := make([]int, len(zones.Zones))
	for w := range workers {
		l.DefaultZone += defaults[w]
		for _, s := range slots[w] {
			counts[s]++
		}
	}
	waves := map[time.Time]*Wave{}
	var t TargetCounts
	for i, n := range counts {
		if n == 0 {
			continue
		}
		l.Zones++
		v := verdicts[i]
		at := v.due
		if at.IsZero() {
			at = r.now
		}
		wv := waves[at]
		if wv == nil {
			wv = &Wave{At: at.UTC()}
			waves[at] = wv
		}
		switch v.what {
		case vSend:
			wv.Send += n
			if q := r.quietStart(r.now, zones.Zones[i]); !q.IsZero() {
				l.QuietFrom = earliest(l.QuietFrom, q)
			}
		case vWait:
			wv.Waiting += n
			t.Waiting += n
			l.NextWave = earliest(l.NextWave, v.due)
		case vQuiet:
			wv.Quiet += n
			t.Quiet += n
			l.NextWave = earliest(l.NextWave, v.release)
			l.QuietOpens = earliest(l.QuietOpens, v.release)
		case vExpired:
			wv.Expired += n
			t.Expired += n
		}
	}
	if held := t.Waiting + t.Quiet + t.Expired; held > 0 {
		kept := make([]string, 0, len(send)-held)
		i := 0
		for w := range workers {
			for _, s := range slots[w] {
				if verdicts[s].what == vSend {
					kept = append(kept, send[i])
				}
				i++
			}
		}
		c.Send = kept
	}
	if r.at != nil { // quiet hours alone have no waves, only the window
		for _, wv := range waves {
			l.Waves = append(l.Waves, *wv)
		}
		sort.Slice(l.Waves, func(i, j int) bool { return l.Waves[i].At.Before(l.Waves[j].At) })
	}
	c.Local = l
	c.Targets.Waiting += t.Waiting
	c.Targets.Quiet += t.Quiet
	c.Targets.Expired += t.Expired
	c.Targets.Send = len(c.Send)
	if len(c.Send) == 0 {
		switch {
		case t.Waiting > 0:
			c.Action = ActionWait
		case t.Quiet > 0:
			c.Action = ActionQuiet
		default:
			c.Action = ActionExpired
		}
	}
}

func earliest(cur *time.Time, t time.Time) *time.Time {
	if cur == nil || t.Before(*cur) {
		u := t.UTC()
		return &u
	}
	return cur
}

func quietString(q *config.QuietHours) string {
	if q == nil {
		return ""
	}
	return q.From.String() + "-" + q.To.String()
}
