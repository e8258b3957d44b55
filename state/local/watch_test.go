package local_test

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
)

// TestHeldAppendSeesOutsideChanges: a lock holder keeps its journal open
// and, on Linux, checks the snapshot's and the journal's paths again only
// when its directory watch saw them change. Whatever another process does
// to them between two appends (someone who broke the lock), the holder's
// next append sees it, an outcome as much as an intent.
func TestHeldAppendSeesOutsideChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, f *local.File)
		stale  bool // the append is refused; else it goes to the journal at the path
	}{
		{"snapshot persisted by another", func(t *testing.T, f *local.File) {
			other := local.NewFile(f.Path())
			s, err := other.Read()
			if err != nil {
				t.Fatal(err)
			}
			mustPersist(t, other, s)
		}, true},
		{"snapshot removed", func(t *testing.T, f *local.File) {
			if err := os.Remove(f.Path()); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"snapshot rewritten in place", func(t *testing.T, f *local.File) {
			data, err := os.ReadFile(f.Path())
			if err != nil {
				t.Fatal(err)
			}
			// The same file, another serial: written over, not replaced.
			data = []byte(strings.Replace(string(data), `"serial":1`, `"serial":7`, 1))
			if err := os.WriteFile(f.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"journal removed", func(t *testing.T, f *local.File) {
			if err := os.Remove(f.JournalPath()); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		for _, last := range []string{"outcome", "intent"} {
			t.Run(tc.name+", then an "+last, func(t *testing.T) {
				f := newFile(t)
				mustPersist(t, f, statetest.Sample())
				h := lockedFile(t, f.Path())
				if _, err := h.Read(); err != nil {
					t.Fatal(err)
				}
				in, out := statetest.BatchEntries(1, 3)
				for _, e := range []state.Entry{in, out, in} { // the journal kept open, its creation seen
					if err := h.Append(e); err != nil {
						t.Fatal(err)
					}
				}
				checks := local.PathChecks(h)
				if err := h.Append(out); err != nil {
					t.Fatal(err)
				}
				if got := local.PathChecks(h); runtime.GOOS == "linux" && got != checks {
					t.Fatalf("an append with nothing changed checked the paths (%d checks, then %d)", checks, got)
				}
				tc.change(t, f)
				next := out
				if last == "intent" {
					next, _ = statetest.BatchEntries(2, 3)
				}
				err := h.Append(next)
				if tc.stale {
					if !errors.Is(err, state.ErrStaleSerial) {
						t.Fatalf("append after the change: err = %v; want ErrStaleSerial", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(f.JournalPath())
				if err != nil || strings.Count(string(data), "\n") < 2 {
					t.Fatalf("the journal at the path holds %q (%v); want its header and the entry", data, err)
				}
			})
		}
	}
}
