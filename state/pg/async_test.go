package pg_test

import (
	"testing"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

// Outcomes are committed without waiting for the WAL flush, for their own
// transaction only: the session stays synchronous for the next intent, and
// every row is there in order for the next reader.
func TestOutcomeCommitIsAsyncForItsTransactionOnly(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o, m, s := openPersisted(t)
	before, err := pg.Show(m, "synchronous_commit")
	if err != nil {
		t.Fatal(err)
	}
	rec := state.NewRecorder(m, s)
	for b := range 3 {
		intent, outcome := statetest.BatchEntries(b, 5)
		for _, e := range []state.Entry{intent, outcome} {
			if err := rec.Record(e); err != nil {
				t.Fatal(err)
			}
			if got, err := pg.Show(m, "synchronous_commit"); err != nil || got != before {
				t.Fatalf("after a %s: synchronous_commit = %q, %v; want %q, as before", e.Type, got, err, before)
			}
		}
	}
	got, err := pgtest.Open(t, o).Read()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, msg := range got.Messages {
		for id, tg := range msg.Targets {
			if tg.Outcome != state.Delivered {
				t.Fatalf("target %s is %s; want delivered", id, tg.Outcome)
			}
			n++
		}
	}
	if n != 15 {
		t.Fatalf("%d targets read back; want 15", n)
	}
}
