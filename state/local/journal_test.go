package local_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// Concurrent appenders share syncs (group commit); every entry of every
// call must still be in the journal, whole and in call order per caller.
func TestFileAppendConcurrent(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	const callers, calls = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				addr := fmt.Sprintf("notification.c%d", c)
				// Two entries per call: they must stay together.
				if err := f.Append(intent(addr, fmt.Sprintf("u%d", i)), intent(addr, fmt.Sprintf("v%d", i))); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, err := local.NewFile(f.Path()).Read()
	if err != nil {
		t.Fatal(err)
	}
	for c := range callers {
		m := s.Messages[fmt.Sprintf("notification.c%d", c)]
		if m == nil || len(m.Targets) != 2*calls {
			t.Fatalf("caller %d: message %+v; want %d targets", c, m, 2*calls)
		}
	}
	data, _ := os.ReadFile(f.JournalPath())
	if n := bytes.Count(data, []byte("\n")); n != 1+2*callers*calls {
		t.Fatalf("journal has %d lines; want a header and %d entries", n, 2*callers*calls)
	}
}

// A journal left in format 1 by an older pushform is continued in format 1.
func TestFileAppendContinuesOldJournal(t *testing.T) {
	f := newFile(t)
	mustPersist(t, f, statetest.Sample())
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`{"journal":1,"lineage":%q,"serial":%d}`, s.Lineage, s.Serial)
	line := func(payload string) string { return fmt.Sprintf("%08x %s\n", crc(payload), payload) }
	body := line(old) + line(`{"type":"intent","batch":1,"time":"2026-05-01T00:00:00Z","items":[{"address":"notification.old","targets":["u1"]}]}`)
	if err := os.WriteFile(f.JournalPath(), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	g := local.NewFile(f.Path())
	if err := g.Append(intent("notification.new", "u2")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.JournalPath())
	if !bytes.Contains(data, []byte(`{"type":"intent"`)) || bytes.Count(data, []byte(`"type":"intent"`)) != 2 {
		t.Fatalf("appended entry is not in format 1:\n%s", data)
	}
	got, err := g.Read()
	if err != nil || got.Messages["notification.old"] == nil || got.Messages["notification.new"] == nil {
		t.Fatalf("Read = %v, %v; want both messages", got, err)
	}
	// A lock holder continues it too, with no zeros laid down ahead: an
	// older reader would not know where the journal ends.
	h := lockedFile(t, f.Path())
	if err := h.Append(intent("notification.held", "u3")); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(f.JournalPath())
	if bytes.Count(data, []byte(`"type":"intent"`)) != 3 || bytes.IndexByte(data, 0) >= 0 {
		t.Fatalf("the lock holder's entry is not appended in format 1:\n%q", data)
	}
}

// A long id list (a recipients list) is encoded before the journal is
// locked once the journal's format is known: the line is the one the lock
// holder would write, in the journal's format, and reads back.
func TestFileAppendLongListEncodedUnlocked(t *testing.T) {
	ids := make([]string, 20_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	list := state.Entry{Type: state.EntrySnapshot, Time: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Items: []state.Item{{Targets: ids}}}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, f *local.File) // writes the journal first, or not
		json  bool                              // the journal is in format 1
	}{
		{"fresh journal", func(*testing.T, *local.File) {}, false},
		{"journal written", func(t *testing.T, f *local.File) {
			if err := f.Append(intent("notification.a", "u1")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"journal of format 1", func(t *testing.T, f *local.File) {
			s, err := f.Read()
			if err != nil {
				t.Fatal(err)
			}
			hdr := fmt.Sprintf(`{"journal":1,"lineage":%q,"serial":%d}`, s.Lineage, s.Serial)
			if err := os.WriteFile(f.JournalPath(), fmt.Appendf(nil, "%08x %s\n", crc(hdr), hdr), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := f.Append(intent("notification.a", "u1")); err != nil { // f now knows the format
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFile(t)
			mustPersist(t, f, statetest.Sample())
			g := local.NewFile(f.Path())
			tc.setup(t, g)
			if err := g.Append(list); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(g.JournalPath())
			lines := bytes.SplitAfter(bytes.TrimRight(data, "\x00"), []byte("\n"))
			last := lines[len(lines)-2] // the last is what follows the final newline
			format := statefile.JournalFormat
			if tc.json {
				format = 1
			}
			if want, err := statefile.AppendEntryLine(nil, list, format); err != nil || !bytes.Equal(last, want) {
				t.Fatalf("the list's line is %.80q..., want %.80q... (%v)", last, want, err)
			}
			s, err := local.NewFile(f.Path()).Read()
			if err != nil {
				t.Fatal(err)
			}
			if s.Recipients == nil || !slices.Equal(s.Recipients.UserIDs, ids) {
				t.Fatalf("read back recipients %v", s.Recipients)
			}
		})
	}
}

func crc(payload string) uint32 {
	return crc32.Checksum([]byte(payload), crc32.MakeTable(crc32.Castagnoli))
}
