package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// stateRepairHelp is the help of state repair; its flags come from the flag set it parses.
func stateRepairHelp() helpDoc {
	return helpDoc{
		usage: []string{"state repair [options]"},
		text: "Repairs a local state journal that a command refused as damaged: a complete line whose checksum " +
			"does not match or that does not decode, or a torn last line. Under the state lock, it writes every line " +
			"from the first damaged one on to a file beside the journal (pushform.state.journal.rejected, mode 0600) " +
			"and cuts the journal after the last intact line. It first counts what those lines record: when they record " +
			"delivered targets or targets sent without an answer, or cannot be read, it refuses, says how many, and " +
			"cuts only with --force (without those records the next plan sends those targets again). A local state file " +
			"with data appended after its end marker (its state whole before it, its checksum matching) is cut there, " +
			"the appended bytes written to pushform.state.rejected. It then prints " +
			"how the state reads. A PostgreSQL state has no journal file: there is nothing to repair.",
		examples: []string{"pushform state repair", "pushform state repair -force -state=env/test.state"},
	}
}

func (m *Meta) stateRepair(ctx context.Context, args []string) int {
	var sf stateFlags
	var force bool
	fs := m.FlagSet("state repair")
	sf.bind(fs, true)
	fs.BoolVar(&force, "force", false, "cut the journal even when the lines dropped record delivered or sent targets, or cannot be read")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state repair", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state repair", errors.New("state repair takes no arguments"))
	}
	res, err := operation.StateRepair(ctx, m.stateOperation("state repair", sf), force)
	code := ExitOK
	if res != nil {
		if verr := views.WriteStateRepair(m.Stdout, *res); verr != nil {
			code = m.fail(verr)
		}
	}
	if err != nil {
		return m.fail(err)
	}
	return code
}
