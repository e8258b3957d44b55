package planner

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pushform/config"
	"pushform/config/tzdb"
	"pushform/state"
)

// zone loads a zone from the database the binary embeds, as
// configurations do.
func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := tzdb.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestWallTimeDST(t *testing.T) {
	ny := zone(t, "America/New_York")
	tests := []struct {
		name string
		date time.Time // y-m-d in UTC
		at   config.ClockTime
		want time.Time
		zone string // "": New York
	}{
		{"plain winter", time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), 9 * 60, time.Date(2027, 1, 15, 14, 0, 0, 0, time.UTC), ""},
		{"spring-forward day, after the change", time.Date(2027, 3, 14, 0, 0, 0, 0, time.UTC), 9 * 60, time.Date(2027, 3, 14, 13, 0, 0, 0, time.UTC), ""},
		// 02:30 does not exist on 2027-03-14 in New York: 02:00 EST jumps to 03:00 EDT (07:00Z).
		{"skipped wall time", time.Date(2027, 3, 14, 0, 0, 0, 0, time.UTC), 2*60 + 30, time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC), ""},
		{"skipped hour start", time.Date(2027, 3, 14, 0, 0, 0, 0, time.UTC), 2 * 60, time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC), ""},
		// 01:30 occurs twice on 2026-11-01; the first (EDT, 05:30Z) counts.
		{"repeated wall time", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 90, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), ""},
		{"fall-back day, after the change", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 9 * 60, time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC), ""},
		// East of UTC: 02:30 occurs twice on 2026-10-25 in Berlin; the
		// first is CEST, 00:30Z (time.Date gives the second, 01:30Z).
		{"repeated wall time east of UTC", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), 2*60 + 30, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), "Europe/Berlin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := ny
			if tt.zone != "" {
				loc = zone(t, tt.zone)
			}
			got := wallTime(tt.date.Year(), tt.date.Month(), tt.date.Day(), tt.at, loc)
			if !got.Equal(tt.want) {
				t.Errorf("wallTime = %s, want %s", got.UTC(), tt.want)
			}
		})
	}
}

// TestWallTimeEveryZone holds wallTime to an independent computation
// over the same embedded database: for every zone whose offset changes in
// the next three years, it walks the zone's periods with ZoneBounds and,
// at each change, checks wall times that occur twice (clocks set back)
// fall due at their first occurrence, and wall times skipped (clocks set
// forward) at the change itself.
func TestWallTimeEveryZone(t *testing.T) {
	from := time.Date(time.Now().Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(3, 0, 0)
	zones, repeated, skipped := 0, 0, 0
	for _, name := range tzdb.Names() {
		loc := zone(t, name)
		changed := false
		for at := from; ; {
			_, end := at.In(loc).ZoneBounds()
			if end.IsZero() || !end.Before(to) {
				break
			}
			if !end.After(at) {
				// Go's zone rules end a period at a leap year's last day
				// and start none there: step over it.
				at = at.Add(time.Minute)
				continue
			}
			at = end
			_, before := end.Add(-time.Second).In(loc).Zone()
			_, after := end.In(loc).Zone()
			if before == after { // a new name or DST flag only
				continue
			}
			changed = true
			// Wall clocks, written as UTC times: the change moves them from
			// end+before to end+after.
			w1, w2 := end.UTC().Add(time.Duration(before)*time.Second), end.UTC().Add(time.Duration(after)*time.Second)
			lo, hi := w1, w2
			if hi.Before(lo) {
				lo, hi = hi, lo
			}
			for _, w := range wallMinutes(lo, hi) {
				got := wallTime(w.Year(), w.Month(), w.Day(), config.ClockTime(w.Hour()*60+w.Minute()), loc)
				want := end // skipped: the first valid time after it
				if after < before {
					want = w.Add(-time.Duration(before) * time.Second) // the first of the two
					repeated++
				} else {
					skipped++
				}
				if !got.Equal(want) {
					t.Errorf("%s: %s (clocks %+ds at %s) falls due at %s, want %s",
						name, w.Format("2006-01-02 15:04"), after-before, end.UTC().Format(time.RFC3339), got.UTC().Format(time.RFC3339), want.UTC().Format(time.RFC3339))
				}
			}
		}
		if changed {
			zones++
		}
	}
	t.Logf("%d zones change offset between %s and %s: %d repeated and %d skipped wall times checked", zones, from.Format(time.DateOnly), to.Format(time.DateOnly), repeated, skipped)
	if zones < 50 || repeated < 100 || skipped < 100 {
		t.Errorf("only %d zones, %d repeated and %d skipped wall times: the scan no longer finds the changes", zones, repeated, skipped)
	}
}

// wallMinutes are wall times in [lo, hi) on whole minutes: the first, the
// middle and the last.
func wallMinutes(lo, hi time.Time) []time.Time {
	first := lo.Truncate(time.Minute)
	if first.Before(lo) {
		first = first.Add(time.Minute)
	}
	last := hi.Add(-time.Nanosecond).Truncate(time.Minute)
	if last.Before(first) {
		return nil
	}
	mid := first.Add(last.Sub(first) / 2).Truncate(time.Minute)
	return slices.CompactFunc([]time.Time{first, mid, last}, time.Time.Equal)
}

// localMsg is a notification to users u0..u(n-1), each in zones[i%len].
func localMsg(n int, zones []*time.Location, at *config.LocalTime, quiet *config.QuietHours) *config.Message {
	var ids []string
	byUser := map[string]*time.Location{}
	for i := range n {
		id := fmt.Sprintf("u%03d", i)
		ids = append(ids, id)
		byUser[id] = zones[i%len(zones)]
	}
	m := note("notification.morning", "Good morning", "Coffee is on us", "morning", ids...)
	m.DeliverAtLocal, m.QuietHours, m.TimeZones = at, quiet, config.NewTimeZones(time.UTC, byUser, nil)
	return m
}

func TestLocalTimeWaves(t *testing.T) {
	tokyo, berlin, la := zone(t, "Asia/Tokyo"), zone(t, "Europe/Berlin"), zone(t, "America/Los_Angeles")
	zones := []*time.Location{tokyo, berlin, la}
	nine := &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}
	// 2026-12-01 09:00 is 00:00Z in Tokyo, 08:00Z in Berlin, 17:00Z in Los Angeles.
	tokyoAt, berlinAt, laAt := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		now       time.Time
		sendBfore *time.Time
		action    Action
		send      int
		waiting   int
		expired   int
		next      *time.Time
	}{
		{"before every wave", tokyoAt.Add(-time.Hour), nil, ActionWait, 0, 9, 0, &tokyoAt},
		{"Tokyo's wave", tokyoAt.Add(30 * time.Minute), nil, ActionCreate, 3, 6, 0, &berlinAt},
		{"Berlin's too", berlinAt, nil, ActionCreate, 6, 3, 0, &laAt},
		{"all due", laAt.Add(time.Hour), nil, ActionCreate, 9, 0, 0, nil},
		{"LA falls after send_before", tokyoAt.Add(time.Minute), &laAt, ActionCreate, 3, 3, 3, &berlinAt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := localMsg(9, zones, nine, nil)
			m.SendBefore = tt.sendBfore
			p, err := Make(Input{Config: cfgOf(m)}, Options{Now: tt.now})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != tt.action || len(c.Send) != tt.send || c.Targets.Waiting != tt.waiting || c.Targets.Expired != tt.expired {
				t.Fatalf("action %s send %d waiting %d expired %d, want %s %d %d %d", c.Action, len(c.Send), c.Targets.Waiting, c.Targets.Expired, tt.action, tt.send, tt.waiting, tt.expired)
			}
			if c.Local == nil || len(c.Local.Waves) != 3 || c.Local.Zones != 3 || c.Local.DefaultZone != 0 {
				t.Fatalf("local: %+v", c.Local)
			}
			for i, at := range []time.Time{tokyoAt, berlinAt, laAt} {
				w := c.Local.Waves[i]
				if !w.At.Equal(at) || w.Send+w.Waiting+w.Expired != 3 {
					t.Errorf("wave %d: %+v, want 3 at %s", i, w, at)
				}
			}
			if (tt.next == nil) != (c.Local.NextWave == nil) || tt.next != nil && !tt.next.Equal(*c.Local.NextWave) {
				t.Errorf("next wave %v, want %v", c.Local.NextWave, tt.next)
			}
		})
	}
}

// TestLocalTimeConverges plans and applies (to state) at hourly steps
// over a day: every target is sent once, in the hour after its 09:00.
func TestLocalTimeConverges(t *testing.T) {
	zones := []*time.Location{zone(t, "Pacific/Tongatapu"), zone(t, "Asia/Kolkata"), zone(t, "Europe/London"), zone(t, "America/New_York"), zone(t, "America/Los_Angeles")}
	start := time.Date(2026, 11, 30, 10, 17, 0, 0, time.UTC)
	m := localMsg(50, zones, &config.LocalTime{Clock: 9 * 60}, nil)
	m.SendAfter = &start
	cfg := cfgOf(m)
	sentAt := map[string]time.Time{}
	var st *state.State
	for step := time.Duration(0); step <= 30*time.Hour; step += time.Hour {
		at := start.Add(step)
		p, err := Make(Input{Config: cfg, State: st}, Options{Now: at})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range p.Changes[0].Send {
			if _, dup := sentAt[id]; dup {
				t.Fatalf("%s sent twice", id)
			}
			sentAt[id] = at
		}
		st = recordSent(m, sentAt)
	}
	for i, id := range m.Targets.IDs {
		at, ok := sentAt[id]
		if !ok {
			t.Fatalf("%s never sent", id)
		}
		l := at.In(zones[i%len(zones)])
		if mins := l.Hour()*60 + l.Minute(); mins < 9*60 || mins >= 10*60 {
			t.Errorf("%s sent at %s local, not within the hour after 09:00", id, l.Format("2006-01-02 15:04 MST"))
		}
	}
}

// recordSent is the state after the targets of sentAt were delivered.
func recordSent(m *config.Message, sentAt map[string]time.Time) *state.State {
	st := state.New("test")
	fp := Fingerprint(m.Kind, m.Content)
	sm := &state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: m.Content, Targets: map[string]*state.Target{}}
	for id, at := range sentAt {
		sm.Targets[id] = &state.Target{Outcome: state.Delivered, Fingerprint: fp, DeviceCount: 1, Time: at}
	}
	st.Messages[m.Address] = sm
	return st
}

func TestQuietHours(t *testing.T) {
	tokyo, berlin := zone(t, "Asia/Tokyo"), zone(t, "Europe/Berlin")
	quiet := &config.QuietHours{From: 21 * 60, To: 8 * 60}
	// 14:00Z is 23:00 in Tokyo (quiet until 08:00, 23:00Z) and 15:00 in Berlin.
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	opens := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		zones   []*time.Location
		ignore  bool
		badge   bool
		action  Action
		send    int
		quiet   int
		noLocal bool
	}{
		{"Tokyo held, Berlin sent", []*time.Location{tokyo, berlin}, false, false, ActionCreate, 1, 1, false},
		{"all held", []*time.Location{tokyo}, false, false, ActionQuiet, 0, 2, false},
		{"ignore_quiet_hours", []*time.Location{tokyo}, true, false, ActionCreate, 2, 0, true},
		{"badges never held", []*time.Location{tokyo}, false, true, ActionCreate, 2, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := localMsg(2, tt.zones, nil, quiet)
			m.IgnoreQuietHours = tt.ignore
			if tt.badge {
				n := 3
				m.Kind, m.Content = config.KindBadge, config.Content{BadgeCount: &n}
			}
			p, err := Make(Input{Config: cfgOf(m)}, Options{Now: at})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Changes[0]
			if c.Action != tt.action || len(c.Send) != tt.send || c.Targets.Quiet != tt.quiet {
				t.Fatalf("action %s send %d quiet %d, want %s %d %d", c.Action, len(c.Send), c.Targets.Quiet, tt.action, tt.send, tt.quiet)
			}
			if tt.noLocal {
				if c.Local != nil {
					t.Fatalf("local: %+v", c.Local)
				}
				return
			}
			if c.Local.QuietOpens == nil || !c.Local.QuietOpens.Equal(opens) || c.Local.QuietHours != "21:00-08:00" {
				t.Errorf("local: %+v, want quiet opening at %s", c.Local, opens)
			}
			if p.Summary.QuietTargets != tt.quiet {
				t.Errorf("summary quiet targets %d, want %d", p.Summary.QuietTargets, tt.quiet)
			}
			// At 08:00 in Tokyo the window has ended there (it is
			// midnight in Berlin, whose window has begun).
			p, _ = Make(Input{Config: cfgOf(m)}, Options{Now: opens})
			if c := p.Changes[0]; len(c.Send) == 0 || c.Send[0] != "u000" {
				t.Errorf("at %s the Tokyo user is not sent: %v", opens, c.Send)
			}
		})
	}
}

// TestDecidedUntil: a plan's decision to send a target holds until the
// target's quiet window begins: the earliest such start among the zones
// it sends (Berlin's 21:00, 20:00Z), none of those it holds (Tokyo's),
// and none for a plan that sends nobody under quiet hours.
func TestDecidedUntil(t *testing.T) {
	tokyo, berlin := zone(t, "Asia/Tokyo"), zone(t, "Europe/Berlin")
	quiet := &config.QuietHours{From: 21 * 60, To: 8 * 60}
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC) // 23:00 in Tokyo, 15:00 in Berlin
	p, err := Make(Input{Config: cfgOf(localMsg(2, []*time.Location{tokyo, berlin}, nil, quiet))}, Options{Now: at})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	if got := p.DecidedUntil(); got == nil || !got.Equal(want) {
		t.Errorf("decided until %v, want %s", got, want)
	}
	p, _ = Make(Input{Config: cfgOf(localMsg(2, []*time.Location{tokyo}, nil, quiet))}, Options{Now: at})
	if got := p.DecidedUntil(); got != nil {
		t.Errorf("a plan that holds every target is decided until %v, want no end", got)
	}
	m := localMsg(2, []*time.Location{tokyo, berlin}, nil, quiet)
	m.IgnoreQuietHours = true
	p, _ = Make(Input{Config: cfgOf(m)}, Options{Now: at})
	if got := p.DecidedUntil(); got != nil {
		t.Errorf("ignore_quiet_hours: decided until %v, want no end", got)
	}
}

// TestLocalTimeInQuietHours: a deliver_at_local moment inside quiet hours
// waits for the window's end; the default zone is counted.
func TestLocalTimeInQuietHours(t *testing.T) {
	m := localMsg(1, []*time.Location{time.UTC}, &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 22 * 60}, &config.QuietHours{From: 21 * 60, To: 8 * 60})
	m.Targets.IDs = append(m.Targets.IDs, "not-listed")
	p, err := Make(Input{Config: cfgOf(m)}, Options{Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Changes[0]
	want := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	if c.Action != ActionWait || c.Local.NextWave == nil || !c.Local.NextWave.Equal(want) || c.Local.DefaultZone != 1 {
		t.Fatalf("%s %+v, want wait until %s with 1 in the default zone", c.Action, c.Local, want)
	}
	if len(c.Local.Waves) != 1 || !c.Local.Waves[0].At.Equal(want) || c.Local.Waves[0].Waiting != 2 {
		t.Fatalf("waves %+v, want 2 waiting at %s, when the quiet window ends", c.Local.Waves, want)
	}
	p, _ = Make(Input{Config: cfgOf(m)}, Options{Now: time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)})
	if c := p.Changes[0]; c.Action != ActionQuiet || c.Targets.Quiet != 2 {
		t.Fatalf("at 22:30: %s quiet %d", c.Action, c.Targets.Quiet)
	}
}

// TestZoneSlotsPaths: the three ways of finding zones (beside a sorted
// list, in a map, by binary search) agree, unlisted ids included.
func TestZoneSlotsPaths(t *testing.T) {
	byUser := map[string]*time.Location{}
	zones := []*time.Location{zone(t, "Asia/Tokyo"), zone(t, "Europe/Berlin"), zone(t, "America/Los_Angeles")}
	var ids []string
	for i := range 6000 {
		id := fmt.Sprintf("u%05d", i)
		ids = append(ids, id)
		if i%7 != 0 { // every seventh is not listed: the default zone
			byUser[id] = zones[i%3]
		}
	}
	tz := config.NewTimeZones(time.UTC, byUser, nil)
	want, wantDefaults := zoneSlots(ids, &tz.Users, true, nil)
	if wantDefaults != 858 {
		t.Fatalf("%d in the default zone, want 858", wantDefaults)
	}
	for i, id := range ids {
		if loc := tz.Zones[want[i]]; byUser[id] != nil && loc != byUser[id] || byUser[id] == nil && want[i] != 0 {
			t.Fatalf("%s: zone %s", id, loc)
		}
	}
	// Reversed: not sorted.
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	byID := map[string]uint16{}
	for i, id := range tz.Users.IDs {
		byID[id] = tz.Users.Zone[i]
	}
	for _, m := range []map[string]uint16{nil, byID} {
		got, defaults := zoneSlots(rev, &tz.Users, false, m)
		slices.Reverse(got)
		if !slices.Equal(got, want) || defaults != wantDefaults {
			t.Errorf("unsorted (map %v): slots differ or %d defaults", m != nil, defaults)
		}
	}
	// And through a plan: the same counts either way.
	m := note("notification.n", "t", "b", "", ids...)
	m.TimeZones, m.QuietHours = tz, &config.QuietHours{From: 21 * 60, To: 8 * 60}
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC) // 23:00 in Tokyo, 06:00 in Los Angeles: both quiet
	p1, _ := Make(Input{Config: cfgOf(m)}, Options{Now: at})
	mr := *m
	mr.Targets.IDs = rev
	p2, _ := Make(Input{Config: cfgOf(&mr)}, Options{Now: at})
	if c1, c2 := p1.Changes[0], p2.Changes[0]; c1.Targets.Quiet != 3428 || c1.Targets.Quiet != c2.Targets.Quiet || len(c1.Send) != len(c2.Send) || c1.Local.DefaultZone != c2.Local.DefaultZone {
		t.Errorf("sorted: %+v %+v; reversed: %+v %+v", c1.Targets, c1.Local, c2.Targets, c2.Local)
	}
}

// TestLocalTimeRenameCountsHeldTargets: a renamed, edited notification
// whose targets local time partly holds is guarded for all its targets:
// the held ones would show both once their moment comes.
func TestLocalTimeRenameCountsHeldTargets(t *testing.T) {
	tokyo, la := zone(t, "Asia/Tokyo"), zone(t, "America/Los_Angeles")
	old := localMsg(10, []*time.Location{tokyo, la}, nil, nil)
	st := recorded(old, state.Delivered, nil)
	v2 := localMsg(10, []*time.Location{tokyo, la}, &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}, nil)
	v2.Address, v2.Content.Body = "notification.morning_v2", "Coffee is on us!"
	// 01:00Z: Tokyo's 09:00 has passed, Los Angeles' has not.
	p, err := Make(Input{Config: cfgOf(v2), State: st}, Options{Now: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Renames) != 1 || p.Renames[0].Targets != 10 {
		t.Fatalf("renames %+v, want one of 10 targets", p.Renames)
	}
}

// TestQuietPastSendBefore: a target whose quiet window ends at or after
// send_before is expired, not held.
func TestQuietPastSendBefore(t *testing.T) {
	tokyo := zone(t, "Asia/Tokyo")
	m := localMsg(2, []*time.Location{tokyo}, nil, &config.QuietHours{From: 21 * 60, To: 8 * 60})
	end := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC) // 05:00 in Tokyo, before its window ends
	m.SendBefore = &end
	p, err := Make(Input{Config: cfgOf(m)}, Options{Now: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Changes[0]; c.Action != ActionExpired || c.Targets.Expired != 2 || len(c.Send) != 0 {
		t.Fatalf("%s %+v", c.Action, c.Targets)
	}
}

// TestLocalTimeAndFrequencyCap: a target local time holds is not counted
// by the cap, so another notification may reach it now.
func TestLocalTimeAndFrequencyCap(t *testing.T) {
	tokyo, la := zone(t, "Asia/Tokyo"), zone(t, "America/Los_Angeles")
	a := localMsg(2, []*time.Location{tokyo, la}, &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}, nil)
	a.Address = "notification.a_morning"
	b := note("notification.b_news", "News", "Read it", "news", a.Targets.IDs...)
	cfg := cfgOf(a, b)
	cfg.FrequencyCap = &config.FrequencyCap{Max: 1, Per: 24 * time.Hour}
	// 01:00Z: u000 (Tokyo) is due, u001 (Los Angeles) waits.
	p, err := Make(Input{Config: cfg}, Options{Now: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := p.Changes[0], p.Changes[1]
	if !slices.Equal(ca.Send, []string{"u000"}) || ca.Targets.Waiting != 1 {
		t.Fatalf("morning: send %v %+v", ca.Send, ca.Targets)
	}
	if !slices.Equal(cb.Send, []string{"u001"}) || cb.Targets.Capped != 1 {
		t.Fatalf("news: send %v %+v; want u001 sent and u000 capped", cb.Send, cb.Targets)
	}
}
