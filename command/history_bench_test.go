//go:build unix

package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"pushform/backend"
	"pushform/internal/testutil/cpubench"
	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// BenchmarkHistory10M runs `pushform history --user ID` in-process over a
// local state of ten million delivered targets under the current address
// and a million more under a forgotten one, the ledger holding them: read
// (compact), query and print, as a user runs it. The goal is under a
// second. Skipped with -short.
func BenchmarkHistory10M(b *testing.B) {
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	dir := b.TempDir()
	writeHistoryState(b, func() (backend.State, error) {
		return backend.OpenState(context.Background(), backend.StateOptions{ConfigDir: dir})
	})
	benchHistory(b, dir, nil, "--user", "u0500000")
}

// BenchmarkHistoryAddress10M runs `pushform history ADDR` for the address
// of ten million targets (20,000 requests) in that state. Skipped with
// -short.
func BenchmarkHistoryAddress10M(b *testing.B) {
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	dir := b.TempDir()
	writeHistoryState(b, func() (backend.State, error) {
		return backend.OpenState(context.Background(), backend.StateOptions{ConfigDir: dir})
	})
	benchHistory(b, dir, nil, "campaign.launch.notification.announce")
}

// BenchmarkHistory10MPG is BenchmarkHistory10M with the state in
// PostgreSQL (PUSHFORM_TEST_PG_URL). Skipped with -short.
func BenchmarkHistory10MPG(b *testing.B) {
	if testing.Short() {
		b.Skip("ten million targets; skipped with -short")
	}
	o := pgtest.Options(b)
	writeHistoryState(b, func() (backend.State, error) { return pg.Open(context.Background(), o) })
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n}\n", o.Schema, o.StateName)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(block), 0o644); err != nil {
		b.Fatal(err)
	}
	benchHistory(b, dir, map[string]string{"PUSHFORM_PG_CONN_STR": o.ConnString}, "--user", "u0500000")
}

// benchHistory times history with args over the state of the
// configuration in dir.
func benchHistory(b *testing.B, dir string, vars map[string]string, args ...string) {
	runtime.GC()
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Dir: dir, Getenv: func(k string) string { return vars[k] }}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpubench.CPUTime()
	n := 0
	for b.Loop() {
		n++
		out.Reset()
		if code := Run(context.Background(), append([]string{"history"}, args...), env); code != ExitOK {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
	// CPU time as well as wall time: on a shared machine the wall time
	// says more about the neighbours than about history.
	b.ReportMetric(float64(cpubench.CPUTime()-cpu0)/1e9/float64(n), "cpu-s/op")
	b.StopTimer()
	want := []string{"User \"u0500000\": 2 records under 2 addresses", "(forgotten)"}
	if args[0] != "--user" {
		want = []string{"1 apply (current)", "10,000,000", "and 19,997 more"}
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			b.Fatalf("history lacks %q:\n%s", w, out.String())
		}
	}
}

// writeHistoryState persists, where o says, the state apply leaves after sending
// "Launch" to a million users under campaign.old, forgetting it, and
// sending other content to ten million under campaign.launch.
func writeHistoryState(b *testing.B, open func() (backend.State, error)) {
	b.Helper()
	st := state.New("test")
	st.Compact = true
	apply := func(batches int, addr, fp string, at time.Duration) {
		for batch := range batches {
			intent, outcome := statetest.BatchEntries(batch, 500)
			for _, e := range []*state.Entry{&intent, &outcome} {
				e.Time = e.Time.Add(at)
				e.Items[0].Address, e.Items[0].Fingerprint = addr, fp
				if err := st.ApplyEntry(*e); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	apply(2_000, "campaign.old.notification.announce", "fp-old", 0)
	forget := state.Entry{Type: state.EntryForget, Time: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC),
		Items: []state.Item{{Address: "campaign.old.notification.announce"}}}
	if err := st.ApplyEntry(forget); err != nil {
		b.Fatal(err)
	}
	apply(20_000, "campaign.launch.notification.announce", "fp-launch", 48*time.Hour)
	be, err := open()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	if err := be.Persist(st); err != nil {
		b.Fatal(err)
	}
}
