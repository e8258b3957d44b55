package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"pushform/termtext"
)

// forceUnlockOptions are the inputs of force-unlock.
type forceUnlockOptions struct {
	*Meta
	stateFlags
	id    string
	force bool
}

func cmdForceUnlock(ctx context.Context, m *Meta, args []string) int {
	o := &forceUnlockOptions{Meta: m}
	fs := m.FlagSet("force-unlock")
	o.stateFlags.bind(fs, false)
	fs.BoolVar(&o.force, "force", false, "do not ask for confirmation")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("force-unlock", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("force-unlock", errors.New("force-unlock takes exactly one lock ID (a refused run prints it)"))
	}
	o.id = fs.Arg(0)
	return runForceUnlock(ctx, o)
}

func runForceUnlock(ctx context.Context, o *forceUnlockOptions) int {
	m := o.Meta
	be, err := m.stateBackend(ctx, o.stateFlags)
	if err != nil {
		return m.fail(err)
	}
	defer be.Close()
	if !o.force {
		if !m.StdinTerminal {
			return m.Errorf("force-unlock asks for confirmation and there is no terminal; pass --force")
		}
		fmt.Fprint(m.Stdout, termtext.Lines(fmt.Sprintf("Remove the lock %s of %s?\n"+
			"  Only do this if the process that held it has stopped.\n"+
			"  Only 'yes' will be accepted to confirm.\n\n  Enter a value: ", o.id, be)))
		answer, _ := bufio.NewReader(m.Stdin).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return m.Errorf("force-unlock cancelled")
		}
	}
	info, err := be.ForceUnlock(o.id)
	if err != nil {
		return m.Errorf("%v", err)
	}
	// The lock info is whatever the file or row holds: shown escaped.
	fmt.Fprint(m.Stdout, termtext.Lines(fmt.Sprintf("Removed lock %s (held by %s for %s, pid %d, since %s).\n"+
		"The lock itself was already released when that process ended: a lock cannot outlive its process\n"+
		"(or, with PostgreSQL, its connection), so this only cleared the lock info it left behind.\n",
		info.ID, info.Who, info.Operation, info.Pid, info.Created.UTC().Format(time.RFC3339))))
	return ExitOK
}
