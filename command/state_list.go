package command

import (
	"context"
	"errors"
	"fmt"

	"pushform/operation"
	"pushform/views"
)

func (m *Meta) stateList(ctx context.Context, args []string) int {
	fs := m.FlagSet("state list")
	var sf stateFlags
	var jf jsonFlags
	sf.bind(fs, false)
	jf.bind(fs, "the addresses")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state list", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state list", errors.New("state list takes no arguments"))
	}
	r, err := operation.StateList(ctx, m.stateOperation("state list", sf))
	if err != nil {
		return m.fail(err)
	}
	if r.State == nil && !jf.enabled() {
		fmt.Fprintf(m.Stderr, "No state at %s.\n", r.Where)
		return ExitOK
	}
	if err := views.NewState(jf.format(), m.view(jf.indent), 0).List(r.State); err != nil {
		return m.Errorf("%v", err)
	}
	return ExitOK
}
