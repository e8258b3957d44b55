package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

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
