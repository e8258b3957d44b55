package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// stateMvHelp is the help of state mv; its flags come from the flag set it parses.
func stateMvHelp() helpDoc {
	return helpDoc{
		usage: []string{"state mv [options] FROM TO"},
		text: "Moves the state recorded under FROM to TO, under the state lock, as a moved block in the " +
			"configuration would: the next plan sees TO as already sent, so renaming a block sends nothing again. " +
			"Without instance keys, every instance of a for_each block moves with its key. Nothing is sent. " +
			"Refuses a FROM not in the state, a TO that already has state, and a move between a notification and a badge.",
		examples: []string{
			"pushform state mv notification.welcome campaign.onboarding.notification.welcome",
			"pushform state mv 'notification.order[\"A-1\"]' 'notification.shipping[\"A-1\"]'",
		},
	}
}

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
