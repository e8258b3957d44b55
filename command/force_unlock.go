package command

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"pushform/state"
)

// warnStaleLock reports the lock info a holder that ended without unlocking
// left behind, once this run holds the lock. The local lock is an OS lock
// that died with that holder, so the run goes on: the warning says who it
// was, and that its journal is read back.
func (m *Meta) warnStaleLock(f *state.File) {
	info, ok := f.StaleLock()
	if !ok {
		return
	}
	fmt.Fprintf(m.Stderr, "Warning: the last holder of the state lock ended without releasing it: %s (pid %d) running %s since %s, lock id %s.\n"+
		"  It was killed or crashed; its operating-system lock died with it, so this run goes on, and what it\n"+
		"  recorded in the journal is read back. (pushform force-unlock %s clears such a record without running anything.)\n",
		info.Who, info.Pid, info.Operation, info.Created.UTC().Format(time.RFC3339), info.ID, info.ID)
}

func runForceUnlock(_ context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("force-unlock")
	var file string
	var force bool
	bindStateFlag(fs, &file)
	fs.BoolVar(&force, "force", false, "do not ask for confirmation")
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.Errorf("force-unlock takes exactly one lock ID (a refused run prints it)")
	}
	id := fs.Arg(0)
	f := state.NewFile(m.statePath(file))
	if !force {
		if !m.StdinTerminal {
			return m.Errorf("force-unlock asks for confirmation and there is no terminal; pass --force")
		}
		fmt.Fprintf(m.Stdout, "Remove the lock %s of %s?\n"+
			"  Only do this if the process that held it has stopped.\n"+
			"  Only 'yes' will be accepted to confirm.\n\n  Enter a value: ", id, f.Path())
		answer, _ := bufio.NewReader(m.Stdin).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return m.Errorf("force-unlock cancelled")
		}
	}
	info, err := f.ForceUnlock(id)
	if err != nil {
		return m.Errorf("%v", err)
	}
	fmt.Fprintf(m.Stdout, "Removed lock %s (held by %s for %s, pid %d, since %s).\n"+
		"The operating-system lock was already released when that process exited: a local lock\n"+
		"cannot outlive its process, so this only cleared the lock info it left behind.\n",
		info.ID, info.Who, info.Operation, info.Pid, info.Created.UTC().Format(time.RFC3339))
	return ExitOK
}
