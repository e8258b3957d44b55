// Package testutil holds the scaffolding the packages' tests share: the
// rusage CPU timer and the benchmark loop of the JSON benchmarks. Only
// tests import it.
package testutil
