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
	outcomes := []state.Outcome{state.Delivered, state.Failed, state.Unknown, state.Skipped}
	var reachable []string
	for _, tag := range []string{"t", ""} {
		m := note("notification.a", "T", "B", tag)
		fp := Fingerprint(m.Kind, m.Content)
		// Earlier content: other text under the same tag, and the same
		// text under another tag.
		other, retagged := m.Content, m.Content
		other.Body, retagged.Tag = "older", "older-tag"
		otherFP, retaggedFP := Fingerprint(m.Kind, other), Fingerprint(m.Kind, retagged)
		// The address records the other content: the retagged one is
		// not a decision recorded yet.
		prior := &state.Message{Fingerprint: otherFP, Content: other, Targets: map[string]*state.Target{},
			EarlierTags: map[string]string{fp: tag, retaggedFP: "older-tag"}}
		reachable = reachable[:0]
		for i := range ids {
			ids[i] = fmt.Sprintf("u%07d", i)
			if i%5 == 4 {
				continue // new
			}
			tfp := fp
			switch i % 11 {
			case 0:
				tfp = otherFP
			case 1:
				tfp = retaggedFP
			case 2:
				tfp = "not-recorded"
			}
			o := outcomes[i%len(outcomes)]
			tg := &state.Target{Outcome: o, Fingerprint: tfp}
			if o == state.Unknown && i%7 == 0 {
				tg.Unanswered, tg.RequestID = 3, fmt.Sprintf("req-%d", i%13)
			}
			prior.Targets[ids[i]] = tg
			if o == state.Skipped && i%3 == 0 {
				reachable = append(reachable, ids[i])
			}
		}
		m.Targets.IDs = ids
		cc := newChangeContext(m, prior, fp, false)
		pl := &planning{recipients: &state.Snapshot{UserIDs: reachable}, parallelFrom: from, opts: Options{MaxUnknownResends: 3}}
		want := pl.classify(ids, cc)
		got := pl.classifyAll(ids, cc)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tag %q: classifyAll = %+v; want %+v", tag, got, want)
		}
		c := want.counts
		if c.Reachable == 0 || c.Held+c.Unknown == 0 || !want.changed || c.TagOnly == 0 || want.heldUnanswered == 0 || !want.moreIDs {
			t.Fatalf("test data misses a case: %+v", want)
		}
	}
}
