package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/config/tzdb"
)

// localPlan is the part of plan --json local-time tests read.
type localPlan struct {
	Changes []struct {
		Address string `json:"address"`
		Action  string `json:"action"`
		Targets counts `json:"targets"`
		Local   *struct {
			Waves []struct {
				At      time.Time `json:"at"`
				Send    int       `json:"send"`
				Waiting int       `json:"waiting"`
				Quiet   int       `json:"quiet"`
			} `json:"waves"`
			NextWave   *time.Time `json:"next_wave"`
			QuietOpens *time.Time `json:"quiet_opens"`
		} `json:"local"`
	} `json:"changes"`
}

func (w *workspace) localPlan(args ...string) localPlan {
	w.t.Helper()
	p, _ := planAs[localPlan](w, args...)
	return p
}

// mustZone loads a zone from the database the binary embeds, as the
// binary does: the machine's cannot make the test disagree with it.
func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := tzdb.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// nextOffsetChange is the first time after t at which loc's offset
// changes. Go's zone rules (the embedded database's zones end in them) also
// end a period at a year's end with the same offset, so ZoneBounds alone
// may stop there.
func nextOffsetChange(t time.Time, loc *time.Location) time.Time {
	_, off := t.In(loc).Zone()
	for {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() { // no change to come
			return end
		}
		if !end.After(t) {
			end = t.Add(time.Minute)
		}
		if _, o := end.In(loc).Zone(); o != off {
			return end
		}
		t = end
	}
}

// TestLocalTimeWaves: 3,000 users in five zones, one 13 hours ahead
// (Tonga) and one whose clocks change on the chosen day (New York), get
// deliver_at_local = "09:00" from applies at hourly --now steps (a cron
// job, rehearsed in the embedded sandbox): each user once, within the
// hour after 09:00 in their own zone, and the waves go one zone at a time.
func TestLocalTimeWaves(t *testing.T) {
	zoneNames := []string{"Pacific/Tongatapu", "Asia/Kolkata", "Europe/London", "America/New_York", "America/Los_Angeles"}
	zones := make([]*time.Location, len(zoneNames))
	for i, n := range zoneNames {
		zones[i] = mustZone(t, n)
	}
	// The chosen day is New York's next change of clocks at least two
	// days ahead, so every --now is after the real time.
	change := nextOffsetChange(time.Now().Add(48*time.Hour), zones[3])
	day := change.In(zones[3])
	// From 18:00Z the day before, the first 09:00 of every zone is on
	// the chosen day (it is past 09:00 in Los Angeles, 07:00 in Tonga).
	start := time.Date(day.Year(), day.Month(), day.Day()-1, 18, 0, 0, 0, time.UTC)

	const users = 3000
	sb := startEmbedded(t, seed+`
user_range "lt%04d" {
  count       = 3000
  device      = "ltd%04d"
  environment = "test"
}
`)
	zoneOf := func(i int) int { return i % len(zones) }
	var csv strings.Builder
	csv.WriteString("user_id,tz\n")
	for i := range users {
		fmt.Fprintf(&csv, "lt%04d,%s\n", i, zoneNames[zoneOf(i)])
	}
	w := newWorkspace(t, sb, fmt.Sprintf(`
time_zones {
  by_user = { for r in csvdecode(file("users.csv")) : r.user_id => r.tz }
}

notification "morning" {
  user_ids         = [for r in csvdecode(file("users.csv")) : r.user_id]
  title            = "Good morning"
  body             = "Breakfast is on us today"
  tag              = "morning"
  deliver_at_local = "09:00"
  send_after       = %q
}
`, start.Format(time.RFC3339)))
	if err := os.WriteFile(filepath.Join(w.dir, "users.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// Before the first wave the plan lists five waves of 600, the next
	// one Tonga's (09:00 there is 20:00Z the day before).
	nowArg := func(at time.Time) string { return "--now=" + at.Format(time.RFC3339) }
	p := w.localPlan(nowArg(start))
	c := p.Changes[0]
	if c.Action != "wait" || c.Local == nil || len(c.Local.Waves) != 5 || c.Local.NextWave == nil {
		t.Fatalf("plan at %s: %+v", start, c)
	}
	tonga := time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, zones[0])
	if !c.Local.NextWave.Equal(tonga) {
		t.Errorf("next wave %s, want %s (09:00 in Tonga)", c.Local.NextWave, tonga.UTC())
	}
	for _, wv := range c.Local.Waves {
		if wv.Waiting != users/len(zones) {
			t.Errorf("wave %s: %+v, want 600 waiting", wv.At, wv)
		}
	}
	r := w.mustRun(0, "plan", nowArg(start))
	if !strings.Contains(r.stdout, "notification.morning waits for local time (next wave "+tonga.UTC().Format(time.RFC3339)+"): 3,000 users") ||
		!strings.Contains(r.stdout, "waves (UTC): ") {
		t.Fatalf("plan:\n%s", r.stdout)
	}

	sentAt := map[int]time.Time{} // user index -> the --now that sent it
	waves := 0
	for at := start; at.Before(start.Add(26 * time.Hour)); at = at.Add(time.Hour) {
		w.apply(nowArg(at))
		m := w.readState().Messages["notification.morning"]
		if m == nil {
			continue
		}
		var fresh []int
		for i := range users {
			tg := m.Target(fmt.Sprintf("lt%04d", i))
			if _, seen := sentAt[i]; seen || tg == nil || tg.Outcome != "delivered" {
				continue
			}
			sentAt[i] = at
			fresh = append(fresh, i)
			// Recorded at the simulated time it was sent: 09:xx there.
			if l := tg.Time.In(zones[zoneOf(i)]); l.Hour() != 9 {
				t.Errorf("lt%04d was sent at %s, when it is %s for them", i, tg.Time, l.Format("15:04 MST"))
			}
		}
		if len(fresh) == 0 {
			continue
		}
		waves++
		for _, i := range fresh {
			if zoneOf(i) != zoneOf(fresh[0]) {
				t.Errorf("the wave at %s holds %s and %s", at, zoneNames[zoneOf(fresh[0])], zoneNames[zoneOf(i)])
				break
			}
		}
	}
	if len(sentAt) != users {
		t.Fatalf("%d of %d users received it", len(sentAt), users)
	}
	for i, at := range sentAt {
		l := at.In(zones[zoneOf(i)])
		if l.Hour() != 9 || l.Day() != day.Day() {
			t.Errorf("lt%04d (%s) got it at %s local, not within the hour after 09:00 on the chosen day", i, zoneNames[zoneOf(i)], l.Format("2006-01-02 15:04 MST"))
		}
	}
	shown, twice := 0, 0
	for id, n := range sb.received() {
		if strings.HasPrefix(id, "ltd") {
			shown++
			if n != 1 {
				twice++
			}
		}
	}
	if shown != users || twice != 0 {
		t.Errorf("sandbox: %d devices shown it, %d more than once; want each of %d once", shown, twice, users)
	}
	if waves != len(zones) {
		t.Errorf("%d waves went out, want one per zone (%d)", waves, len(zones))
	}
	// New York's offset on the chosen day is not the day before's: its
	// wave went by the chosen day's clocks.
	ny := time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, zones[3])
	_, offBefore := ny.Add(-24 * time.Hour).Zone()
	if _, off := ny.Zone(); off == offBefore {
		t.Fatalf("no change of clocks in New York on %s", day.Format(time.DateOnly))
	}
	if at := sentAt[3]; !at.Equal(ny.Truncate(time.Hour)) {
		t.Errorf("New York's wave went at %s, want %s", at, ny.UTC())
	}
	if r := w.mustRun(0, "plan", "--detailed-exitcode", nowArg(start.Add(26*time.Hour))); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("after the day:\n%s", r.stdout)
	}
}

// TestQuietHours: with quiet_hours 21:00-08:00, a user for whom it is
// 23:00 is held (the quiet action, with when it opens) while another,
// at noon, is sent; ignore_quiet_hours sends at once; a badge update is
// never held; the held user gets it at 08:00 local, once. The night
// passes in the embedded sandbox.
func TestQuietHours(t *testing.T) {
	// Noon UTC the day after tomorrow: 23:00 in UTC+11 (Etc/GMT-11).
	noon := time.Now().UTC().Truncate(24 * time.Hour).Add(60 * time.Hour)
	opens := noon.Add(9 * time.Hour) // 08:00 in UTC+11
	sb := startEmbedded(t, seed)
	w := newWorkspace(t, sb, `
time_zones {
  by_user   = { alice = "Etc/GMT-11", bob = "UTC" }
  by_device = { "alice-phone" = "Etc/GMT-11" }
}
quiet_hours {
  from = "21:00"
  to   = "08:00"
}

notification "news" {
  user_ids = ["alice", "bob"]
  title    = "Weekly news"
  body     = "What happened this week"
  tag      = "news"
}

notification "outage" {
  user_ids           = ["alice"]
  title              = "Service outage"
  body               = "Payments are down; we are on it"
  tag                = "outage"
  ignore_quiet_hours = true
}

badge "inbox" {
  device_ids  = ["alice-phone"]
  badge_count = 4
}
`)
	nowArg := func(at time.Time) string { return "--now=" + at.Format(time.RFC3339) }
	p := w.localPlan(nowArg(noon))
	for _, c := range p.Changes {
		switch c.Address {
		case "notification.news":
			if c.Action != "create" || c.Targets["send"] != 1 || c.Targets["quiet"] != 1 || c.Local == nil || c.Local.QuietOpens == nil || !c.Local.QuietOpens.Equal(opens) {
				t.Errorf("news: %+v", c)
			}
		case "notification.outage", "badge.inbox":
			if c.Action != "create" || c.Targets["send"] != 1 || c.Targets["quiet"] != 0 {
				t.Errorf("%s: %+v", c.Address, c)
			}
		}
	}
	w.apply(nowArg(noon))
	alice, bob := sb.device("alice-phone"), sb.device("bob-phone")
	if bob.Received != 1 || bob.Inbox[0].Title != "Weekly news" {
		t.Errorf("bob-phone: %+v", bob)
	}
	if alice.Received != 1 || alice.Inbox[0].Title != "Service outage" || alice.Badge == nil || *alice.Badge != 4 {
		t.Errorf("alice-phone at 23:00 local: %+v, want only the outage and the badge", alice)
	}

	// An hour before 08:00 there she is still held, and the plan says so.
	p = w.localPlan(nowArg(opens.Add(-time.Hour)))
	if a, tg := p.action("notification.news"); a != "quiet" || tg["quiet"] != 1 {
		t.Errorf("at 07:00 local: %s %v", a, tg)
	}
	r := w.mustRun(0, "plan", nowArg(opens.Add(-time.Hour)))
	if want := "☾ notification.news is held by quiet_hours 21:00-08:00: 1 user, sent from " + opens.Format(time.RFC3339); !strings.Contains(r.stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, r.stdout)
	}
	sent := sb.requests()
	w.apply(nowArg(opens.Add(-time.Hour)))
	if sb.requests() != sent {
		t.Errorf("an apply inside quiet hours sent something")
	}
	// At 08:00 the window ends: she gets it, once.
	w.apply(nowArg(opens))
	w.apply(nowArg(opens.Add(time.Hour)))
	alice = sb.device("alice-phone")
	titles := []string{}
	for _, n := range alice.Inbox {
		titles = append(titles, n.Title)
	}
	if alice.Received != 2 || !slices.Contains(titles, "Weekly news") {
		t.Errorf("alice-phone after 08:00: received %d %v", alice.Received, titles)
	}
}

func (p localPlan) action(addr string) (string, map[string]int) {
	for _, c := range p.Changes {
		if c.Address == addr {
			return c.Action, c.Targets
		}
	}
	return "", nil
}

// TestLocalTimeExample applies examples/local-time as a cron job would,
// hourly over a day from a start after the real time: every user gets
// breakfast once, within the hour after 09:00 in their zone (fay in the
// default one), and the last plan has no changes.
func TestLocalTimeExample(t *testing.T) {
	w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1")}
	if err := os.CopyFS(w.dir, os.DirFS("../examples/local-time")); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{"pushform.state", "pushform.sandbox.json", "pushform.state.backup", "pushform.state.journal"} {
		os.Remove(filepath.Join(w.dir, leftover))
	}
	start := time.Now().UTC().Add(48 * time.Hour).Truncate(24 * time.Hour).Add(18 * time.Hour)
	startVar := "--var=start=" + start.Format(time.RFC3339)
	const menuAddr = "campaign.breakfast.notification.menu"
	zones := map[string]string{"ana": "Pacific/Auckland", "ben": "Asia/Kolkata", "chloe": "Europe/Paris", "dan": "America/New_York", "eve": "America/Los_Angeles", "fay": "America/Chicago"}
	// The example runs against the embedded sandbox, whose clock --now
	// moves: the --now of the apply that first records a user delivered
	// is when the cron job sent it.
	sentAt := map[string]time.Time{}
	for at := start; !at.After(start.Add(24 * time.Hour)); at = at.Add(time.Hour) {
		w.apply(startVar, "--now="+at.Format(time.RFC3339))
		if menu := w.readState().Messages[menuAddr]; menu != nil {
			for user := range zones {
				if tg := menu.Target(user); tg != nil && tg.Outcome == "delivered" && sentAt[user].IsZero() {
					sentAt[user] = at
				}
			}
		}
	}
	for user, zone := range zones {
		at, ok := sentAt[user]
		if !ok {
			t.Errorf("%s never got breakfast", user)
			continue
		}
		if l := at.In(mustZone(t, zone)); l.Hour() != 9 {
			t.Errorf("%s got breakfast at %s in %s, not within the hour after 09:00", user, l.Format("2006-01-02 15:04"), zone)
		}
		var d exampleDevice
		r := w.mustRun(0, "sandbox", "show", user+"-phone", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range append(d.Inbox, d.Pending...) {
			if e.Title == "Good morning" {
				n++
			}
		}
		if n != 1 || d.Received > 2 {
			t.Errorf("%s-phone shows breakfast %d times (received %d)", user, n, d.Received)
		}
	}
	r := w.mustRun(0, "plan", "--detailed-exitcode", startVar, "--now="+start.Add(25*time.Hour).Format(time.RFC3339))
	if !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("plan after the day:\n%s", r.stdout)
	}
}
