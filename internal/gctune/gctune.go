// Package gctune is pushform's one process-wide runtime tuning: the
// garbage collector's goals while apply sends. Only package main uses it
// (through command.Env.Sending), so a front end that embeds pushform, or a
// test sharing its process, keeps the runtime as it was.
//
// Why, with the figures (a million targets at 0 ms on two cores, unless
// said otherwise):
//   - GOGC 400: the send phase allocates much and keeps little (answers,
//     journal lines), and under the default 100 the collector took 25% of
//     the CPU; 1.30 -> 0.98 s of CPU. A small apply's heap grows to about
//     200 MiB instead of 100.
//   - A soft limit of 800 MiB: a re-apply of ten million targets after a
//     crash holds the new list, its duplicate filter and the recorded
//     targets at once (0.7 GiB live): 1.7 GiB of RSS with the default GOGC,
//     0.9 GiB under the limit (48% more collector CPU, on a send phase bound
//     by the service's latency). Past 160 MiB live the limit, not GOGC,
//     paces the collector, so GOGC 400 costs no peak memory a big apply did
//     not already reach.
//   - No collection until the heap reaches 256 MiB: a million targets peak
//     at about 117 MiB and never collect, 10 to 17 ms less CPU (14 paired
//     runs) for 24 MiB more peak. The first collection sets the two goals
//     above, so ten million are paced as before.
//
// The goals are set once the configuration is evaluated, not at start: an
// evaluation that needs more (a for_each over half a million CSV rows)
// would only be slowed by a limit below its live heap. GOMEMLIMIT and GOGC
// in the environment win.
package gctune

import (
	"runtime"
	"runtime/debug"
)

const (
	// sendMemoryLimit is the soft memory limit of the send phase.
	sendMemoryLimit = 800 << 20
	// sendGCPercent is the GOGC of the send phase.
	sendGCPercent = 400
	// quietHeap is the heap the send phase grows to with the collector off.
	quietHeap = 256 << 20
)

// ForSending sets the collector's goals for apply's send phase: with
// neither GOMEMLIMIT nor GOGC set in getenv's environment, no collection
// until quietHeap, then sendGCPercent under sendMemoryLimit; with GOGC
// set, only the limit; with GOMEMLIMIT set, nothing.
func ForSending(getenv func(string) string) {
	goals{debug.SetMemoryLimit, debug.SetGCPercent, afterCollection}.forSending(getenv)
}

// goals sets the runtime's collector goals; tests record instead.
type goals struct {
	setMemoryLimit  func(bytes int64) int64
	setGCPercent    func(percent int) int
	afterCollection func(f func())
}

func (g goals) forSending(getenv func(string) string) {
	switch {
	case getenv("GOMEMLIMIT") != "":
	case getenv("GOGC") != "":
		g.setMemoryLimit(sendMemoryLimit)
	default:
		g.setMemoryLimit(quietHeap)
		g.setGCPercent(-1)
		g.afterCollection(func() {
			// Raise the limit first: GOGC on under the quiet limit would
			// collect at once.
			g.setMemoryLimit(sendMemoryLimit)
			g.setGCPercent(sendGCPercent)
		})
	}
}

// afterCollection runs f once the collector has found an object no longer
// reachable, that is after its next cycle. The object has a pointer so
// that the tiny allocator does not share its block with others, whose
// lives would delay the cleanup.
func afterCollection(f func()) {
	sentinel := &struct{ p *byte }{}
	runtime.AddCleanup(sentinel, func(struct{}) { f() }, struct{}{})
}
