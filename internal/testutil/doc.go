// Package testutil holds the scaffolding the packages' tests share:
// golden files with the -update flag, temporary configuration
// directories and the fixtures several tests start from. Only tests
// import it. The CPU timer of the JSON benchmarks is in cpubench.
package testutil
