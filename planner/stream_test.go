package planner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/state"
)

// unresolved returns cfg as Load leaves it before the recipients are
// fetched: m's targets unknown, taken from the data source "all".
func unresolved(cfg *config.Config, m *config.Message) *config.Config {
	out := *cfg
	out.Messages = nil
	for _, cm := range cfg.Messages {
		if cm == m {
			c := *cm
			c.Targets.IDs, c.Targets.Unknown, c.Targets.Recipients = nil, true, "all"
			cm = &c
		}
		out.Messages = append(out.Messages, cm)
	}
	return &out
}

// streamPlan streams list to s in chunks, collecting every request as it
// is handed out, and finishes with cfg.
func streamPlan(t *testing.T, s *Stream, cfg *config.Config, list []string, chunks []int) (*Plan, []Request) {
	t.Helper()
	var got []Request
	take := func() {
		for {
			r, st := s.Request(len(got))
			if st != RequestReady {
				return
			}
			got = append(got, r)
		}
	}
	from := 0
	for _, k := range chunks {
		s.Add(list[from : from+k])
		from += k
		take()
	}
	if from != len(list) {
		t.Fatalf("chunks cover %d of %d ids", from, len(list))
	}
	p, err := s.Finish(cfg, &state.Snapshot{FetchedAt: now, UserIDs: list})
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	handed := len(got)
	take()
	if _, st := s.Request(len(got)); st != RequestNone {
		t.Errorf("after the last request: status %v, want none", st)
	}
	if len(got) != len(p.Batches) {
		t.Errorf("%d requests taken, the plan has %d", len(got), len(p.Batches))
	}
	for b := range got {
		if !sameRequest(got[b], p.Request(b)) {
			t.Errorf("request %d taken differs from the plan's", b+1)
		}
	}
	return p, got[:handed]
}

// randomChunks splits n into pieces of random sizes.
func randomChunks(rng *rand.Rand, n, most int) []int {
	var out []int
	for n > 0 {
		k := min(n, 1+rng.IntN(most))
		out = append(out, k)
		n -= k
	}
	return out
}

// TestStreamPlansAsMake: the plan a Stream finishes is the plan Make
// makes from the whole list, and the requests it handed out while the
// list arrived are that plan's first requests; over random histories,
// other messages before and after the streamed one, and chunkings.
func TestStreamPlansAsMake(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			universe := make([]string, 700+rng.IntN(1500))
			for i := range universe {
				universe[i] = fmt.Sprintf("u%05d", i)
			}
			if rng.IntN(4) == 0 {
				rng.Shuffle(len(universe), func(i, j int) { universe[i], universe[j] = universe[j], universe[i] })
			}
			list := slices.Clone(universe[:len(universe)*(1+rng.IntN(4))/4])
			titles := []string{"A", "B"}
			tags := []string{"", "t1", "t2"}
			s := note("notification.m", titles[rng.IntN(2)], "body", tags[rng.IntN(3)], list...)
			others := []*config.Message{
				note("notification.a", "other", "before", "ta", universe[:rng.IntN(700)]...),
				note("notification.z", "other", "after", "tz", universe[100+rng.IntN(200):300+rng.IntN(300)]...),
			}
			h := newHistory(t)
			outcomes := []state.Outcome{state.Delivered, state.Failed, state.Unknown, state.Skipped}
			for range rng.IntN(5) {
				old := note(s.Address, titles[rng.IntN(2)], "body", tags[rng.IntN(3)], universe[:rng.IntN(len(universe))]...)
				ids := old.Targets.IDs
				for from := 0; from < len(ids); from += 250 {
					h.send(old, outcomes[rng.IntN(len(outcomes))], ids[from:min(from+250, len(ids))]...)
				}
			}
			if rng.IntN(2) == 0 {
				h.send(others[0], state.Delivered, others[0].Targets.IDs...)
			}
			cfg := cfgOf(append([]*config.Message{s}, others...)...)
			slices.SortFunc(cfg.Messages, func(a, b *config.Message) int { return strings.Compare(a.Address, b.Address) })
			opts := Options{Now: now, RetryUnknown: rng.IntN(3) == 0, BatchLimit: []int{500, 7, 100}[rng.IntN(3)]}
			if rng.IntN(5) == 0 {
				opts.Replace = []string{s.Address}
			}
			st := h.st
			if rng.IntN(2) == 0 {
				st = compactCopy(t, st)
			}
			if len(st.Messages) == 0 && rng.IntN(2) == 0 {
				st = nil
			}
			stream := NewStream(unresolved(cfg, s), st, opts)
			if stream == nil {
				t.Fatal("no stream for a configuration that can stream")
			}
			got, handed := streamPlan(t, stream, cfg, list, randomChunks(rng, len(list), 900))
			want, err := Make(Input{Config: cfg, State: st, Recipients: &state.Snapshot{FetchedAt: now, UserIDs: list}, Refreshed: true}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalized(got), normalized(want)) {
				t.Errorf("plans differ:\nstream %+v\nmake   %+v", got.Summary, want.Summary)
				for i := range min(len(got.Changes), len(want.Changes)) {
					if !reflect.DeepEqual(normalized(got).Changes[i], normalized(want).Changes[i]) {
						t.Errorf("change %d:\nstream %+v\nmake   %+v", i, got.Changes[i], want.Changes[i])
					}
				}
			}
			checkNoTargetTwice(t, want)
			if len(list) > 3*opts.BatchLimit && len(handed) == 0 {
				t.Errorf("nothing handed out before the list was whole (%d ids)", len(list))
			}
		})
	}
}

// TestNewStreamRefuses: what the whole list decides, or a plan that could
// be refused, is never streamed.
func TestNewStreamRefuses(t *testing.T) {
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	base := func() (*config.Config, *config.Message) {
		m := note("notification.m", "T", "B", "t", "u1", "u2")
		return cfgOf(m, note("notification.o", "O", "B", "t", "u1")), m
	}
	skipped := newHistory(t).send(note("notification.o", "O", "B", "t"), state.Skipped, "u9").st
	gone := newHistory(t).send(note("notification.gone", "O", "B", "t"), state.Delivered, "u9").st
	devices := newHistory(t).send(msg("notification.m", config.KindNotification, config.TargetDevices, nil, config.Content{Title: "T"}), state.Delivered, "d1").st
	tests := []struct {
		name string
		edit func(cfg *config.Config, m *config.Message)
		st   *state.State
		opts Options
	}{
		{name: "moved block", edit: func(c *config.Config, _ *config.Message) { c.Moved = []config.Moved{{}} }},
		{name: "frequency cap", edit: func(c *config.Config, _ *config.Message) { c.FrequencyCap = &config.FrequencyCap{} }},
		{name: "max_targets", edit: func(_ *config.Config, m *config.Message) { m.MaxTargets = 10 }},
		{name: "send_rate", edit: func(_ *config.Config, m *config.Message) { m.SendRate = &config.Rate{Count: 1, Per: time.Second} }},
		{name: "campaign limits", edit: func(c *config.Config, _ *config.Message) {
			c.Campaigns = map[string]config.Campaign{"c": {MaxTargets: 5}}
		}},
		{name: "send_after ahead", edit: func(_ *config.Config, m *config.Message) { m.SendAfter = &later }},
		{name: "send_before passed", edit: func(_ *config.Config, m *config.Message) { m.SendBefore = &earlier }},
		{name: "deliver_at_local", edit: func(_ *config.Config, m *config.Message) { m.DeliverAtLocal = &config.LocalTime{Clock: 9 * 60} }},
		{name: "quiet_hours", edit: func(_ *config.Config, m *config.Message) {
			m.QuietHours = &config.QuietHours{From: 21 * 60, To: 8 * 60}
		}},
		{name: "another message skipped users", st: skipped},
		{name: "an address forgotten", st: gone},
		{name: "target kind changed", st: devices},
		{name: "not selected", opts: Options{Targets: []string{"notification.o"}}},
		{name: "two messages wait", edit: func(c *config.Config, _ *config.Message) {
			c.Messages[1].Targets.Unknown, c.Messages[1].Targets.Recipients = true, "all"
		}},
		{name: "an expression of the list", edit: func(_ *config.Config, m *config.Message) { m.Targets.Recipients = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, m := base()
			cfg = unresolved(cfg, m)
			if tt.edit != nil {
				tt.edit(cfg, cfg.Messages[0])
			}
			tt.opts.Now = now
			if s := NewStream(cfg, tt.st, tt.opts); s != nil {
				t.Error("streams")
			}
		})
	}
	cfg, m := base()
	if NewStream(unresolved(cfg, m), nil, Options{}) == nil {
		t.Error("the base case does not stream")
	}
}

// TestStreamFinishRefusesOtherList: Finish with a configuration whose list
// is not the one that arrived fails, and so does every request after
// those handed out.
func TestStreamFinishRefusesOtherList(t *testing.T) {
	list := ids(2000, "u")
	m := note("notification.m", "T", "B", "t", list...)
	cfg := cfgOf(m)
	s := NewStream(unresolved(cfg, m), nil, Options{Now: now})
	s.Add(list[:1000])
	other := note("notification.m", "T", "B", "t", append(slices.Clone(list[:999]), "x")...)
	if _, err := s.Finish(cfgOf(other), &state.Snapshot{UserIDs: list}); err == nil {
		t.Fatal("Finish accepted a list other than the one that arrived")
	}
	if _, st := s.Request(1); st != RequestReady {
		t.Errorf("a request handed out is gone: %v", st)
	}
	if _, st := s.Request(2); st != RequestFailed {
		t.Errorf("request after those handed out: %v, want failed", st)
	}
	if err := s.Wait(context.Background(), 5); err != nil {
		t.Error(err)
	}
}
