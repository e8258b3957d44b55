package state_test

import (
	"errors"
	"sync"
	"testing"

	"pushform/state"
)

func TestHeadStale(t *testing.T) {
	at := func(lineage string, serial uint64) state.Head {
		return state.Head{Known: true, Exists: true, Lineage: lineage, Serial: serial}
	}
	none := state.Head{Known: true}
	const tail = "; another run wrote it since; these entries were not recorded"
	tests := []struct {
		name     string
		was, now state.Head
		want     error
		msg      string
	}{
		{"not read yet", state.Head{}, at("l", 3), nil, ""},
		{"neither exists", none, none, nil, ""},
		{"same", at("l", 3), at("l", 3), nil, ""},
		{"removed", at("l", 3), none, state.ErrStaleSerial, "S no longer exists (this run read serial 3)" + tail},
		{"created", none, at("l", 1), state.ErrStaleSerial, "S was created (lineage l, serial 1) after this run found none" + tail},
		{"other lineage", at("l", 3), at("m", 3), state.ErrLineage, "S now has lineage m, this run read lineage l" + tail},
		{"moved on", at("l", 3), at("l", 4), state.ErrStaleSerial, "S is at serial 4, this run read serial 3" + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.was.Stale("S", tt.now)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || err.Error() != tt.want.Error()+": "+tt.msg {
				t.Fatalf("err = %v; want %v: %s", err, tt.want, tt.msg)
			}
		})
	}
}

// TestGroupCommit: every item is written exactly once, in the order of
// its call's items.
func TestGroupCommit(t *testing.T) {
	var (
		g      state.GroupCommit[int]
		mu     sync.Mutex
		writes int
		got    []int
	)
	const callers, per = 20, 50
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				err := g.Do(&mu, []int{c*per*2 + 2*i, c*per*2 + 2*i + 1}, func(items []int) error {
					writes++ // under mu
					got = append(got, items...)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(got) != callers*per*2 {
		t.Fatalf("%d items written; want %d", len(got), callers*per*2)
	}
	seen := map[int]bool{}
	last := map[int]int{}
	for _, v := range got {
		if seen[v] {
			t.Fatalf("item %d written twice", v)
		}
		seen[v] = true
		c := v / (per * 2)
		if prev, ok := last[c]; ok && v < prev {
			t.Fatalf("caller %d's items out of order: %d after %d", c, v, prev)
		}
		last[c] = v
	}
	t.Logf("%d writes for %d calls", writes, callers*per)
	// An error reaches every caller of the group.
	boom := errors.New("disk full")
	if err := g.Do(&mu, []int{1}, func([]int) error { return boom }); err != boom {
		t.Errorf("err = %v; want %v", err, boom)
	}
}

func TestNeedsSync(t *testing.T) {
	o, i := state.Entry{Type: state.EntryOutcome}, state.Entry{Type: state.EntryIntent}
	for _, tt := range []struct {
		entries []state.Entry
		want    bool
	}{
		{nil, false},
		{[]state.Entry{o}, false},
		{[]state.Entry{o, o}, false},
		{[]state.Entry{i}, true},
		{[]state.Entry{o, i}, true},
		{[]state.Entry{{Type: state.EntryForget}}, true},
		{[]state.Entry{{Type: state.EntrySnapshot}}, true},
		{[]state.Entry{{Type: state.EntryMove}}, true},
		{[]state.Entry{{Type: state.EntryRecord}}, true},
	} {
		if got := state.NeedsSync(tt.entries...); got != tt.want {
			t.Errorf("NeedsSync(%v) = %v; want %v", tt.entries, got, tt.want)
		}
	}
}

// A group's sync runs after the lock is released: the next group is
// written (and, needing no sync, done) while it runs, and every caller of
// the synced group gets the sync's error.
func TestDoThenSyncWritesTheNextGroupMeanwhile(t *testing.T) {
	var g state.GroupCommit[string]
	var mu sync.Mutex
	release := make(chan struct{})
	syncing := make(chan struct{})
	boom := errors.New("sync failed")
	first := make(chan error, 1)
	go func() {
		first <- g.DoThenSync(&mu, []string{"intent"}, func([]string) (func() error, error) {
			return func() error { close(syncing); <-release; return boom }, nil
		})
	}()
	<-syncing
	var wrote []string
	err := g.DoThenSync(&mu, []string{"outcome"}, func(items []string) (func() error, error) {
		wrote = append(wrote, items...)
		return nil, nil
	})
	if err != nil || len(wrote) != 1 || wrote[0] != "outcome" {
		t.Fatalf("the group after a sync under way: %v, wrote %v; want it written at once", err, wrote)
	}
	select {
	case err := <-first:
		t.Fatalf("the first group returned %v before its sync ended", err)
	default:
	}
	close(release)
	if err := <-first; err != boom {
		t.Fatalf("the first group returned %v; want its sync's error", err)
	}
}
