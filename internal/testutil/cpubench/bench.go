// Package cpubench holds the CPU timer and loop of the packages' JSON
// benchmarks. It is apart from testutil, which starts sandboxes, so the
// sandbox's own tests can use it.
package cpubench

import "testing"

// PerTarget runs op in b's loop, reporting allocations, the wall time
// per target (an operation handles n targets) and the CPU per operation.
// The CPU counts every thread of the process, the garbage collector's
// too: what an operation costs, which is what a busy machine is short of.
func PerTarget(b *testing.B, n int, op func()) {
	b.Helper()
	cpu0 := CPUTime()
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/target")
	b.ReportMetric(float64(CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
