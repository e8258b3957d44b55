package command

import (
	"context"
	"errors"

	"pushform/operation"
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
