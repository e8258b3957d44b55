package local

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"pushform/atomicfile"
	"pushform/state"
	"pushform/state/statefile"
)

// RepairReport says what Repair found in the journal and what it did.
type RepairReport struct {
	// State and Journal are the state file's path and the journal's;
	// Rejected the file the dropped lines were written to ("" when
	// nothing was dropped).
	State, Journal, Rejected string
	// Exists is false when there is no journal.
	Exists bool
	// Stale is set when the journal is older than the snapshot: it was
	// folded into it already, and Read ignores it.
	Stale bool
	// Lines is the number of lines in the journal, a torn last one
	// included; Kept those of the intact prefix.
	Lines, Kept int
	// Bad is the first complete line that cannot be used; nil when the
	// only damage (if any) is a torn last line.
	Bad *statefile.JournalLineError
	// Torn is set when the last line is torn: a write that never
	// finished, so was never acknowledged.
	Torn bool
	// Dropped is what the lines after the intact prefix record.
	Dropped Dropped
	// Repaired is set once the journal was cut.
	Repaired bool
	// Appended counts the bytes cut from the end of the state file, after
	// its end marker (0: none), where it ended whole at AppendedAt; they
	// were written to SnapshotRejected.
	Appended, AppendedAt int64
	SnapshotRejected     string
}

// Dropped counts what the lines after a journal's intact prefix record,
// per target by its last record there (a torn last line is not counted:
// it was never acknowledged).
type Dropped struct {
	// Lines is how many lines would be or were dropped, a torn one
	// included.
	Lines int
	// Delivered counts targets recorded delivered; Sent targets recorded
	// sent without an answer (an intent, or an unknown outcome); Other
	// targets recorded failed or skipped.
	Delivered, Sent, Other int
	// Unreadable lists the complete lines that cannot be decoded: what
	// they record cannot be told.
	Unreadable []int
}

// Risky reports whether dropping the lines may lose what a device
// received: a delivered or sent record, or one that cannot be read.
func (d Dropped) Risky() bool {
	return d.Delivered > 0 || d.Sent > 0 || len(d.Unreadable) > 0
}

// ErrRepairNeedsForce is returned by Repair without force when the lines
// it would drop record deliveries or sends, or cannot be read.
var ErrRepairNeedsForce = errors.New("the lines to drop may record what devices received")

// Repair cuts the journal after its last intact line, once the lines
// after it are written to a file beside it (JournalPath()+".rejected", or
// with a number when that exists, mode 0600). Without force it refuses,
// with ErrRepairNeedsForce and the report filled in, when those lines
// record delivered or sent targets or cannot be read. The caller must
// hold the lock through this File. An intact journal, a stale one and none
// at all are left alone.
func (f *File) Repair(force bool) (*RepairReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lockFile == nil {
		return nil, errors.New("repairing the state journal needs the state lock")
	}
	rep := &RepairReport{State: f.path, Journal: f.JournalPath()}
	if err := f.cutAppended(rep); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(f.JournalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state journal: %w", err)
	}
	rep.Exists = true
	h, valid, bad, dropped := statefile.ScanJournal(data)
	var nf *statefile.NewerFormatError
	if errors.As(bad, &nf) {
		return nil, fmt.Errorf("state journal %s was %w; repairing it would drop every line", f.JournalPath(), bad)
	}
	rep.Kept = bytes.Count(data[:valid], []byte("\n"))
	rep.Lines = rep.Kept + len(dropped)
	if h.Journal != 0 {
		if sh, ok, err := f.storedHeader(); err == nil && ok && h.Lineage == sh.Lineage && h.Serial < sh.Serial {
			rep.Stale = true
			return rep, nil
		}
	}
	errors.As(bad, &rep.Bad)
	rep.Dropped = countDropped(dropped)
	if len(dropped) == 0 {
		return rep, nil
	}
	rep.Torn = dropped[len(dropped)-1].Torn
	if rep.Dropped.Risky() && !force {
		return rep, ErrRepairNeedsForce
	}
	// The dropped lines, without the zeros a format-3 journal may end in.
	end := valid
	for _, d := range dropped {
		end += int64(len(d.Bytes))
	}
	if rep.Rejected, err = f.writeRejected(data[valid:end]); err != nil {
		return nil, err
	}
	jf, err := os.OpenFile(f.JournalPath(), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening state journal: %w", err)
	}
	defer jf.Close()
	if err := jf.Truncate(valid); err != nil {
		return nil, fmt.Errorf("cutting the state journal after line %d (the dropped lines are in %s): %w", rep.Kept, rep.Rejected, err)
	}
	if err := jf.Sync(); err != nil {
		return nil, fmt.Errorf("syncing state journal: %w", err)
	}
	if err := jf.Close(); err != nil {
		return nil, fmt.Errorf("closing state journal: %w", err)
	}
	f.checked, f.jformat = false, 0
	rep.Repaired = true
	return rep, nil
}

// countDropped tallies what dropped lines record, per target by its last
// record among them.
func countDropped(lines []statefile.DroppedLine) Dropped {
	d := Dropped{Lines: len(lines)}
	type key struct{ addr, id string }
	last := map[key]state.Outcome{}
	for _, l := range lines {
		switch {
		case l.Torn:
		case l.Entry != nil:
			e := l.Entry
			for _, it := range e.Items {
				switch e.Type {
				case state.EntryIntent:
					for _, id := range it.Targets {
						last[key{it.Address, id}] = state.Unknown
					}
				case state.EntryOutcome:
					for i, id := range it.Targets {
						if i < len(it.Outcomes) && it.Outcomes[i] != nil { // a format-1 line may say null
							last[key{it.Address, id}] = it.Outcomes[i].Outcome
						}
					}
				}
			}
		case !l.Header:
			d.Unreadable = append(d.Unreadable, l.Line)
		}
	}
	for _, o := range last {
		switch o {
		case state.Delivered:
			d.Delivered++
		case state.Unknown:
			d.Sent++
		default:
			d.Other++
		}
	}
	return d
}

// cutAppended cuts bytes appended after the end of a snapshot whose
// state is otherwise whole (statefile.TrailingDataError), once they are
// written beside it: the state up to there is the one last saved, checked
// by its checksum, so nothing recorded is lost.
func (f *File) cutAppended(rep *RepairReport) error {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading state: %w", err)
	}
	var td *statefile.TrailingDataError
	if _, err := statefile.Decode(bytes.NewReader(data)); !errors.As(err, &td) {
		return nil // whole, or damaged otherwise: Read says how
	}
	if rep.SnapshotRejected, err = writeRejected(f.path, data[td.End:]); err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, 0o600, func(w io.Writer) error { _, err := w.Write(data[:td.End]); return err }); err != nil {
		return fmt.Errorf("cutting the state file at byte %d (the appended bytes are in %s): %w", td.End, rep.SnapshotRejected, err)
	}
	rep.Appended, rep.AppendedAt = td.Size-td.End, td.End
	return nil
}

// writeRejected writes the dropped bytes to a new file beside the
// journal, synced, and returns its path.
func (f *File) writeRejected(b []byte) (string, error) {
	return writeRejected(f.JournalPath(), b)
}

// writeRejected writes bytes cut from the file at path to a new file
// beside it (path.rejected, numbered when that exists), synced, and
// returns its path.
func writeRejected(from string, b []byte) (string, error) {
	base := from + ".rejected"
	path := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
		path = base + "." + strconv.Itoa(n)
	}
	// atomicfile syncs the file and the directory before returning.
	if err := atomicfile.Write(path, 0o600, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return "", fmt.Errorf("saving the bytes to drop: %w", err)
	}
	return path, nil
}
