package views

import (
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/planner"
)

// localScenario is a plan of local-time delivery: a wave sent now, waves
// waiting, targets in the default zone, one address entirely quiet and
// one entirely waiting.
func localScenario(t *testing.T) *planner.Plan {
	t.Helper()
	load := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	zones := []*time.Location{load("Asia/Tokyo"), load("Europe/Berlin"), load("America/Los_Angeles")}
	byUser := map[string]*time.Location{}
	users := ids(30, "u")
	for i, id := range users[:27] {
		byUser[id] = zones[i%3]
	}
	tz := config.NewTimeZones(load("America/New_York"), byUser, nil)
	quiet := &config.QuietHours{From: 21 * 60, To: 8 * 60}
	note := func(addr string, targets ...string) *config.Message {
		return &config.Message{Address: addr, Kind: config.KindNotification, Targets: config.Targets{Kind: config.TargetUsers, IDs: targets},
			Content: config.Content{Title: "Good morning", Body: "Coffee is on us (" + addr + ")", Tag: addr}, TimeZones: tz, QuietHours: quiet}
	}
	morning := note("notification.morning", users...)
	morning.DeliverAtLocal = &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}
	tomorrow := note("notification.tomorrow", users[:3]...)
	tomorrow.DeliverAtLocal = &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 2, Clock: 9 * 60}
	tokyo := note("notification.tokyo_night", "u00000", "u00003")
	urgent := note("notification.urgent", "u00000")
	urgent.IgnoreQuietHours = true
	// 13:00Z on 2026-12-01: Tokyo's wave (00:00Z) and Berlin's (08:00Z)
	// are due, but it is 22:00 in Tokyo: quiet until 08:00 there (23:00Z);
	// New York (14:00Z) and Los Angeles (17:00Z) wait.
	at := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	cfg := &config.Config{Service: config.Service{Environment: "test"}, Messages: []*config.Message{morning, tomorrow, tokyo, urgent}, TimeZones: tz, QuietHours: quiet}
	p, err := planner.Make(planner.Input{Config: cfg}, planner.Options{Now: at})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLocalTimeViews(t *testing.T) {
	p := localScenario(t)
	human, _, _ := planGoldens(t, p, "plan-local")
	// What every view must say, whatever the wording around it.
	for _, want := range []string{
		"☾ notification.tokyo_night is held by quiet_hours 21:00-08:00: 2 users, sent from 2026-12-01T23:00:00Z",
		"waves (UTC): 2026-12-01 00:00 9 quiet, 08:00 9 now, 14:00 3 waiting (next), 17:00 9 waiting; next at 2026-12-01T14:00:00Z; quiet until 2026-12-01T23:00:00Z",
		"3 in the default zone",
		"… notification.tomorrow waits for local time (next wave 2026-12-02T00:00:00Z): 3 users",
		"+ notification.urgent will be created: 1 user (u00000)",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("human plan lacks %q:\n%s", want, human)
		}
	}
}
