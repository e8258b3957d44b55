package pg_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// The write path at the scale of the goal: a 1M-target apply sends 2,000
// requests of 500 targets from 10 workers (apply --parallelism 10), each
// journaling an intent before and an outcome after, then compacts once.
const (
	benchTargets     = 1_000_000
	benchBatch       = 500
	benchParallelism = 10
)

// walMeter reads the server's WAL position, to count the bytes a benchmark
// made the server write (every session's: run it alone).
type walMeter struct {
	conn  *pgx.Conn
	start string
}

func newWALMeter(b *testing.B) *walMeter {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	return &walMeter{conn: conn}
}

func (w *walMeter) begin(b *testing.B) {
	if err := w.conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&w.start); err != nil {
		b.Fatal(err)
	}
}

// bytes returns the WAL bytes written since begin.
func (w *walMeter) bytes(b *testing.B) float64 {
	var n float64
	if err := w.conn.QueryRow(context.Background(), `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8`, w.start).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func encodedSize(b *testing.B, s *state.State) float64 {
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, s); err != nil {
		b.Fatal(err)
	}
	return float64(buf.Len())
}

// BenchmarkAppendParallel appends the intent and outcome of one 500-target
// request per op, from 10 goroutines as apply --parallelism 10 does: group
// commit lets them share commits.
func BenchmarkAppendParallel(b *testing.B) {
	m := pgtest.Open(b, pgtest.Options(b))
	if err := m.Persist(state.New("test")); err != nil {
		b.Fatal(err)
	}
	intent, outcome := statetest.BatchEntries(0, benchBatch)
	wal := newWALMeter(b)
	wal.begin(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	b.ResetTimer()
	for range benchParallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := m.Append(intent); err != nil {
					b.Error(err)
					return
				}
				if err := m.Append(outcome); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(wal.bytes(b)/float64(b.N*benchBatch), "wal-bytes/target")
}

// BenchmarkPersist1M compacts a 1M-target state: one snapshot row written,
// the journal rows deleted.
func BenchmarkPersist1M(b *testing.B) {
	m := pgtest.Open(b, pgtest.Options(b))
	s := state.New("test")
	rec := state.NewRecorder(nopJournal{}, s)
	for i := range benchTargets / benchBatch {
		intent, outcome := statetest.BatchEntries(i, benchBatch)
		if err := rec.Record(intent, outcome); err != nil {
			b.Fatal(err)
		}
	}
	size := encodedSize(b, s)
	wal := newWALMeter(b)
	wal.begin(b)
	b.ResetTimer()
	for b.Loop() {
		if err := m.Persist(s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(size, "state-bytes")
	b.ReportMetric(wal.bytes(b)/float64(b.N)/size, "wal/state")
}

type nopJournal struct{}

func (nopJournal) Append(...state.Entry) error { return nil }

// BenchmarkApply1M is the whole write path of a 1M-target apply as the
// session drives it: the first persist of a new state, the recipients list
// (1M user ids), 2,000 requests' intents and outcomes recorded by 10
// workers, and the final persist.
// wal/state is the goal's figure: WAL bytes written over the size of the
// final state (at most 5).
func BenchmarkApply1M(b *testing.B) {
	o := pgtest.Options(b)
	wal := newWALMeter(b)
	users := make([]string, benchTargets)
	for i := range users {
		users[i] = fmt.Sprintf("u%07d", i)
	}
	var walTotal, sizeTotal float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		o.StateName = fmt.Sprintf("apply-%d", i)
		m, err := pg.Open(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		wal.begin(b)
		b.StartTimer()

		s := state.New("test")
		if err := m.Persist(s); err != nil {
			b.Fatal(err)
		}
		rec := state.NewRecorder(m, s)
		// The recipients list fetched for the run, kept for --refresh=false.
		if err := rec.Record(state.Entry{Type: state.EntrySnapshot, Time: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), Items: []state.Item{{Targets: users}}}); err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range benchParallelism {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := int(next.Add(1)) - 1
					if n >= benchTargets/benchBatch {
						return
					}
					intent, outcome := statetest.BatchEntries(n, benchBatch)
					if err := rec.Record(intent); err != nil {
						b.Error(err)
						return
					}
					if err := rec.Record(outcome); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		var perr error
		rec.Read(func(st *state.State) { perr = m.Persist(st) })
		if perr != nil {
			b.Fatal(perr)
		}

		b.StopTimer()
		walTotal += wal.bytes(b)
		sizeTotal += encodedSize(b, s)
		m.Close()
		b.StartTimer()
	}
	b.ReportMetric(sizeTotal/float64(b.N), "state-bytes")
	b.ReportMetric(walTotal/sizeTotal, "wal/state")
}
