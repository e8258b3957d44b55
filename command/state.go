package command

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"pushform/backend"
	"pushform/state"
	"pushform/termtext"
	"pushform/views"
)

// stateShowLimit is how many target lines state show prints without --all.
const stateShowLimit = 50

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

// readState reads the state the flags choose, without locking: list and
// show only look. A missing state is an error naming where it was looked for.
func (m *Meta) readState(ctx context.Context, sf stateFlags, missingOK bool) (*state.State, string, error) {
	be, err := m.stateBackend(ctx, sf)
	if err != nil {
		return nil, "", err
	}
	defer be.Close()
	s, err := be.Read()
	if err != nil {
		return nil, be.String(), err
	}
	if s == nil && !missingOK {
		return nil, be.String(), fmt.Errorf("no state at %s", be)
	}
	return s, be.String(), nil
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
	s, where, err := m.readState(ctx, sf, true)
	if err != nil {
		return m.Errorf("%v", err)
	}
	if s == nil && !jf.enabled() {
		fmt.Fprintf(m.Stderr, "No state at %s.\n", where)
		return ExitOK
	}
	if err := views.NewState(jf.format(), m.view(jf.indent), 0).List(s); err != nil {
		return m.Errorf("%v", err)
	}
	return ExitOK
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
	addr := fs.Arg(0)
	s, _, err := m.readState(ctx, sf, false)
	if err != nil {
		return m.Errorf("%v", err)
	}
	msg := s.Messages[addr]
	if msg == nil {
		return m.Errorf("no address %s in the state; 'pushform state list' lists them", addr)
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
	be, err := m.stateBackend(ctx, sf)
	if err != nil {
		return m.fail(err)
	}
	sess, err := backend.Open(ctx, nil, be, backend.SessionOptions{Operation: "state rm", LockTimeout: sf.lockTimeout})
	if err != nil {
		return m.fail(err)
	}
	m.warnStaleLock(sess.StaleLock)
	code := m.stateRemove(sess, fs.Args())
	if err := sess.Close(); err != nil {
		return m.fail(err)
	}
	return code
}

func (m *Meta) stateRemove(sess *backend.Session, addrs []string) int {
	s := sess.State
	if s == nil {
		return m.Errorf("no state at %s", sess.Backend)
	}
	var missing []string
	forget := state.Entry{Type: state.EntryForget, Time: time.Now().UTC()}
	seen := map[string]bool{}
	for _, a := range addrs {
		if s.Messages[a] == nil {
			missing = append(missing, a)
		} else if !seen[a] {
			seen[a] = true
			forget.Items = append(forget.Items, state.Item{Address: a})
		}
	}
	if len(missing) > 0 {
		return m.Errorf("no address %s in the state; nothing was removed", strings.Join(missing, ", "))
	}
	if err := s.ApplyEntry(forget); err != nil {
		return m.Errorf("%v", err)
	}
	if err := sess.Persist(); err != nil {
		return m.Errorf("%v", err)
	}
	for _, it := range forget.Items {
		fmt.Fprintf(m.Stdout, "Removed %s\n", termtext.Clean(it.Address))
	}
	n := len(forget.Items)
	fmt.Fprintf(m.Stdout, "Removed %d address%s from the state (serial %d). Nothing was sent.\n", n, map[bool]string{true: "", false: "es"}[n == 1], s.Serial)
	return ExitOK
}
