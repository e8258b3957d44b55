package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

func (m *Meta) stateRm(ctx context.Context, args []string) int {
	fs := m.FlagSet("state rm")
	var sf stateFlags
	sf.bind(fs, true)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state rm", err)
	}
	if fs.NArg() == 0 {
		return m.usageError("state rm", errors.New("state rm needs at least one address"))
	}
	res, err := operation.StateRemove(ctx, m.stateOperation("state rm", sf), fs.Args())
	if res != nil {
		views.StateRemoved(m.Stdout, res.Removed, res.Serial)
	}
	if err != nil {
		return m.fail(err)
	}
	return ExitOK
}
