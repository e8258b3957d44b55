package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// stateRmHelp is the help of state rm; its flags come from the flag set it parses.
func stateRmHelp() helpDoc {
	return helpDoc{
		usage: []string{"state rm [options] ADDR..."},
		text: "Removes addresses from the state, under the state lock. Nothing is sent and nothing can be " +
			"recalled from devices. The ledger keeps their deliveries, marked forgotten: an address removed " +
			"from the state but still in the configuration is planned again, and its targets that received " +
			"its content are already delivered, not sent it again (apply --replace ADDR sends it again).",
		examples: []string{"pushform state rm notification.beta_invite"},
	}
}

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
