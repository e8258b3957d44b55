package planner

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/config/tzdb"
	"pushform/internal/testutil/cpubench"
	"pushform/state"
)

// benchZones returns n real zones, from the zone database the binary
// embeds, in name order.
func benchZones(b *testing.B, n int) []*time.Location {
	b.Helper()
	var names []string
	for _, name := range tzdb.Names() {
		if strings.Contains(name, "/") && !strings.HasPrefix(name, "Etc/") {
			names = append(names, name)
		}
	}
	if len(names) < n {
		b.Skipf("only %d zones", len(names))
	}
	var out []*time.Location
	for _, name := range names[:n] {
		out = append(out, zone(b, name))
	}
	return out
}

// localBench is a million-user notification whose first half (by id) is
// delivered: the plan a cron run makes in the middle of the day. With
// zones, each user is in one of them (spread, not sorted by zone) and
// the notification has deliver_at_local and quiet_hours.
func localBench(b *testing.B, zones []*time.Location) (Input, time.Time) {
	users := benchIDs(1_000_000)
	m := note("notification.morning", "Good morning", "Coffee is on us", "morning", users...)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if zones != nil {
		byUser := make(map[string]*time.Location, len(users))
		for i, id := range users {
			byUser[id] = zones[(i*7919)%len(zones)]
		}
		m.TimeZones = config.NewTimeZones(time.UTC, byUser, nil)
		m.DeliverAtLocal = &config.LocalTime{Dated: true, Year: 2026, Month: 12, Day: 1, Clock: 9 * 60}
		m.QuietHours = &config.QuietHours{From: 21 * 60, To: 8 * 60}
	}
	half := note(m.Address, m.Content.Title, m.Content.Body, m.Content.Tag, users[:500_000]...)
	return Input{Config: cfgOf(m), State: recorded(half, state.Delivered, nil)}, at
}

// BenchmarkLocalTime1M compares the plan of a million-user local-time
// campaign in 400 zones with the same plan without local time (Plain):
// half the users delivered, the other half classified, zone by zone,
// into sent now, waiting and quiet.
func BenchmarkLocalTime1M(b *testing.B) {
	zones := benchZones(b, 400)
	for _, bc := range []struct {
		name  string
		zones []*time.Location
	}{{"Plain", nil}, {"Zones400", zones}} {
		b.Run(bc.name, func(b *testing.B) {
			in, at := localBench(b, bc.zones)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p, err := Make(in, Options{Now: at})
				if err != nil {
					b.Fatal(err)
				}
				c := p.Changes[0]
				if c.Targets.UpToDate != 500_000 || c.Targets.Send+c.Targets.Waiting+c.Targets.Quiet != 500_000 {
					b.Fatalf("targets %+v", c.Targets)
				}
				if bc.zones != nil && (c.Local == nil || c.Local.Zones != 400 || c.Targets.Waiting == 0 || c.Targets.Send == 0) {
					b.Fatalf("local %+v, targets %+v", c.Local, c.Targets)
				}
			}
		})
	}
}

// BenchmarkLocalTimeCreate1M is the first plan of the campaign: no
// state, so the plain plan only shares the list and the local-time one
// looks up a million zones: beside the sorted list of zones when the
// targets are sorted (recipients lists are), by binary search when not.
func BenchmarkLocalTimeCreate1M(b *testing.B) {
	zones := benchZones(b, 400)
	for _, bc := range []struct {
		name     string
		zones    []*time.Location
		unsorted bool
	}{{"Plain", nil, false}, {"Zones400", zones, false}, {"Zones400Unsorted", zones, true}} {
		b.Run(bc.name, func(b *testing.B) {
			in, at := localBench(b, bc.zones)
			in.State = nil
			if bc.unsorted {
				m := *in.Config.Messages[0]
				ids := slices.Clone(m.Targets.IDs)
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				m.Targets.IDs = ids
				in.Config = cfgOf(&m)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p, err := Make(in, Options{Now: at})
				if err != nil || p.Changes[0].Targets.Total != 1_000_000 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLocalTimeRatio1M runs the two plans of BenchmarkLocalTime1M
// alternately and reports the local-time plan's cost as a multiple of the
// plain one's, in wall time and in process CPU time (user and system, GC
// included): on a shared machine the alternation keeps both under the
// same load, and CPU time does not count waiting for a core.
func BenchmarkLocalTimeRatio1M(b *testing.B) {
	zones := benchZones(b, 400)
	plain, at := localBench(b, nil)
	local, _ := localBench(b, zones)
	var wall, cpu [2]time.Duration
	for b.Loop() {
		for i, in := range []Input{plain, local} {
			runtime.GC() // each plan starts with a clean heap
			c0, w0 := time.Duration(cpubench.CPUTime()), time.Now()
			if _, err := Make(in, Options{Now: at}); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(w0)
			cpu[i] += time.Duration(cpubench.CPUTime()) - c0
		}
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-ratio")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
	b.ReportMetric(float64(cpu[0].Milliseconds())/float64(b.N), "plain-cpu-ms/op")
	b.ReportMetric(float64(cpu[1].Milliseconds())/float64(b.N), "local-cpu-ms/op")
}
