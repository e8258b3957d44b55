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
	"pushform/backend"
	"pushform/config"
	"pushform/operation"
	"pushform/secret"
	"pushform/termtext"
	"pushform/views"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Exit codes shared by every command.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitChanges = 2 // plan --detailed-exitcode: changes present
	ExitFmt     = 3 // fmt --check: files to change
	// ExitReview: apply --scheduled left changes for a reviewed apply
	// (after sending what it released).
	ExitReview = 4
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
	// Width is the terminal's width in columns (stdout's, else stderr's),
	// 0 when neither is a terminal: warnings are word-wrapped to it.
	Width int
	// Getenv looks up an environment variable.
	Getenv func(string) string
	// Environ lists the environment as KEY=VALUE pairs.
	Environ []string
	// Dir is the working directory; --chdir is resolved against it.
	Dir string
	// Backends are the state backend types a backend block may name; nil
	// means backend.Builtins(). Tests and other front ends add their own.
	Backends backend.Registry
	// Now is the real clock; nil means time.Now. Deliveries are recorded
	// at its times and apply refuses a --now before it, so a front end
	// that embeds pushform (or a test) may inject one, but nothing a user
	// sets (a flag, an environment variable) can turn it.
	Now func() time.Time
	// Sending is called once apply has evaluated the configuration and is
	// about to send: main sets the runtime's collector goals for the send
	// phase there (package gctune). nil leaves the runtime alone, as an
	// embedding front end or a test in a shared process wants.
	Sending func()
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
		Width:          terminalWidth(os.Stdout, os.Stderr),
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
	// envArgs names the PUSHFORM_CLI_ARGS variables that added arguments,
	// so a usage error can say where a flag came from.
	envArgs []string
	// secrets are the run's secrets (the API key, database passwords), for
	// everything that prints or stores text from outside; nil in tests
	// that make a Meta themselves, which then redacts nothing extra.
	secrets *secret.Set
	// probe, when set, receives a command's flag set instead of parsing:
	// help and completion learn the flags of every command this way,
	// without running it.
	probe func(*pflag.FlagSet)
}

// clock returns the real clock (see Env.Now).
func (m *Meta) clock() func() time.Time {
	if m.Now == nil {
		return time.Now
	}
	return m.Now
}

// backends returns the backend types a configuration may name.
func (m *Meta) backends() backend.Registry {
	if m.Backends == nil {
		return backend.Builtins()
	}
	return m.Backends
}

// newLoader returns a configuration loader that checks backend blocks
// against the schemas of m's backend types.
func (m *Meta) newLoader() *config.Loader {
	return operation.NewLoader(m.backends())
}

// ConfigDir is the configuration directory: --chdir resolved against the
// working directory.
func (m *Meta) ConfigDir() string {
	if m.Globals.Chdir == "" {
		return m.Dir
	}
	if filepath.IsAbs(m.Globals.Chdir) {
		return m.Globals.Chdir
	}
	return filepath.Join(m.Dir, m.Globals.Chdir)
}

// path resolves a user-given path (--state, --out, a plan file) against
// the configuration directory, as Terraform resolves every path against
// -chdir: with --chdir DIR, "x.plan" is DIR/x.plan.
func (m *Meta) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(m.ConfigDir(), p)
}

// Color reports whether output may use ANSI colour.
func (m *Meta) Color() bool {
	return !m.Globals.NoColor && m.Getenv("NO_COLOR") == "" && m.StdoutTerminal
}

// Errorf prints an error line to stderr and returns ExitError.
// Error text often quotes the service, the configuration or a lock holder:
// untrusted, so control characters are shown escaped.
func (m *Meta) Errorf(format string, args ...any) int {
	fmt.Fprintf(m.Stderr, "Error: %s\n", termtext.Lines(m.secrets.String(fmt.Sprintf(format, args...))))
	return ExitError
}

// Warnf prints a warning on stderr, word-wrapped on a terminal.
func (m *Meta) Warnf(format string, args ...any) {
	fmt.Fprintf(m.Stderr, "Warning: %s\n", views.WrapText(termtext.Lines(fmt.Sprintf(format, args...)), m.Width, len("Warning: ")))
}

// terminalWidth is the width of the first of files that is a terminal, or 0.
func terminalWidth(files ...*os.File) int {
	for _, f := range files {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// FlagSet returns a flag set for a command with the global flags bound, so
// they may follow the command name too. name is the command as typed
// ("plan", "state list"); help is found by it.
func (m *Meta) FlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	bindGlobals(fs, &m.Globals)
	return fs
}

// parse parses args with fs, after rewriting single-dash long flags
// (-out=FILE) to their double-dash form. On -h or --help it prints the
// command's help on stdout and returns pflag.ErrHelp, which usageError
// turns into exit 0; other errors name the flag.
func (m *Meta) parse(fs *pflag.FlagSet, args []string) error {
	if m.probe != nil {
		m.probe(fs)
		return errProbe
	}
	fs.Usage = func() {}
	err := fs.Parse(normaliseArgs(fs, args, true))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pflag.ErrHelp):
		writeHelp(m.Stdout, fs.Name(), fs)
		return err
	}
	return flagError(fs, err)
}

// errProbe stops a command whose flags a probe collected.
var errProbe = errors.New("flags collected")

// usageError reports a command line that cannot be run: one line naming
// the command and the problem, and where to read its usage. Help (already
// printed) exits 0.
func (m *Meta) usageError(cmd string, err error) int {
	if errors.Is(err, pflag.ErrHelp) || errors.Is(err, errProbe) {
		return ExitOK
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, cmd+" ") { // "plan takes no arguments" names it already
		msg = cmd + ": " + msg
	}
	fmt.Fprintf(m.Stderr, "Error: %s\nrun 'pushform %s -h' for usage\n", msg, cmd)
	if len(m.envArgs) > 0 {
		fmt.Fprintf(m.Stderr, "(the arguments include those of %s)\n", strings.Join(m.envArgs, " and "))
	}
	return ExitError
}

func bindGlobals(fs *pflag.FlagSet, g *Globals) {
	fs.StringVar(&g.Chdir, "chdir", g.Chdir, "switch to directory `DIR` before running the command: the configuration and every relative path are read there")
	fs.BoolVar(&g.NoColor, "no-color", g.NoColor, "disable colour in output (so does NO_COLOR)")
}

// command is one entry of the dispatch table. A command's help and its run
// (which makes its flag set) live in its own file.
type command struct {
	name    string
	summary string
	help    func() helpDoc
	run     func(ctx context.Context, m *Meta, args []string) int
	// subs are the subcommands, each dispatched by run.
	subs []subcommand
	// main commands come first in the help.
	main bool
}

// subcommand is a word after a command that selects what it does.
type subcommand struct {
	name, summary string
	help          func() helpDoc
}

// commands is the dispatch table, in the order help lists it.
func commands() []command {
	return []command{
		{name: "validate", summary: "Check the configuration files", help: validateHelp, run: cmdValidate, main: true},
		{name: "plan", summary: "Show what apply would send", help: planHelp, run: cmdPlan, main: true},
		{name: "apply", summary: "Send what the plan says and record it in state", help: applyHelp, run: cmdApply, main: true},
		{name: "show", summary: "Show a saved plan, or the state", help: showHelp, run: cmdShow, main: true},
		{name: "test", summary: "Run the test files' runs against a simulated service", help: testHelp, run: cmdTest, main: true},
		{name: "history", summary: "List what a target received, or what an address sent", help: historyHelp, run: cmdHistory},
		{name: "test-send", summary: "Send an address's content to test devices only", help: testSendHelp, run: cmdTestSend},
		{name: "render", summary: "Show what each person would receive of a notification", help: renderHelp, run: cmdRender},
		{name: "fmt", summary: "Rewrite configuration files in canonical format", help: fmtHelp, run: runFmt},
		{name: "state", summary: "Inspect or edit the state", help: stateHelp, run: runState, subs: []subcommand{
			{"list", "List the addresses in the state, with target counts", stateListHelp},
			{"show", "Show one address: content and every target's last outcome", stateShowHelp},
			{"rm", "Remove addresses from the state (nothing is sent)", stateRmHelp},
			{"mv", "Move an address in the state, as a moved block does (nothing is sent)", stateMvHelp},
			{"pull", "Print the backend's state in the local file format", statePullHelp},
			{"push", "Store a local state file in the configured backend", statePushHelp},
			{"repair", "Cut a damaged state journal after its last intact line", stateRepairHelp},
			{"prune", "Drop delivery ledger records older than a date", statePruneHelp},
		}},
		{name: "force-unlock", summary: "Remove a stale state lock", help: forceUnlockHelp, run: cmdForceUnlock},
		{name: "recipients", summary: "List the users who can receive a push right now", help: recipientsHelp, run: cmdRecipients},
		{name: "sandbox", summary: "Run the local Push Notification Service sandbox", help: sandboxHelp, run: runSandbox, subs: []subcommand{
			{"show", "Show what a sandbox device has received", sandboxShowHelp},
		}},
		{name: "version", summary: "Print the pushform version and commit", help: versionHelp, run: runVersion},
		{name: "completion", summary: "Print a shell completion script (bash, zsh, fish)", help: completionHelp, run: runCompletion},
		{name: "help", summary: "Show the help of pushform or of a command", help: helpHelp, run: runHelp},
	}
}

// lookupCommand finds a command by name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// subcommandNames lists the subcommands of the command name.
func subcommandNames(name string) []string {
	c, _ := lookupCommand(name)
	var names []string
	for _, s := range c.subs {
		names = append(names, s.name)
	}
	return names
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// globalFlagSet is the flag set of the words before the command name.
func globalFlagSet(g *Globals, showVersion *bool) *pflag.FlagSet {
	fs := pflag.NewFlagSet("pushform", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.SetInterspersed(false)
	bindGlobals(fs, g)
	fs.BoolVarP(showVersion, "version", "v", false, "print the version and exit")
	return fs
}

// Run executes the pushform command line args and returns the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	m := &Meta{Env: env, secrets: secret.NewSet()}
	var showVersion bool
	fs := globalFlagSet(&m.Globals, &showVersion)
	if err := fs.Parse(normaliseArgs(fs, args, false)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return mainHelp(ctx, m, args)
		}
		fmt.Fprintf(env.Stderr, "Error: %v\nrun 'pushform -h' for usage\n", flagError(fs, err))
		return ExitError
	}
	if showVersion {
		return runVersion(ctx, m, nil)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		writeMainHelp(env.Stderr, fs)
		return ExitError
	}
	cmd, ok := lookupCommand(rest[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "Error: unknown command %s%s\nrun 'pushform -h' for the list of commands\n",
			quoteArg(rest[0]), didYouMean(rest[0], commandNames(), ""))
		return ExitError
	}
	if cmd.name != "help" && cmd.name != "completion" {
		path := rest[:1]
		if len(rest) > 1 && slices.ContainsFunc(cmd.subs, func(s subcommand) bool { return s.name == rest[1] }) {
			path = rest[:2]
		}
		var err error
		rest, m.envArgs, err = withEnvArgs(env.Getenv, path, rest)
		if err != nil {
			fmt.Fprintf(env.Stderr, "Error: %v\n", err)
			return ExitError
		}
		if w := logLevelWarning(env.Getenv("PUSHFORM_LOG")); w != "" {
			m.Warnf("%s", w)
		}
	}
	return cmd.run(ctx, m, rest[1:])
}

// mainHelp answers -h before the command name: "pushform -h" lists the
// commands, and "pushform -help plan", as Terraform's, is plan's help.
func mainHelp(ctx context.Context, m *Meta, args []string) int {
	rest := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-h" || a == "--help" || a == "-help" })
	var showVersion bool
	fs := globalFlagSet(&Globals{}, &showVersion)
	if fs.Parse(normaliseArgs(fs, rest, false)) == nil && fs.NArg() > 0 {
		return runHelp(ctx, m, fs.Args())
	}
	writeMainHelp(m.Stdout, fs)
	return ExitOK
}

// quoteArg quotes a word from the command line for an error message, with
// any control character escaped.
func quoteArg(s string) string {
	return strconv.Quote(s)
}

// fail prints err (unless already reported) and returns ExitError.
func (m *Meta) fail(err error) int {
	if errors.Is(err, errReported) {
		return ExitError
	}
	return m.Errorf("%v", err)
}
