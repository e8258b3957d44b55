package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// stateMv is `pushform state mv FROM TO`: what a moved block does, without
// one (see operation.StateMove).
func (m *Meta) stateMv(ctx context.Context, args []string) int {
	fs := m.FlagSet("state mv")
	var sf stateFlags
	sf.bind(fs, true)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state mv", err)
	}
	if fs.NArg() != 2 {
		return m.usageError("state mv", errors.New("state mv takes two addresses, FROM and TO"))
	}
	res, err := operation.StateMove(ctx, m.stateOperation("state mv", sf), fs.Arg(0), fs.Arg(1))
	if res != nil {
		views.StateMoved(m.Stdout, res.Items, res.Serial)
	}
	if err != nil {
		return m.fail(err)
	}
	return ExitOK
}
