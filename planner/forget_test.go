package planner

import (
	"fmt"
	"reflect"
	"testing"

	"pushform/state"
)

// The no-op fast path of forgotten must agree with the set computation,
// duplicates and unsorted lists included.
func TestForgotten(t *testing.T) {
	prior := &state.Message{Targets: map[string]*state.Target{"a": {}, "b": {}, "c": {}}}
	count := func(ids []string) int {
		n := 0
		for _, id := range ids {
			if _, ok := prior.Targets[id]; ok {
				n++
			}
		}
		return n
	}
	tests := []struct {
		ids  []string
		want []string
	}{
		{[]string{"a", "b", "c"}, nil},
		{[]string{"c", "a", "b"}, nil},
		{[]string{"a", "b", "c", "d"}, nil},
		{[]string{"a", "c"}, []string{"b"}},
		{[]string{"a", "a", "c"}, []string{"b"}}, // found counts 3, but not 3 distinct
		{[]string{"c", "a", "a"}, []string{"b"}},
		{nil, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		for _, found := range []int{count(tt.ids), -1} {
			if got := forgotten(tt.ids, prior, found); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("forgotten(%q, found %d) = %q; want %q", tt.ids, found, got, tt.want)
			}
		}
	}
}

// classifyAll splits large lists between goroutines; the result must be
// that of one sequential pass, order of Send and Held included.
func TestClassifyAllMatchesSequential(t *testing.T) {
	const n, from = 3007, 1000
	ids := make([]string, n)
	prior := &state.Message{Targets: map[string]*state.Target{}}
	outcomes := []state.Outcome{state.Delivered, state.Failed, state.Unknown, state.Skipped}
	var reachable []string
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
		if i%5 == 4 {
			continue // new
		}
		fp := "fp"
		if i%11 == 0 {
			fp = "old"
		}
		o := outcomes[i%len(outcomes)]
		prior.Targets[ids[i]] = &state.Target{Outcome: o, Fingerprint: fp}
		if o == state.Skipped && i%3 == 0 {
			reachable = append(reachable, ids[i])
		}
	}
	for _, tagged := range []bool{true, false} {
		pl := &planning{recipients: &state.Snapshot{UserIDs: reachable}, parallelFrom: from}
		want := pl.classify(ids, prior, "fp", false, tagged, true)
		got := pl.classifyAll(ids, prior, "fp", false, tagged, true)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tagged %v: classifyAll = %+v; want %+v", tagged, got.counts, want.counts)
		}
		if want.counts.Reachable == 0 || want.counts.Held+want.counts.Unknown == 0 || !want.changed {
			t.Fatalf("test data misses a case: %+v", want.counts)
		}
	}
}
