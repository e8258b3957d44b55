package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
	"pushform/state/local"
)

// plans measures no-op plans over states of n and n/10 delivered targets,
// made the same way, and the plan after the real apply.
func (b *bench) plans(ctx context.Context) ([]Row, error) {
	big, err := b.noopPlan(ctx, b.n)
	if err != nil {
		return nil, err
	}
	small, err := b.noopPlan(ctx, b.n/10)
	if err != nil {
		return nil, err
	}
	growth := median(sortedCopy(big.wall)) / median(sortedCopy(small.wall))
	goal := goalPlanTime
	if b.n > 1_000_000 {
		goal = goalPlanTimeLarge
	}
	s := func(x float64) string { return fmt.Sprintf("%.2f s", x) }
	rows := []Row{
		atMost(fmt.Sprintf("no-op plan, %s delivered targets (--refresh=false)", group(int64(b.n))), fmt.Sprintf("<= %.1f s", goal),
			spread(big.wall, s), median(sortedCopy(big.wall)), goal),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(int64(big.peak())), big.peak(), goalRSS),
		info("  its CPU time (user + system)", spread(big.cpu, s), ""),
		atMost(fmt.Sprintf("no-op plan time, %s vs %s targets", group(int64(b.n)), group(int64(b.n/10))), fmt.Sprintf("<= %.0fx", goalPlanGrowth),
			fmt.Sprintf("%.1fx (%s: %s)", growth, group(int64(b.n/10)), spread(small.wall, s)), growth, goalPlanGrowth),
	}

	// The state the real apply left, planned with and without fetching
	// the recipients again.
	dir := filepath.Join(b.dir, "apply")
	if _, err := os.Stat(filepath.Join(dir, "pushform.state")); err != nil {
		return rows, nil // the apply step did not run
	}
	after, err := b.timePlans(ctx, dir, "no-op plan after the apply", "plan", "--refresh=false", "--detailed-exitcode")
	if err != nil {
		return rows, err
	}
	refreshed, err := b.timePlans(ctx, dir, "refreshed no-op plan after the apply", "plan", "--detailed-exitcode")
	if err != nil {
		return rows, err
	}
	return append(rows,
		atMost(fmt.Sprintf("no-op plan over the applied state, %s targets (--refresh=false)", group(int64(b.n))), fmt.Sprintf("<= %.1f s", goal),
			spread(after.wall, s), median(sortedCopy(after.wall)), goal),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(int64(after.peak())), after.peak(), goalRSS),
		info("  same, fetching the recipients from the sandbox", spread(refreshed.wall, s),
			fmt.Sprintf("%s max RSS, %s CPU", mib(int64(refreshed.peak())), s(median(sortedCopy(refreshed.cpu))))),
	), nil
}

// timings are the measurements of repeated runs of one command.
type timings struct {
	wall, cpu, rss []float64 // seconds, seconds, bytes
}

func (t *timings) peak() float64 {
	s := sortedCopy(t.rss)
	return s[len(s)-1]
}

// timePlans runs a plan command -runs times in dir; it must exit 0.
func (b *bench) timePlans(ctx context.Context, dir, what string, args ...string) (*timings, error) {
	var t timings
	for range b.o.runs {
		r, err := b.pushform(ctx, dir, nil, args...)
		if err != nil {
			return nil, err
		}
		if err := r.check(0, what); err != nil {
			return nil, err
		}
		t.wall = append(t.wall, r.wall.Seconds())
		t.cpu = append(t.cpu, r.cpu.Seconds())
		t.rss = append(t.rss, float64(r.maxRSS))
	}
	return &t, nil
}

// noopPlan writes a state of n targets delivered with the big campaign's
// content and a configuration that wants exactly that, then times plan.
func (b *bench) noopPlan(ctx context.Context, n int) (*timings, error) {
	dir, err := b.campaign(fmt.Sprintf("plan-%d", n), announceHCL)
	if err != nil {
		return nil, err
	}
	if err := local.NewFile(filepath.Join(dir, "pushform.state")).Persist(syntheticState(n)); err != nil {
		return nil, err
	}
	// A state written by pushform today also records the service and the
	// reviewed shape: an apply that sends nothing records them.
	r, err := b.pushform(ctx, dir, nil, "apply", "--refresh=false", "--auto-approve")
	if err != nil {
		return nil, err
	}
	if err := r.check(0, "apply recording the reviewed shape"); err != nil {
		return nil, err
	}
	b.logf("no-op plan over %s targets, %d runs", group(int64(n)), b.o.runs)
	return b.timePlans(ctx, dir, "no-op plan", "plan", "--refresh=false", "--detailed-exitcode")
}

// syntheticState is what applying the big campaign to n users records:
// every target delivered, in requests of 500 with their ids and times.
// It is built compact (the targets of a request share one record), so
// ten million take seconds, not minutes.
func syntheticState(n int) *state.State {
	s := state.New("test")
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = userID(i)
	}
	s.Recipients = &state.Snapshot{FetchedAt: t0, UserIDs: ids}
	content := announce
	fp := planner.Fingerprint(config.KindNotification, content)
	m := &state.Message{Address: "notification.announce", Kind: config.KindNotification, TargetKind: config.TargetUsers,
		Fingerprint: fp, Content: content}
	recs := make([]*state.Target, n)
	for i := range recs {
		batch := i / batchLimit
		if i%batchLimit == 0 {
			recs[i] = &state.Target{Outcome: state.Delivered, Fingerprint: fp, DeviceCount: 1,
				RequestID: fmt.Sprintf("req-%016x", batch), Time: t0.Add(time.Duration(batch) * 5 * time.Millisecond)}
		} else {
			recs[i] = recs[i-1]
		}
	}
	m.SetSortedTargets(ids, recs) // userID sorts as it counts
	s.Messages[m.Address] = m
	return s
}
