package command

import (
	"context"
	"errors"
	"fmt"

	"pushform/operation"
	"pushform/views"
)

// stateListHelp is the help of state list; its flags come from the flag set it parses.
func stateListHelp() helpDoc {
	return helpDoc{
		usage: []string{"state list [options]"},
		text:  "Lists the addresses in the state, each with how many of its targets were delivered, skipped, failed or are unknown.",
		examples: []string{
			"pushform state list",
			"pushform state list -state=env/test.state",
		},
	}
}

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
