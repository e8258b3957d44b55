package command

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pushform/backend"
	"pushform/state/local"
	"pushform/termtext"
	"pushform/views"
)

// stateRepairOptions are the inputs of state repair.
type stateRepairOptions struct {
	*Meta
	// open opens the configured state backend.
	open        func(context.Context) (backend.State, error)
	force       bool
	lockTimeout time.Duration
}

// journalRepairer is a backend whose journal is a file that can be cut:
// the local file backend.
type journalRepairer interface {
	Repair(force bool) (*local.RepairReport, error)
}

func (m *Meta) stateRepair(ctx context.Context, args []string) int {
	o := &stateRepairOptions{Meta: m}
	var sf stateFlags
	fs := m.FlagSet("state repair")
	sf.bind(fs, true)
	fs.BoolVar(&o.force, "force", false, "cut the journal even when the lines dropped record delivered or sent targets, or cannot be read")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state repair", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state repair", errors.New("state repair takes no arguments"))
	}
	o.lockTimeout = sf.lockTimeout
	o.open = func(ctx context.Context) (backend.State, error) { return m.stateBackend(ctx, sf) }
	return runStateRepair(ctx, o)
}

// runStateRepair cuts a damaged local journal after its last intact line,
// under the state lock, and says what it dropped and how the state reads
// after. The state is not read before: a damaged journal is why it cannot
// be.
func runStateRepair(ctx context.Context, o *stateRepairOptions) int {
	m := o.Meta
	be, err := o.open(ctx)
	if err != nil {
		return m.fail(err)
	}
	defer be.Close()
	rp, ok := be.(journalRepairer)
	if !ok {
		fmt.Fprintf(m.Stdout, "%s keeps each journal entry as a row of its own, written in a transaction and checked by the database: "+
			"there is no journal file to cut, so nothing to repair.\n", termtext.Clean(be.String()))
		return ExitOK
	}
	id, err := backend.Lock(ctx, be, "state repair", o.lockTimeout)
	if err != nil {
		return m.fail(err)
	}
	if info, stale := be.StaleLock(); stale {
		m.warnStaleLock(&info)
	}
	code := m.repairLocked(rp, be, o.force)
	if err := be.Unlock(id); err != nil {
		return m.fail(err)
	}
	return code
}

func (m *Meta) repairLocked(rp journalRepairer, be backend.State, force bool) int {
	rep, err := rp.Repair(force)
	if rep != nil && rep.Appended > 0 {
		fmt.Fprint(m.Stdout, termtext.Lines(fmt.Sprintf("The state file %s had %s appended after its end marker: moved them to %s "+
			"and cut the file at byte %d, where its state ends whole (its checksum matches).\n",
			rep.State, plural(int(rep.Appended), "byte"), rep.SnapshotRejected, rep.AppendedAt)))
	}
	if errors.Is(err, local.ErrRepairNeedsForce) {
		unchanged := "Nothing was changed."
		if rep.Appended > 0 {
			unchanged = "The journal was not changed."
		}
		return m.Errorf("state repair: %s. Cutting the journal after line %d would drop %s, %s.\n"+
			"Without these records the next plan sends those targets again, and a device may show an untagged notification twice.\n"+
			"%s To cut them anyway (they are kept in %s.rejected): pushform state repair --force",
			damage(rep), rep.Kept, lines(rep.Dropped.Lines), recorded(rep.Dropped), unchanged, rep.Journal)
	}
	if err != nil {
		return m.fail(err)
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
		fmt.Fprint(m.Stdout, nothing)
		return ExitOK
	case nothing == "":
		journalRepaired(&b, rep)
	}
	return m.readsNow(&b, be)
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
func (m *Meta) readsNow(b *strings.Builder, be backend.State) int {
	s, err := be.Read()
	switch {
	case err != nil:
		fmt.Fprint(m.Stdout, termtext.Lines(b.String()))
		return m.Errorf("repaired, but the state still cannot be read: %v", err)
	case s == nil:
		b.WriteString("The state is now empty.\n")
	default:
		addrs := views.Count(len(s.Messages)) + " addresses"
		if len(s.Messages) == 1 {
			addrs = "1 address"
		}
		fmt.Fprintf(b, "The state now reads: serial %d, %s. Run 'pushform plan' to see what the next apply would send.\n", s.Serial, addrs)
	}
	fmt.Fprint(m.Stdout, termtext.Lines(b.String()))
	return ExitOK
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
		parts = append(parts, plural(d.Delivered, "target")+" delivered")
	}
	if d.Sent > 0 {
		parts = append(parts, plural(d.Sent, "target")+" sent without a recorded answer")
	}
	if d.Other > 0 {
		parts = append(parts, plural(d.Other, "target")+" failed or skipped")
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

func lines(n int) string { return plural(n, "line") }

func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
