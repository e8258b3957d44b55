package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// statePruneHelp is the help of state prune; its flags come from the flag set it parses.
func statePruneHelp() helpDoc {
	return helpDoc{
		usage: []string{"state prune [options] --before TIME"},
		text: "Drops the delivery ledger's records older than TIME (RFC 3339, or a date: the start of that day, UTC), " +
			"under the state lock. The ledger is kept forever unless pruned: it is what keeps a forgotten address, a " +
			"rename or a stale branch from sending a target content it already received, so a dropped record can no " +
			"longer stop a resend. The addresses' view (each current address's targets and last outcomes) is kept " +
			"whole. Refused, with the count, when it would drop records that a repeat_after or frequency_cap of the " +
			"configuration still needs (those younger than the longest of them), unless --force. Prints how many " +
			"records were dropped.",
		examples: []string{"pushform state prune --before 2026-01-01", "pushform state prune --before 2026-06-01T00:00:00Z --force"},
	}
}

func (m *Meta) statePrune(ctx context.Context, args []string) int {
	fs := m.FlagSet("state prune")
	var sf stateFlags
	var cf configFlags
	var before string
	var force bool
	fs.StringVar(&before, "before", "", "drop the ledger records older than `TIME`: RFC 3339, or a date (2026-01-01: the start of that day, UTC)")
	fs.BoolVar(&force, "force", false, "drop them even when they are younger than a day, a repeat_after or frequency_cap of the configuration still needs them, or TIME is in the future")
	cf.bind(fs)
	sf.bind(fs, true)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state prune", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state prune", errors.New("state prune takes no arguments; give the date with --before"))
	}
	if before == "" {
		return m.usageError("state prune", errors.New("state prune needs --before TIME: the ledger is kept whole unless you say up to when to drop it"))
	}
	at, err := parseHistoryTime("--before", before, false)
	if err != nil {
		return m.usageError("state prune", err)
	}
	o := m.stateOperation("state prune", sf)
	o.Config = m.configOptions(cf, nil)
	res, err := operation.StatePrune(ctx, o, operation.PruneOptions{Before: at, BeforeText: before, Force: force})
	if res != nil {
		views.StatePruned(m.Stdout, res.Dropped, res.Before, res.Serial)
	}
	if err != nil {
		return m.fail(err)
	}
	return ExitOK
}
