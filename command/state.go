package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"pushform/state"
	"pushform/views"
)

// stateFileName is the default state file, in the configuration directory.
const stateFileName = "pushform.state"

// stateShowLimit is how many target lines state show prints without --all.
const stateShowLimit = 50

// statePath resolves a --state flag value: empty means pushform.state in the
// configuration directory; a relative path is relative to the working
// directory, as users expect of a path they typed.
func (m *Meta) statePath(flag string) string {
	if flag == "" {
		return filepath.Join(m.ConfigDir(), stateFileName)
	}
	return m.path(flag)
}

func bindStateFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "state", "", "state `FILE` (default pushform.state in the configuration directory)")
}

const stateUsage = `Usage: pushform state SUBCOMMAND [flags] [args]

Subcommands:
  list                 List the addresses in the state, with target counts
  show ADDR            Show one address: content and every target's last outcome
  rm ADDR...           Remove addresses from the state (nothing is sent)
`

func runState(ctx context.Context, m *Meta, args []string) int {
	if len(args) == 0 {
		io.WriteString(m.Stderr, stateUsage)
		return ExitError
	}
	switch args[0] {
	case "list":
		return m.stateList(args[1:])
	case "show":
		return m.stateShow(args[1:])
	case "rm":
		return m.stateRm(ctx, args[1:])
	case "-h", "--help", "help":
		io.WriteString(m.Stdout, stateUsage)
		return ExitOK
	default:
		return m.Errorf("unknown state subcommand %q; use list, show or rm", args[0])
	}
}

// readStateFile reads the state at path; a missing state is an error naming
// the path.
func readStateFile(path string) (*state.State, error) {
	s, err := state.NewFile(path).Read()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no state at %s", path)
	}
	return s, nil
}

func (m *Meta) stateList(args []string) int {
	fs := m.FlagSet("state list")
	var file string
	bindStateFlag(fs, &file)
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return m.Errorf("state list takes no arguments")
	}
	path := m.statePath(file)
	s, err := state.NewFile(path).Read()
	if err != nil {
		return m.Errorf("%v", err)
	}
	if s == nil {
		fmt.Fprintf(m.Stderr, "No state at %s.\n", path)
		return ExitOK
	}
	if err := views.NewStateHuman(m.Stdout, 0).List(s); err != nil {
		return m.Errorf("%v", err)
	}
	return ExitOK
}

func (m *Meta) stateShow(args []string) int {
	fs := m.FlagSet("state show")
	var file string
	var asJSON, all bool
	bindStateFlag(fs, &file)
	fs.BoolVar(&asJSON, "json", false, "print the address's state as JSON")
	fs.BoolVar(&all, "all", false, fmt.Sprintf("print every target, not only the first %d", stateShowLimit))
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.Errorf("state show takes exactly one address")
	}
	addr := fs.Arg(0)
	s, err := readStateFile(m.statePath(file))
	if err != nil {
		return m.Errorf("%v", err)
	}
	msg := s.Messages[addr]
	if msg == nil {
		return m.Errorf("no address %s in the state; 'pushform state list' lists them", addr)
	}
	var v views.State = views.NewStateJSON(m.Stdout)
	if !asJSON {
		limit := stateShowLimit
		if all {
			limit = 0
		}
		v = views.NewStateHuman(m.Stdout, limit)
	}
	if err := v.Show(msg); err != nil {
		return m.Errorf("%v", err)
	}
	return ExitOK
}

func (m *Meta) stateRm(ctx context.Context, args []string) int {
	fs := m.FlagSet("state rm")
	var file string
	var lockTimeout time.Duration
	bindStateFlag(fs, &file)
	fs.DurationVar(&lockTimeout, "lock-timeout", 0, "how long to wait for the state lock (0: do not wait)")
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return m.Errorf("state rm needs at least one address")
	}
	f := state.NewFile(m.statePath(file))
	id, err := lockState(ctx, f, "state rm", lockTimeout)
	if err != nil {
		return m.Errorf("%v", err)
	}
	m.warnStaleLock(f)
	code := m.stateRemove(f, fs.Args())
	if err := f.Unlock(id); err != nil {
		return m.Errorf("%v", err)
	}
	return code
}

func (m *Meta) stateRemove(f *state.File, addrs []string) int {
	s, err := readStateFile(f.Path())
	if err != nil {
		return m.Errorf("%v", err)
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
	if err := f.Persist(s); err != nil {
		return m.Errorf("%v", err)
	}
	for _, it := range forget.Items {
		fmt.Fprintf(m.Stdout, "Removed %s\n", it.Address)
	}
	n := len(forget.Items)
	fmt.Fprintf(m.Stdout, "Removed %d address%s from the state (serial %d). Nothing was sent.\n", n, map[bool]string{true: "", false: "es"}[n == 1], s.Serial)
	return ExitOK
}

// lockState takes the state lock for an operation, waiting up to timeout
// (0: one try). A refusal says how to wait.
func lockState(ctx context.Context, l state.Locker, operation string, timeout time.Duration) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	id, err := l.Lock(ctx, state.NewLockInfo(operation))
	var le *state.LockError
	if errors.As(err, &le) && timeout == 0 {
		return "", fmt.Errorf("%w; --lock-timeout waits for it", err)
	}
	return id, err
}
