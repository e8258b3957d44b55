package pg_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/pg/pgtest"
)

// TestPersistJournaledList: the recipients list a run journals is in the
// snapshot that ends the run, whole.
func TestPersistJournaledList(t *testing.T) {
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
	if err := m.Persist(s); err != nil {
		t.Fatal(err)
	}
	got, err := pgtest.Open(t, o).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Recipients == nil || !slices.Equal(got.Recipients.UserIDs, ids) {
		t.Fatalf("read back %v", got.Recipients)
	}
}
