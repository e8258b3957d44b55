package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// statePullHelp is the help of state pull; its flags come from the flag set it parses.
func statePullHelp() helpDoc {
	return helpDoc{
		usage: []string{"state pull [options]"},
		text: "Prints the backend's current state in the local file format (the bytes a pushform.state holds), " +
			"for a backup or to inspect a PostgreSQL state with local tools. Redirect it to a file.",
		examples: []string{"pushform state pull > backup.state"},
	}
}

func (m *Meta) statePull(ctx context.Context, args []string) int {
	fs := m.FlagSet("state pull")
	var sf stateFlags
	sf.bind(fs, false)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state pull", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state pull", errors.New("state pull takes no arguments; redirect its output to a file"))
	}
	if m.StdoutTerminal {
		return m.Errorf("state pull writes the state file format, which is binary: redirect it to a file, as in\n  pushform state pull > pushform.state")
	}
	if err := operation.StatePull(ctx, m.stateOperation("state pull", sf), m.Stdout); err != nil {
		return m.fail(err)
	}
	return ExitOK
}

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
