package pg_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// TestPersistCopiesJournaledList: the recipients list a run journals is
// kept encoded for the snapshot that ends the run, which copies it and
// reads back whole.
func TestPersistCopiesJournaledList(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	o, m, s := openPersisted(t)
	ids := make([]string, 20_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	rec := state.NewRecorder(m, s)
	if err := rec.Record(state.Entry{Type: state.EntrySnapshot, Time: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Items: []state.Item{{Targets: ids}}}); err != nil {
		t.Fatal(err)
	}
	if !pg.KeptList(m) {
		t.Fatal("the list's encoding is not kept")
	}
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	if pg.KeptList(m) {
		t.Error("the list's encoding is kept after the Persist that used it")
	}
	got, err := pgtest.Open(t, o).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Recipients == nil || !slices.Equal(got.Recipients.UserIDs, ids) {
		t.Fatalf("read back %v", got.Recipients)
	}
}
