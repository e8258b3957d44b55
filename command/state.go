package command

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// stateHelp is the help of state; its flags come from the flag set it parses.
func stateHelp() helpDoc {
	return helpDoc{
		usage: []string{"state list [options]", "state show [options] ADDR", "state rm [options] ADDR...", "state mv [options] FROM TO", "state pull [options]", "state push [options] FILE", "state repair [options]", "state prune [options] --before TIME"},
		text: "Inspects or edits the state: the record of what was sent to whom. Nothing is sent. " +
			"Run 'pushform state SUBCOMMAND -h' for the options of each.",
		examples: []string{
			"pushform state list",
			"pushform state show 'notification.order_shipped[\"A-1001\"]'",
		},
	}
}

func runState(ctx context.Context, m *Meta, args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return m.usageError("state", errors.New("missing subcommand: list, show, rm, mv, pull, push, repair or prune"))
	}
	switch args[0] {
	case "list":
		return m.stateList(ctx, args[1:])
	case "show":
		return m.stateShow(ctx, args[1:])
	case "rm":
		return m.stateRm(ctx, args[1:])
	case "mv":
		return m.stateMv(ctx, args[1:])
	case "pull":
		return m.statePull(ctx, args[1:])
	case "push":
		return m.statePush(ctx, args[1:])
	case "repair":
		return m.stateRepair(ctx, args[1:])
	case "prune":
		return m.statePrune(ctx, args[1:])
	case "-h", "--help", "-help", "help":
		writeHelp(m.Stdout, "state", m.FlagSet("state"))
		return ExitOK
	}
	return m.usageError("state", fmt.Errorf("unknown subcommand %s%s", quoteArg(args[0]), didYouMean(args[0], subcommandNames("state"), "")))
}
