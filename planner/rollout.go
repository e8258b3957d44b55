package planner

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"pushform/bucket"
	"pushform/config"
	"pushform/state"
)

// Rollout states, in RolloutStatus.State.
const (
	RolloutSending  = "sending"  // this plan sends a stage
	RolloutWaiting  = "waiting"  // the next stage is due at NextDue
	RolloutHalted   = "halted"   // the failure gate stopped it: nothing is sent
	RolloutResumed  = "resumed"  // halted, and --resume sends the next stage anyway
	RolloutComplete = "complete" // every stage has been sent
)

// maxGateRequests is how many request ids a halted rollout names.
const maxGateRequests = 5

// RolloutStatus is where a staged rollout stands, and what this plan
// sends of it. Every count is of targets with the planned content: a
// content change starts the rollout again from its first stage.
type RolloutStatus struct {
	State  string        `json:"state"`
	Stages []StageStatus `json:"stages"`
	// Current is the index of the latest stage sent (-1: none); Sends the
	// index of the last stage this plan sends to (-1: none).
	Current int `json:"current"`
	Sends   int `json:"sends"`
	// NextDue is when the next stage may be sent (wait after the latest
	// send of the current stage); nil when it is due or there is none.
	NextDue *time.Time `json:"next_due,omitempty"`
	Wait    Duration   `json:"wait"`
	// Failed and Attempted are counted in the current stage (skipped
	// targets are not attempted); FailureRate is their ratio and
	// MaxFailureRate the gate (negative: none).
	Failed         int     `json:"failed"`
	Attempted      int     `json:"attempted"`
	FailureRate    float64 `json:"failure_rate"`
	MaxFailureRate float64 `json:"max_failure_rate"`
	// RequestIDs are requests the current stage's failures came back
	// from (a few), for the service's support.
	RequestIDs []string `json:"request_ids,omitempty"`
	Salt       string   `json:"salt"`
}

// StageStatus is one stage of a rollout.
type StageStatus struct {
	// Percent is the share of the audience the stage and those before
	// it cover, as written ("10%").
	Percent string `json:"percent"`
	// Size is the targets in this stage and not an earlier one; Sent those
	// of them that have the planned content recorded; Send those this
	// plan sends.
	Size int `json:"size"`
	Sent int `json:"sent"`
	Send int `json:"send"`
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

// MarshalText writes "30m0s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// stager assigns one message's targets to its rollout stages.
type stager struct {
	h    bucket.Hasher
	cuts []uint32
}

func newStager(m *config.Message) stager {
	s := stager{h: bucket.New(m.Salt), cuts: make([]uint32, len(m.Rollout.Stages))}
	for i, f := range m.Rollout.Stages {
		s.cuts[i] = bucket.Cut(f)
	}
	s.cuts[len(s.cuts)-1] = bucket.Scale // the last stage is everyone
	return s
}

// of returns the index of id's stage.
func (s stager) of(id string) int {
	p := s.h.Point(id)
	for i, c := range s.cuts {
		if p < c {
			return i
		}
	}
	return len(s.cuts) - 1
}

// stage holds back the targets of c.Send whose rollout stage is not due,
// and records where the rollout stands in c.Rollout. ids are the
// message's targets, prior its state. It walks the ids once, hashing
// each: a few milliseconds a million.
func (pl *planning) stage(m *config.Message, ids []string, prior *state.Message, c *Change) {
	r := m.Rollout
	sg := newStager(m)
	n := len(r.Stages)
	rs := &RolloutStatus{Stages: make([]StageStatus, n), Current: -1, Sends: -1, Wait: Duration(r.Wait),
		MaxFailureRate: r.MaxFailureRate, Salt: m.Salt}
	for i, f := range r.Stages {
		rs.Stages[i].Percent = config.FormatPercent(f)
	}
	c.Rollout = rs
	// The stage of each id, and of each id to send: Send is a subsequence
	// of ids in their order (classify keeps it).
	stageOf := sg.assign(ids, rs.Stages)
	failed := make([]int, n)
	attempted := make([]int, n)
	last := make([]time.Time, n)
	reqs := make([][]string, n)
	// sent counts, per stage, the targets this address sent to: a record
	// of content already delivered elsewhere (apply records those of
	// every stage) starts no stage.
	sent := make([]int, n)
	var find *state.TargetFinder
	if prior != nil {
		find = prior.Finder()
		for i, id := range ids {
			t := find.Find(id)
			if t == nil || t.Fingerprint != c.Fingerprint {
				continue
			}
			s := stageOf[i]
			rs.Stages[s].Sent++
			if t.Outcome == state.AlreadyDelivered {
				continue
			}
			sent[s]++
			if t.Time.After(last[s]) {
				last[s] = t.Time
			}
			switch t.Outcome {
			case state.Failed:
				failed[s]++
				attempted[s]++
				if len(reqs[s]) < maxGateRequests && t.RequestID != "" && !slices.Contains(reqs[s], t.RequestID) {
					reqs[s] = append(reqs[s], t.RequestID)
				}
			case state.Delivered, state.Unknown:
				attempted[s]++
			}
		}
	}
	for i := range rs.Stages {
		if sent[i] > 0 {
			rs.Current = i
		}
	}
	// The next stage has targets without a record: one whose every target
	// already had the content is passed over, or it would never start.
	next := -1
	for i := rs.Current + 1; i < n; i++ {
		if rs.Stages[i].Size > rs.Stages[i].Sent {
			next = i
			break
		}
	}
	halted := false
	if cur := rs.Current; cur >= 0 {
		rs.Failed, rs.Attempted, rs.RequestIDs = failed[cur], attempted[cur], reqs[cur]
		if rs.Attempted > 0 {
			rs.FailureRate = float64(rs.Failed) / float64(rs.Attempted)
		}
		halted = r.MaxFailureRate >= 0 && rs.FailureRate > r.MaxFailureRate
	}
	resume := selected(m.Address, pl.opts.Resume) && len(pl.opts.Resume) > 0
	allowed := -1
	switch {
	case halted && !resume:
		rs.State = RolloutHalted
	case next < 0:
		allowed, rs.State = rs.Current, RolloutComplete
	case rs.Current < 0 || !pl.opts.Now.Before(last[rs.Current].Add(r.Wait)):
		allowed, rs.State = next, RolloutSending
		if halted {
			rs.State = RolloutResumed
		}
	default:
		due := last[rs.Current].Add(r.Wait).UTC()
		allowed, rs.State, rs.NextDue = rs.Current, RolloutWaiting, &due
		if halted {
			rs.State = RolloutResumed // resumed, its wait still runs
		}
	}
	rs.Sends = allowed

	pl.keepStages(c, ids, stageOf, allowed, sg, find)
}

// keepStages keeps, of c's sends, those of the stages up to allowed, in
// order, and counts each stage's; the rest are staged (held back).
// stageOf is the stage of each of ids.
func (pl *planning) keepStages(c *Change, ids []string, stageOf []uint8, allowed int, sg stager, find *state.TargetFinder) {
	rs := c.Rollout
	keep := c.Send[:0:0]
	j := 0
	held := 0
	// While the next stage waits, the stages released send no repeats:
	// a repeat would be their latest send, and the wait, which runs from
	// it, would start again (a repeat_after shorter than the wait kept
	// the next stage from ever coming). They go with the next stage.
	waiting := rs.NextDue != nil
	repeat := func(id string) bool {
		if !waiting || find == nil {
			return false
		}
		t := find.Find(id)
		return t != nil && t.Fingerprint == c.Fingerprint && t.Outcome == state.Delivered
	}
	if len(c.Send) == len(ids) && len(ids) > 0 && &c.Send[0] == &ids[0] {
		// Every target is sent (a first plan): the list is the ids.
		for i, s := range stageOf {
			if int(s) <= allowed {
				keep = append(keep, ids[i])
				rs.Stages[s].Send++
			}
		}
		j = len(c.Send)
		held = len(ids) - len(keep)
		c.Targets.New = len(keep)
	}
	for i, id := range ids {
		if j == len(c.Send) {
			break
		}
		if c.Send[j] != id {
			continue
		}
		j++
		s := int(stageOf[i])
		if s <= allowed && !repeat(id) {
			keep = append(keep, id)
			rs.Stages[s].Send++
			continue
		}
		held++
		pl.unclassify(&c.Targets, id, find, c.Fingerprint)
	}
	if j < len(c.Send) { // not a subsequence: place the rest by hashing
		for _, id := range c.Send[j:] {
			if s := sg.of(id); s <= allowed && !repeat(id) {
				keep = append(keep, id)
				rs.Stages[s].Send++
			} else {
				held++
				pl.unclassify(&c.Targets, id, find, c.Fingerprint)
			}
		}
	}
	if held == 0 {
		return // c.Send may be the configuration's own list: leave it shared
	}
	c.Send = keep
	c.Targets.Send = len(keep)
	c.Targets.Staged = held
}

// recountStages counts again each stage's Send from c's sends (of m)
// when local time, quiet hours or a frequency cap held back targets the
// rollout released: a stage sends what the plan sends.
func recountStages(c *Change, m *config.Message) {
	rs := c.Rollout
	sum := 0
	for _, s := range rs.Stages {
		sum += s.Send
	}
	if sum == len(c.Send) || m == nil || m.Rollout == nil {
		return
	}
	for i := range rs.Stages {
		rs.Stages[i].Send = 0
	}
	sg := newStager(m)
	for _, id := range c.Send {
		rs.Stages[sg.of(id)].Send++
	}
}

// parallelAssign is how many ids make assign use every CPU.
const parallelAssign = 1 << 16

// assign returns the stage of each of ids and adds to each stage's Size.
// Large lists are split over the CPUs: hashing is all it does.
func (s stager) assign(ids []string, stages []StageStatus) []uint8 {
	out := make([]uint8, len(ids))
	workers := runtime.GOMAXPROCS(0)
	if len(ids) < parallelAssign || workers < 2 {
		s.assignRange(ids, out, stages)
		return out
	}
	sizes := make([][]StageStatus, workers)
	var wg sync.WaitGroup
	chunk := (len(ids) + workers - 1) / workers
	for w := range workers {
		from, to := min(w*chunk, len(ids)), min((w+1)*chunk, len(ids))
		sizes[w] = make([]StageStatus, len(stages))
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.assignRange(ids[from:to], out[from:to], sizes[w])
		}()
	}
	wg.Wait()
	for _, sz := range sizes {
		for i := range stages {
			stages[i].Size += sz[i].Size
		}
	}
	return out
}

func (s stager) assignRange(ids []string, out []uint8, stages []StageStatus) {
	var counts [config.MaxStages]int
	cuts, last := s.cuts, len(s.cuts)-1
	for i, id := range ids {
		// of, by hand: the loop is most of a plan of millions.
		p := s.h.Point(id)
		st := 0
		for st < last && p >= cuts[st] {
			st++
		}
		out[i] = uint8(st)
		counts[st]++
	}
	for i := range stages {
		stages[i].Size += counts[i]
	}
}

// unclassify takes id, held back for a later stage, out of the count it
// was classified in.
func (pl *planning) unclassify(t *TargetCounts, id string, find *state.TargetFinder, fp string) {
	var rec *state.Target
	if find != nil {
		rec = find.Find(id)
	}
	dec := func(n *int) {
		if *n > 0 {
			*n--
		}
	}
	switch {
	case rec == nil, rec.Outcome == state.Unfilled:
		dec(&t.New)
	case rec.Fingerprint != fp:
		dec(&t.Replace)
	case rec.Outcome == state.Failed:
		dec(&t.Retry)
	case rec.Outcome == state.Unknown:
		dec(&t.Unknown)
	case rec.Outcome == state.Skipped:
		dec(&t.Reachable)
	default:
		dec(&t.Repeat)
	}
}

// StageLine says where a rollout stands, for people: "stage 2 of 4
// (10%) sent; stage 3 (50%) due 2026-05-01T10:30:00Z".
func (rs *RolloutStatus) StageLine() string {
	n := len(rs.Stages)
	switch rs.State {
	case RolloutHalted:
		return fmt.Sprintf("rollout halted at stage %d of %d (%s): %d of %d attempted failed (%s), over max_failure_rate %s; nothing more is sent until its content or max_failure_rate changes, or apply --resume ADDR",
			rs.Current+1, n, rs.Stages[rs.Current].Percent, rs.Failed, rs.Attempted, percent(rs.FailureRate), percent(rs.MaxFailureRate))
	case RolloutComplete:
		return fmt.Sprintf("rollout complete: all %d stages sent", n)
	case RolloutWaiting:
		return fmt.Sprintf("rollout at stage %d of %d (%s); stage %d due %s", rs.Current+1, n, rs.Stages[rs.Current].Percent, rs.Current+2, rs.NextDue.Format(time.RFC3339))
	case RolloutResumed:
		if rs.NextDue != nil {
			return fmt.Sprintf("rollout resumed at stage %d of %d despite its failure gate (%s failed, over %s); the next stage is due %s", rs.Current+1, n, percent(rs.FailureRate), percent(rs.MaxFailureRate), rs.NextDue.Format(time.RFC3339))
		}
		return fmt.Sprintf("rollout resumed (--resume): sends stage %d of %d (%s) despite stage %d's failure rate %s over %s", rs.Sends+1, n, rs.Stages[rs.Sends].Percent, rs.Current+1, percent(rs.FailureRate), percent(rs.MaxFailureRate))
	}
	return fmt.Sprintf("rollout sends stage %d of %d (%s)", rs.Sends+1, n, rs.Stages[rs.Sends].Percent)
}

func percent(f float64) string {
	if f < 0 {
		return "none"
	}
	return config.FormatPercent(float64(int64(f*1e6+0.5)) / 1e6)
}
