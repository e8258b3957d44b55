package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// statePushHelp is the help of state push; its flags come from the flag set it parses.
func statePushHelp() helpDoc {
	return helpDoc{
		usage: []string{"state push [options] FILE"},
		text: "Stores a local state file in the configured backend, under the state lock: how a team moves an " +
			"existing file state to PostgreSQL. Refused when the backend already holds a state of another " +
			"lineage, a newer serial, or the same serial with other content, unless --force. The backend keeps " +
			"its lineage and stores the pushed state as its next serial, so plans saved before are refused as stale.",
		examples: []string{"pushform state push pushform.state", "pushform state push old.state -force"},
	}
}

func (m *Meta) statePush(ctx context.Context, args []string) int {
	fs := m.FlagSet("state push")
	var sf stateFlags
	var force bool
	sf.bind(fs, true)
	fs.BoolVar(&force, "force", false, "replace a state of another lineage, or a newer one, in the backend (its delivery records are kept)")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state push", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("state push", errors.New("state push takes exactly one argument, a local state file"))
	}
	res, err := operation.StatePush(ctx, m.stateOperation("state push", sf), m.path(fs.Arg(0)), force)
	if res != nil {
		views.StatePushed(m.Stdout, *res)
	}
	if err != nil {
		return m.fail(err)
	}
	return ExitOK
}
