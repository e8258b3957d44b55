package command

import (
	"context"
	"errors"
	"fmt"

	"pushform/operation"
	"pushform/views"
)

// stateShowLimit is how many target lines state show prints without --all.
const stateShowLimit = 50

// stateShowHelp is the help of state show; its flags come from the flag set it parses.
func stateShowHelp() helpDoc {
	return helpDoc{
		usage: []string{"state show [options] ADDR"},
		text: "Shows one address of the state: its kind, content and fingerprint, then every target " +
			"with its last outcome, request id and time (the first 50 unless --all).",
		examples: []string{
			"pushform state show campaign.welcome.notification.hello",
			"pushform state show badge.reset -json",
		},
	}
}

func (m *Meta) stateShow(ctx context.Context, args []string) int {
	fs := m.FlagSet("state show")
	var sf stateFlags
	var jf jsonFlags
	var all bool
	sf.bind(fs, false)
	jf.bind(fs, "the address's state")
	fs.BoolVar(&all, "all", false, fmt.Sprintf("print every target, not only the first %d", stateShowLimit))
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state show", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("state show", errors.New("state show takes exactly one address"))
	}
	msg, err := operation.StateShow(ctx, m.stateOperation("state show", sf), fs.Arg(0))
	if err != nil {
		return m.fail(err)
	}
	limit := stateShowLimit
	if all {
		limit = 0
	}
	if err := views.NewState(jf.format(), m.view(jf.indent), limit).Show(msg); err != nil {
		return m.Errorf("%v", err)
	}
	return ExitOK
}
