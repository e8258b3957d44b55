package command

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// helpDoc is the help of one command: how to call it, what it does, and
// examples. Each command's file declares its own (planHelp in plan.go);
// the flags come from the command's own flag set, so they cannot drift
// from what it parses.
type helpDoc struct {
	usage    []string // after "pushform [global options] "
	text     string   // one paragraph; blank lines separate more
	examples []string
}

// helpFor returns the help of the command or subcommand named name, as
// typed ("plan", "state list"): the help its own file declares.
func helpFor(name string) (helpDoc, bool) {
	word, sub, _ := strings.Cut(name, " ")
	c, ok := lookupCommand(word)
	switch {
	case !ok:
	case sub == "" && c.help != nil:
		return c.help(), true
	case sub != "":
		for _, s := range c.subs {
			if s.name == sub && s.help != nil {
				return s.help(), true
			}
		}
	}
	return helpDoc{}, false
}

// flagGroup says under which heading a flag of command cmd is listed in
// help.
func flagGroup(cmd, name string) string {
	if cmd == "plan" && name == "allow-resend" {
		return "Plan options" // recorded in the saved plan for apply
	}
	if (cmd == "test-send" || cmd == "render") && (name == "user" || name == "device" || name == "as-user" || name == "locale") {
		return "Targets" // whom it sends to (or shows); history's filter the same names
	}
	switch name {
	case "target", "replace", "resume", "refresh", "now", "retry-unknown", "max-unknown-resends":
		return "Plan options"
	case "auto-approve", "parallelism", "allow-resend", "scheduled":
		return "Apply options"
	case "var", "var-file":
		return "Variables"
	case "policy-dir", "override-policy", "override-reason":
		return "Policies"
	case "user", "device", "topic", "since", "until", "variants":
		return "History options"
	case "state", "lock-timeout":
		return "State options"
	case "request-timeout", "recipients-timeout", "max-attempts", "retry-delay", "retry-max-delay", "max-retry-after", "rate-limit-wait":
		return "Service and retries"
	case "out", "json", "json-indent", "markdown", "detailed-exitcode", "all", "check", "diff", "write", "junit-xml", "verbose":
		return "Output"
	case "addr", "seed", "quiet", "file":
		return "Sandbox options"
	case "latency", "fail-rate", "fail-targets", "drop-rate", "rate-limit", "empty-200", "max-length", "recipients-shape", "issues-shape", "topic-results", "fault-seed",
		"max-body-bytes", "send-fault":
		return "Fault injection"
	case "chdir", "no-color", "version":
		return "Global options"
	}
	return "Options"
}

// groupOrder is the order of the headings.
func groupOrder() []string {
	return []string{
		"Plan options", "Apply options", "Targets", "History options", "Sandbox options", "Fault injection", "Variables",
		"Policies", "State options", "Service and retries", "Options", "Output", "Global options",
	}
}

// helpWidth is the width help text is wrapped at.
const helpWidth = 80

// writeHelp prints the help of the command named name, with the flags of
// fs grouped under headings.
func writeHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	doc, ok := helpFor(name)
	if !ok {
		doc = helpDoc{usage: []string{name + " [options]"}}
	}
	var b strings.Builder
	for i, u := range doc.usage {
		if i == 0 {
			b.WriteString("Usage: pushform [global options] " + u + "\n")
		} else {
			b.WriteString("       pushform [global options] " + u + "\n")
		}
	}
	for _, para := range strings.Split(doc.text, "\n\n") {
		if para != "" {
			b.WriteString("\n" + wrap(para, "  ", helpWidth))
		}
	}
	if c, ok := lookupCommand(name); ok && len(c.subs) > 0 {
		b.WriteString("\nSubcommands:\n")
		for _, s := range c.subs {
			fmt.Fprintf(&b, "  %-10s %s\n", s.name, s.summary)
		}
	}
	writeFlagGroups(&b, fs)
	if len(doc.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range doc.examples {
			b.WriteString("  " + e + "\n")
		}
	}
	b.WriteString("\nFlags also take the single-dash form (-out=FILE is --out=FILE); relative\npaths are read from the --chdir directory. 'pushform -h' lists the commands.\n")
	io.WriteString(w, b.String())
}

// writeMainHelp prints the list of commands and the global flags.
func writeMainHelp(w io.Writer, fs *pflag.FlagSet) {
	var b strings.Builder
	b.WriteString("Usage: pushform [global options] COMMAND [options] [args]\n\n")
	b.WriteString(wrap("Declarative push-notification campaigns, Terraform-style: describe them in HCL, "+
		"'pushform plan' shows exactly which notifications and badge updates would be sent to whom, "+
		"and 'pushform apply' sends them once and records every outcome in the state.", "  ", helpWidth))
	for _, main := range []bool{true, false} {
		if main {
			b.WriteString("\nMain commands:\n")
		} else {
			b.WriteString("\nAll other commands:\n")
		}
		for _, c := range commands() {
			if c.main == main {
				fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.summary)
			}
		}
	}
	writeFlagGroups(&b, fs)
	b.WriteString("\n" + wrap("Run 'pushform COMMAND -h' or 'pushform help COMMAND' for a command's options. "+
		"Flags take the single-dash form too (-out=FILE, -auto-approve), and global options may follow the "+
		"command name. PUSHFORM_CLI_ARGS and PUSHFORM_CLI_ARGS_<command> add arguments, as TF_CLI_ARGS does.", "", helpWidth))
	io.WriteString(w, b.String())
}

// writeFlagGroups lists the flags of fs under their headings, with -h
// under "Global options".
func writeFlagGroups(b *strings.Builder, fs *pflag.FlagSet) {
	type line struct{ left, usage string }
	groups := map[string][]line{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := flagGroup(fs.Name(), f.Name)
		groups[g] = append(groups[g], line{flagLeft(f), flagUsage(f)})
	})
	help := "show this help"
	if fs.Name() == "pushform" {
		help = "show this list"
	}
	groups["Global options"] = append(groups["Global options"], line{"-h, --help", capitalise(help)})
	width := 0
	for _, ls := range groups {
		for _, l := range ls {
			width = max(width, utf8.RuneCountInString(l.left))
		}
	}
	width = min(width, 26)
	for _, g := range groupOrder() {
		ls := groups[g]
		if len(ls) == 0 {
			continue
		}
		b.WriteString("\n" + g + ":\n")
		for _, l := range ls {
			left := "  " + l.left
			indent := strings.Repeat(" ", width+4)
			if utf8.RuneCountInString(l.left) > width {
				b.WriteString(left + "\n" + wrap(l.usage, indent, helpWidth))
				continue
			}
			text := wrap(l.usage, indent, helpWidth)
			b.WriteString(left + text[utf8.RuneCountInString(left):])
		}
	}
}

// flagLeft is how a flag is written in help: "--out FILE", "--json",
// "-v, --version".
func flagLeft(f *pflag.Flag) string {
	s := "--" + f.Name
	if f.Shorthand != "" {
		s = "-" + f.Shorthand + ", " + s
	}
	if f.NoOptDefVal == "" {
		s += " " + valueName(f)
	}
	return s
}

// flagUsage is a flag's description, with its default when it has one
// worth saying.
func flagUsage(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	usage = capitalise(usage)
	switch {
	case f.Name == "chdir":
		// Bound with the value parsed before the command name as its
		// default, which is no default.
	case f.Value.Type() == "bool":
		if f.DefValue == "true" {
			usage += " (default true)"
		}
	case f.DefValue != "" && f.DefValue != "0" && f.DefValue != "[]" && f.DefValue != "0s":
		usage += " (default " + f.DefValue + ")"
	}
	return usage
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// wrap fills text into lines of at most width columns, each starting with
// indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// helpHelp is the help of help; its flags come from the flag set it parses.
func helpHelp() helpDoc {
	return helpDoc{
		usage:    []string{"help [COMMAND [SUBCOMMAND]]"},
		text:     "Prints the help of pushform, or of a command: the same as 'pushform COMMAND -h'.",
		examples: []string{"pushform help plan", "pushform help state rm"},
	}
}

// runHelp prints the help of pushform or of a command on stdout.
func runHelp(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("help")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("help", err)
	}
	words := fs.Args()
	if len(words) == 0 {
		var showVersion bool
		writeMainHelp(m.Stdout, globalFlagSet(&Globals{}, &showVersion))
		return ExitOK
	}
	name, flags, err := probeCommand(ctx, m, words)
	if err != nil {
		return m.usageError("help", err)
	}
	writeHelp(m.Stdout, name, flags)
	return ExitOK
}

// probeCommand finds the command (and subcommand) words name and returns
// its full name and flag set, without running it.
func probeCommand(ctx context.Context, m *Meta, words []string) (string, *pflag.FlagSet, error) {
	c, ok := lookupCommand(words[0])
	if !ok {
		return "", nil, fmt.Errorf("no command %s%s", quoteArg(words[0]), didYouMean(words[0], commandNames(), ""))
	}
	name, args := c.name, []string(nil)
	if len(words) > 1 {
		if subs := subcommandNames(c.name); !slices.Contains(subs, words[1]) {
			return "", nil, fmt.Errorf("%s has no subcommand %s%s", c.name, quoteArg(words[1]), didYouMean(words[1], subs, ""))
		}
		name, args = c.name+" "+words[1], words[1:2]
	}
	if len(words) > 2 {
		return "", nil, fmt.Errorf("too many words: %s", strings.Join(words, " "))
	}
	// The probe stops the command at its parse; should one ever go further,
	// it finds no configuration, no key and nothing to print to.
	var fs *pflag.FlagSet
	probe := &Meta{
		Env: Env{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
			Getenv: func(string) string { return "" }, Dir: filepath.FromSlash("/nonexistent/pushform-help-probe"),
		},
		probe: func(f *pflag.FlagSet) { fs = f },
	}
	c.run(ctx, probe, args)
	if fs == nil {
		fs = m.FlagSet(name)
	}
	return name, fs, nil
}
