package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

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
