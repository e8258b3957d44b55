package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"pushform/operation"
	"pushform/termtext"
	"pushform/views"
)

// forceUnlockHelp is the help of force-unlock; its flags come from the flag set it parses.
func forceUnlockHelp() helpDoc {
	return helpDoc{
		usage: []string{"force-unlock [options] LOCK_ID"},
		text: "Removes the lock information a run that ended without unlocking left behind. A run refused " +
			"because of the lock prints its LOCK_ID. Only do this when the process that held the lock has stopped.",
		examples: []string{"pushform force-unlock 7f3c2a9e"},
	}
}

func cmdForceUnlock(ctx context.Context, m *Meta, args []string) int {
	var sf stateFlags
	var force bool
	fs := m.FlagSet("force-unlock")
	sf.bind(fs, false)
	fs.BoolVar(&force, "force", false, "do not ask for confirmation")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("force-unlock", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("force-unlock", errors.New("force-unlock takes exactly one lock ID (a refused run prints it)"))
	}
	id := fs.Arg(0)
	var confirm func(string) (bool, error)
	if !force {
		confirm = func(where string) (bool, error) { return m.confirmUnlock(id, where) }
	}
	info, err := operation.ForceUnlock(ctx, m.stateOperation("force-unlock", sf), id, confirm)
	if err != nil {
		return m.fail(err)
	}
	views.ForceUnlocked(m.Stdout, *info)
	return ExitOK
}

// confirmUnlock asks for "yes" on a terminal before the lock id of where
// is removed; without one it refuses.
func (m *Meta) confirmUnlock(id, where string) (bool, error) {
	if !m.StdinTerminal {
		return false, errors.New("force-unlock asks for confirmation and there is no terminal; pass --force")
	}
	fmt.Fprint(m.Stdout, termtext.Lines(fmt.Sprintf("Remove the lock %s of %s?\n"+
		"  Only do this if the process that held it has stopped.\n"+
		"  Only 'yes' will be accepted to confirm.\n\n  Enter a value: ", id, where)))
	answer, _ := bufio.NewReader(m.Stdin).ReadString('\n')
	if strings.TrimSpace(answer) != "yes" {
		return false, errors.New("force-unlock cancelled")
	}
	return true, nil
}
