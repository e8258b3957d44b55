// Package command implements pushform's command line: global flags, dispatch
// and one file per command. Run is the whole CLI, so tests drive it in-process.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pushform/termtext"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Exit codes shared by every command.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitChanges = 2 // plan --detailed-exitcode: changes present
	ExitFmt     = 3 // fmt --check: files to change
)

// Env is everything a command may touch outside its arguments: streams,
// environment and working directory. Nothing reads os.* directly, so tests
// can run commands in-process and in parallel.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdinTerminal and StdoutTerminal say whether prompts and progress bars
	// are possible.
	StdinTerminal  bool
	StdoutTerminal bool
	// Getenv looks up an environment variable.
	Getenv func(string) string
	// Environ lists the environment as KEY=VALUE pairs.
	Environ []string
	// Dir is the working directory; --chdir is resolved against it.
	Dir string
}

// OSEnv returns the Env of the running process.
func OSEnv() Env {
	wd, _ := os.Getwd()
	return Env{
		Stdin:          os.Stdin,
		Stdout:         os.Stdout,
		Stderr:         os.Stderr,
		StdinTerminal:  isTerminal(os.Stdin),
		StdoutTerminal: isTerminal(os.Stdout),
		Getenv:         os.Getenv,
		Environ:        os.Environ(),
		Dir:            wd,
	}
}

// isTerminal asks the terminal driver: /dev/null is a character device too,
// and CI runs apply with it as stdin.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// Globals are the flags accepted before or after any command name.
type Globals struct {
	Chdir   string
	NoColor bool
}

// Meta is what a running command receives: its environment and the global
// flags, already resolved.
type Meta struct {
	Env
	Globals Globals
}

// ConfigDir is the configuration directory: --chdir resolved against the
// working directory.
func (m *Meta) ConfigDir() string {
	if m.Globals.Chdir == "" {
		return m.Dir
	}
	return m.path(m.Globals.Chdir)
}

// path resolves a user-given path against the working directory.
func (m *Meta) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(m.Dir, p)
}

// Color reports whether output may use ANSI colour.
func (m *Meta) Color() bool {
	return !m.Globals.NoColor && m.Getenv("NO_COLOR") == "" && m.StdoutTerminal
}

// Errorf prints an error line to stderr and returns ExitError.
// Error text often quotes the service, the configuration or a lock holder:
// untrusted, so control characters are shown escaped.
func (m *Meta) Errorf(format string, args ...any) int {
	fmt.Fprintf(m.Stderr, "Error: %s\n", termtext.Lines(fmt.Sprintf(format, args...)))
	return ExitError
}

// FlagSet returns a flag set for a command with the global flags bound, so
// they may follow the command name too.
func (m *Meta) FlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(m.Stdout)
	fs.Usage = func() {
		fmt.Fprintf(m.Stdout, "Usage: pushform %s [flags]\n\nFlags:\n%s", name, fs.FlagUsages())
	}
	bindGlobals(fs, &m.Globals)
	return fs
}

// parse parses args with fs. Help (-h, --help) has been printed on stdout
// when it returns pflag.ErrHelp; usageError turns that into exit 0.
func (m *Meta) parse(fs *pflag.FlagSet, args []string) error {
	return fs.Parse(args)
}

// usageError reports a command line that cannot be run: one line naming
// the command and the problem, and where to read its usage.
func (m *Meta) usageError(cmd string, err error) int {
	if errors.Is(err, pflag.ErrHelp) {
		return ExitOK
	}
	fmt.Fprintf(m.Stderr, "Error: %s: %v\nrun 'pushform %s -h' for usage\n", cmd, err, cmd)
	return ExitError
}

func bindGlobals(fs *pflag.FlagSet, g *Globals) {
	fs.StringVar(&g.Chdir, "chdir", g.Chdir, "switch to directory `DIR` before running the command")
	fs.BoolVar(&g.NoColor, "no-color", g.NoColor, "disable colour in output")
}

// command is one entry of the dispatch table.
type command struct {
	synopsis string
	run      func(ctx context.Context, m *Meta, args []string) int
}

func commands() map[string]command {
	return map[string]command{
		"version":      {"Print the pushform version", runVersion},
		"sandbox":      {"Run the local Push Notification Service sandbox", runSandbox},
		"validate":     {"Check the configuration files", cmdValidate},
		"fmt":          {"Rewrite configuration files in canonical format", runFmt},
		"plan":         {"Show what apply would send", cmdPlan},
		"apply":        {"Send what the plan says and record it in state", cmdApply},
		"show":         {"Show a saved plan, or the state", cmdShow},
		"state":        {"Inspect or edit the state (list, show, rm)", runState},
		"force-unlock": {"Remove a stale state lock", cmdForceUnlock},
		"recipients":   {"List the users who can receive a push right now", cmdRecipients},
	}
}

// Run executes the pushform command line args and returns the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	m := &Meta{Env: env}
	fs := pflag.NewFlagSet("pushform", pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.SetInterspersed(false)
	bindGlobals(fs, &m.Globals)
	var showVersion bool
	fs.BoolVarP(&showVersion, "version", "v", false, "print the version")
	fs.Usage = func() { usage(env.Stderr, fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		return ExitError
	}
	if showVersion {
		return runVersion(ctx, m, nil)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		usage(env.Stderr, fs)
		return ExitError
	}
	name := rest[0]
	if name == "help" {
		usage(env.Stdout, fs)
		return ExitOK
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "Error: unknown command %q; run 'pushform help' for the list\n", name)
		return ExitError
	}
	return cmd.run(ctx, m, rest[1:])
}

func usage(w io.Writer, fs *pflag.FlagSet) {
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Usage: pushform [global flags] COMMAND [flags] [args]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, cmds[n].synopsis)
	}
	b.WriteString("\nGlobal flags (before or after the command name):\n")
	b.WriteString(fs.FlagUsages())
	io.WriteString(w, b.String())
}

// fail prints err (unless already reported) and returns ExitError.
func (m *Meta) fail(err error) int {
	if errors.Is(err, errReported) {
		return ExitError
	}
	return m.Errorf("%v", err)
}
