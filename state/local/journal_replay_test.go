package local_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
)

// TestJournalReplaysFullBatches is what a crash leaves: a journal (no
// snapshot since) of full requests, 500 targets each, whose outcomes are
// all alike, and a torn last line: the last request's outcome, cut off in
// the middle of its write. The next run must read the rest back, with the
// last request unknown, and append after cutting the torn line off.
func TestJournalReplaysFullBatches(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	content := &message.Content{Title: "T", Body: "B"}
	batch := func(b int) (intent, outcome state.Entry) {
		ids := make([]string, 500)
		outs := make([]*state.Target, 500)
		rec := &state.Target{Outcome: state.Delivered, Fingerprint: "fp", RequestID: "req-1", Time: now, DeviceCount: 1} // apply shares one record among equal outcomes
		for i := range ids {
			ids[i] = fmt.Sprintf("d%05d", b*500+i)
			outs[i] = rec
		}
		intent = state.Entry{Type: state.EntryIntent, Batch: int64(b), Time: now,
			Items: []state.Item{{Address: "badge.b", Kind: "badge", TargetKind: "device_ids", Fingerprint: "fp", Content: content, Targets: ids}}}
		outcome = state.Entry{Type: state.EntryOutcome, Batch: int64(b), Time: now, RequestID: "req-1", Status: 200,
			Items: []state.Item{{Address: "badge.b", Fingerprint: "fp", Targets: ids, Outcomes: outs}}}
		return intent, outcome
	}
	// The torn line: the last request's outcome as it is written, cut.
	_, lastOutcome := batch(2)
	line, err := statefile.AppendEntryLine(nil, lastOutcome, statefile.JournalFormat)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 8, 9, len(line) / 2, len(line) - 1} {
		t.Run(fmt.Sprintf("cut at %d of %d bytes", cut, len(line)), func(t *testing.T) {
			f := local.NewFile(filepath.Join(t.TempDir(), "pushform.state"))
			if err := f.Persist(state.New("test")); err != nil {
				t.Fatal(err)
			}
			for b := range 3 {
				intent, outcome := batch(b)
				if err := f.Append(intent); err != nil {
					t.Fatal(err)
				}
				if b < 2 {
					if err := f.Append(outcome); err != nil {
						t.Fatal(err)
					}
				}
			}
			whole, err := os.ReadFile(f.JournalPath())
			if err != nil {
				t.Fatal(err)
			}
			torn := append(append([]byte{}, whole...), line[:cut]...)
			if err := os.WriteFile(f.JournalPath(), torn, 0o600); err != nil {
				t.Fatal(err)
			}

			next := local.NewFile(f.Path())
			got, err := next.Read()
			if err != nil {
				t.Fatalf("reading back the journal of a crashed run: %v", err)
			}
			if c := outcomes(got); c[state.Delivered] != 1000 || c[state.Unknown] != 500 {
				t.Fatalf("outcomes %v, want 1000 delivered and 500 unknown: the torn outcome must not count", c)
			}
			// The next run's first append cuts the torn bytes off first.
			_, outcome := batch(2)
			if err := next.Append(outcome); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(f.JournalPath())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, append(append([]byte{}, whole...), line...)) {
				t.Fatalf("the journal after the append is not the intact lines plus the new one (%d bytes, want %d)", len(data), len(whole)+len(line))
			}
			got, err = local.NewFile(f.Path()).Read()
			if err != nil {
				t.Fatal(err)
			}
			if c := outcomes(got); c[state.Delivered] != 1500 {
				t.Fatalf("outcomes after the append %v, want 1500 delivered", c)
			}
		})
	}
}

func outcomes(s *state.State) map[state.Outcome]int {
	counts := map[state.Outcome]int{}
	for _, tg := range s.Messages["badge.b"].Targets {
		counts[tg.Outcome]++
	}
	return counts
}

// TestJournalLeftByPersistIsNotExtended is a crash between Persist's rename
// and its removal of the journal: the journal left extends an older serial
// and is ignored. The next run's entries must not be appended to it, where
// they would be ignored too (and its sends made again).
func TestJournalLeftByPersistIsNotExtended(t *testing.T) {
	dir := t.TempDir()
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	st := state.New("test")
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	intent := func(addr string) state.Entry {
		return state.Entry{Type: state.EntryIntent, Time: now,
			Items: []state.Item{{Address: addr, Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp", Content: &message.Content{Title: "T", Body: "B"}, Targets: []string{"u1"}}}}
	}
	if err := f.Append(intent("notification.first")); err != nil {
		t.Fatal(err)
	}
	journal, err := os.ReadFile(f.JournalPath())
	if err != nil {
		t.Fatal(err)
	}
	st, err = f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Persist(st); err != nil {
		t.Fatal(err)
	}
	// The crash: the journal is still there after the rename.
	if err := os.WriteFile(f.JournalPath(), journal, 0o600); err != nil {
		t.Fatal(err)
	}

	next := local.NewFile(f.Path())
	st, err = next.Read()
	if err != nil || st.Messages["notification.first"] == nil {
		t.Fatalf("read after the crash: %v", err)
	}
	if err := next.Append(intent("notification.second")); err != nil {
		t.Fatal(err)
	}
	got, err := local.NewFile(f.Path()).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages["notification.second"] == nil {
		t.Fatal("the entry appended after the crash was lost: it went into the stale journal")
	}
	if got.Messages["notification.first"] == nil {
		t.Fatal("the persisted entry was lost")
	}
}
