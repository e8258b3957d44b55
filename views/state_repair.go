package views

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"pushform/state"
	"pushform/state/local"
	"pushform/termtext"
)

// StateRepair is what state repair found and did, for WriteStateRepair.
type StateRepair struct {
	// Backend names the state; NoJournal says it keeps no journal file
	// (PostgreSQL), so there was nothing to repair.
	Backend   string
	NoJournal bool
	// Report is what the local file backend's Repair found and did, and
	// Err its error: local.ErrRepairNeedsForce when it refused to drop
	// lines without --force.
	Report *local.RepairReport
	Err    error
	// After is the state as it reads once Repair changed something (nil:
	// empty), and ReadErr why it still cannot be read.
	After   *state.State
	ReadErr error
}

// WriteStateRepair writes what state repair found and did, and returns
// the error to report: Repair's (a refusal without --force says what the
// lines record), or a state that still cannot be read.
func WriteStateRepair(w io.Writer, r StateRepair) error {
	if r.NoJournal {
		fmt.Fprintf(w, "%s keeps each journal entry as a row of its own, written in a transaction and checked by the database: "+
			"there is no journal file to cut, so nothing to repair.\n", termtext.Clean(r.Backend))
		return nil
	}
	rep := r.Report
	if rep != nil && rep.Appended > 0 {
		fmt.Fprint(w, termtext.Lines(fmt.Sprintf("The state file %s had %s appended after its end marker: moved them to %s "+
			"and cut the file at byte %d, where its state ends whole (its checksum matches).\n",
			rep.State, plural(int(rep.Appended), "byte", "bytes"), rep.SnapshotRejected, rep.AppendedAt)))
	}
	if errors.Is(r.Err, local.ErrRepairNeedsForce) {
		unchanged := "Nothing was changed."
		if rep.Appended > 0 {
			unchanged = "The journal was not changed."
		}
		return fmt.Errorf("state repair: %s. Cutting the journal after line %d would drop %s, %s.\n"+
			"Without these records the next plan sends those targets again, and a device may show an untagged notification twice.\n"+
			"%s To cut them anyway (they are kept in %s.rejected): pushform state repair --force",
			damage(rep), rep.Kept, lines(rep.Dropped.Lines), recorded(rep.Dropped), unchanged, rep.Journal)
	}
	if r.Err != nil {
		return r.Err
	}
	j := termtext.Clean(rep.Journal)
	var nothing string // what the journal needs: nothing
	switch {
	case !rep.Exists:
		nothing = fmt.Sprintf("There is no state journal (%s): nothing to repair.\n", j)
	case rep.Stale:
		nothing = fmt.Sprintf("The state journal %s is older than the snapshot, which already holds its records "+
			"(a run stopped between saving the snapshot and removing the journal): it is ignored, and the next apply replaces it. Nothing to repair.\n", j)
	case !rep.Repaired:
		nothing = fmt.Sprintf("The state journal %s is intact (%s): nothing to repair.\n", j, lines(rep.Lines))
	}
	var b strings.Builder
	switch {
	case nothing != "" && rep.Appended == 0:
		fmt.Fprint(w, nothing)
		return nil
	case nothing == "":
		journalRepaired(&b, rep)
	}
	return readsNow(w, &b, r)
}

// journalRepaired says what Repair dropped from the journal.
func journalRepaired(b *strings.Builder, rep *local.RepairReport) {
	fmt.Fprintf(b, "%s.\n", capitalise(damage(rep)))
	first := rep.Kept + 1
	if rep.Dropped.Lines == 1 {
		fmt.Fprintf(b, "Moved line %d to %s and cut the journal after line %d.\n", first, termtext.Clean(rep.Rejected), rep.Kept)
	} else {
		fmt.Fprintf(b, "Moved lines %d to %d to %s and cut the journal after line %d.\n", first, rep.Lines, termtext.Clean(rep.Rejected), rep.Kept)
	}
	if rep.Bad != nil {
		fmt.Fprintf(b, "Dropped %s, %s.\n", lines(rep.Dropped.Lines), recorded(rep.Dropped))
	}
}

// readsNow writes b, then how the repaired state reads.
func readsNow(w io.Writer, b *strings.Builder, r StateRepair) error {
	switch s := r.After; {
	case r.ReadErr != nil:
		fmt.Fprint(w, termtext.Lines(b.String()))
		return fmt.Errorf("repaired, but the state still cannot be read: %v", r.ReadErr)
	case s == nil:
		b.WriteString("The state is now empty.\n")
	default:
		addrs := Count(len(s.Messages)) + " addresses"
		if len(s.Messages) == 1 {
			addrs = "1 address"
		}
		fmt.Fprintf(b, "The state now reads: serial %d, %s. Run 'pushform plan' to see what the next apply would send.\n", s.Serial, addrs)
	}
	fmt.Fprint(w, termtext.Lines(b.String()))
	return nil
}

// damage says what is wrong with a journal Repair found damaged.
func damage(rep *local.RepairReport) string {
	if rep.Bad != nil {
		return fmt.Sprintf("line %d of %d of the state journal %s is corrupt (%s)", rep.Bad.Line, rep.Lines, rep.Journal, rep.Bad.Reason)
	}
	return fmt.Sprintf("the last line (%d) of the state journal %s is torn: a write that never finished, so was never acknowledged", rep.Lines, rep.Journal)
}

// recorded says what dropped lines record: "recording 3 targets
// delivered; line 7 cannot be read, so what it records cannot be told".
func recorded(d local.Dropped) string {
	var parts []string
	if d.Delivered > 0 {
		parts = append(parts, plural(d.Delivered, "target", "targets")+" delivered")
	}
	if d.Sent > 0 {
		parts = append(parts, plural(d.Sent, "target", "targets")+" sent without a recorded answer")
	}
	if d.Other > 0 {
		parts = append(parts, plural(d.Other, "target", "targets")+" failed or skipped")
	}
	what := "recording no target's outcome"
	if len(parts) > 0 {
		what = "recording " + joinAnd(parts)
	}
	switch n := len(d.Unreadable); {
	case n == 1:
		what += fmt.Sprintf("; line %d cannot be read, so what it records cannot be told", d.Unreadable[0])
	case n > 1:
		nums := make([]string, n)
		for i, l := range d.Unreadable {
			nums[i] = strconv.Itoa(l)
		}
		what += fmt.Sprintf("; lines %s cannot be read, so what they record cannot be told", joinAnd(nums))
	}
	return what
}

func lines(n int) string { return plural(n, "line", "lines") }

func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
