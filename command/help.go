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
// examples. The flags come from the command's own flag set, so they cannot
// drift from what it parses.
type helpDoc struct {
	usage    []string // after "pushform [global options] "
	text     string   // one paragraph; blank lines separate more
	examples []string
}

// helpDocs holds the help of every command and subcommand, by name as
// typed ("plan", "state list").
func helpDocs() map[string]helpDoc {
	return map[string]helpDoc{
		"validate": {
			usage: []string{"validate [options]"},
			text: "Loads every *.hcl file of the configuration directory and checks it as the service would: " +
				"syntax, blocks and attributes, references, variables, and every rule of a notification " +
				"(exactly one of user_ids, device_ids and topics; title and body together; ...). " +
				"Nothing is contacted: recipients lists stay unknown. Exits 1 with every diagnostic, " +
				"each with its file, line and source snippet.",
			examples: []string{
				"pushform validate",
				"pushform -chdir=campaigns/spring validate -json",
			},
		},
		"plan": {
			usage: []string{"plan [options]"},
			text: "Compares the configuration with the state and the recipients list, and prints what apply " +
				"would send: per address, the targets to create, send to, retry, replace or forget, with word " +
				"diffs of changed texts. Nothing is sent and the state is not changed. Save the plan with " +
				"--out to review it and then apply exactly it.",
			examples: []string{
				"pushform plan -out=spring.plan",
				"pushform plan -var-file=env/test.pfvars -state=env/test.state",
				"pushform plan -detailed-exitcode -json > plan.json",
			},
		},
		"apply": {
			usage: []string{"apply [options] [PLANFILE]"},
			text: "Sends what a plan says through the service, in requests of at most 500 targets, and records " +
				"every request id and every target's outcome in the state, so the next apply sends nothing twice. " +
				"Without PLANFILE it plans first, prints the plan and asks for 'yes' (--auto-approve skips the " +
				"question; without a terminal it is required). With PLANFILE it sends exactly that saved plan " +
				"without asking, and refuses it if the state changed since it was made. A plan that forgets an address " +
				"and sends the same content to the same targets under another (a rename without a moved block) is " +
				"refused before anything is sent, unless --allow-resend. With --scheduled (a cron job) it sends, " +
				"without asking, only what a reviewed apply accepted: sends held back by send_after, send_rate, " +
				"a frequency_cap or a window, retries, and new recipients of content the state records; new " +
				"addresses, changed content, forgets and moves are listed and left for review, with exit code 4.",
			examples: []string{
				"pushform apply -auto-approve",
				"pushform apply spring.plan",
				"pushform apply --scheduled",
			},
		},
		"show": {
			usage: []string{"show [options] [PLANFILE]"},
			text: "With a saved plan file, prints that plan: as plan would, as JSON, or as markdown for a " +
				"pull-request comment. Without one, lists the addresses in the state with their targets' outcomes.",
			examples: []string{
				"pushform show spring.plan -markdown > plan.md",
				"pushform show",
			},
		},
		"history": {
			usage: []string{"history [options] --user ID", "history [options] --device ID", "history [options] --topic NAME", "history [options] ADDR"},
			text: "Answers \"what did this user receive, and why?\" from the state's delivery ledger, which keeps every " +
				"delivery record, forgotten addresses' included, until 'pushform state prune' drops it. With --user, " +
				"--device or --topic it lists what that target was sent, oldest first: time, address (and whether it " +
				"was forgotten), kind, title, tag, outcome and request id. With an address it lists what the address " +
				"sent, one line per apply (requests of one content, with the delivered, failed, skipped and unknown " +
				"counts and request ids), and when it was forgotten. --since and --until take an RFC 3339 time or a " +
				"date (a whole UTC day). It reads the state without locking it; an id the ledger has never seen is " +
				"said so, with exit 0.",
			examples: []string{
				"pushform history --user alice",
				"pushform history --device alice-phone --since 2026-11-01 --json",
				"pushform history campaign.spring_sale.notification.announce",
			},
		},
		"test-send": {
			usage: []string{"test-send [options] ADDR --device ID...", "test-send [options] ADDR --user ID..."},
			text: "Sends the content of one notification or badge to the given devices or users only, after the same " +
				"validation as apply, and prints each target's outcome and the request id. Without --device or --user " +
				"it sends to test_devices (the campaign's, else the service block's). A notification filled in per person " +
				"(user.* in its text, or translations) sends, with --as-user ID, the text that user would get (their " +
				"variant, locale and attributes), and with --locale LOCALE that translation (filled in from --as-user's " +
				"attributes when it reads a person; refused without one). It is recorded in the state's " +
				"ledger and in history as a test send, not a delivery: apply still sends the address to those targets. " +
				"Exit 1 when a target was not delivered.",
			examples: []string{
				"pushform test-send notification.spring --device my-phone",
				"pushform test-send campaign.spring_sale.notification.announce",
				"pushform test-send campaign.shipping.notification.shipped --device my-phone --as-user chloe --locale de",
			},
		},
		"render": renderHelp(),
		"fmt": {
			usage: []string{"fmt [options] [PATH...]"},
			text: "Rewrites configuration files in the canonical format: indentation, spacing and aligned " +
				"equals signs. PATH is a file, a directory (its *.hcl files) or - for standard input; the " +
				"default is the configuration directory. A file that does not parse is refused with its " +
				"diagnostics and left untouched. --check exits 3 when a file would change.",
			examples: []string{
				"pushform fmt",
				"pushform fmt -check -diff",
			},
		},
		"state": {
			usage: []string{"state list [options]", "state show [options] ADDR", "state rm [options] ADDR...", "state mv [options] FROM TO", "state pull [options]", "state push [options] FILE", "state repair [options]", "state prune [options] --before TIME"},
			text: "Inspects or edits the state: the record of what was sent to whom. Nothing is sent. " +
				"Run 'pushform state SUBCOMMAND -h' for the options of each.",
			examples: []string{
				"pushform state list",
				"pushform state show 'notification.order_shipped[\"A-1001\"]'",
			},
		},
		"state list": {
			usage: []string{"state list [options]"},
			text:  "Lists the addresses in the state, each with how many of its targets were delivered, skipped, failed or are unknown.",
			examples: []string{
				"pushform state list",
				"pushform state list -state=env/test.state",
			},
		},
		"state show": {
			usage: []string{"state show [options] ADDR"},
			text: "Shows one address of the state: its kind, content and fingerprint, then every target " +
				"with its last outcome, request id and time (the first 50 unless --all).",
			examples: []string{
				"pushform state show campaign.welcome.notification.hello",
				"pushform state show badge.reset -json",
			},
		},
		"state rm": {
			usage: []string{"state rm [options] ADDR..."},
			text: "Removes addresses from the state, under the state lock. Nothing is sent and nothing can be " +
				"recalled from devices. The ledger keeps their deliveries, marked forgotten: an address removed " +
				"from the state but still in the configuration is planned again, and its targets that received " +
				"its content are already delivered, not sent it again (apply --replace ADDR sends it again).",
			examples: []string{"pushform state rm notification.beta_invite"},
		},
		"state mv": {
			usage: []string{"state mv [options] FROM TO"},
			text: "Moves the state recorded under FROM to TO, under the state lock, as a moved block in the " +
				"configuration would: the next plan sees TO as already sent, so renaming a block sends nothing again. " +
				"Without instance keys, every instance of a for_each block moves with its key. Nothing is sent. " +
				"Refuses a FROM not in the state, a TO that already has state, and a move between a notification and a badge.",
			examples: []string{
				"pushform state mv notification.welcome campaign.onboarding.notification.welcome",
				"pushform state mv 'notification.order[\"A-1\"]' 'notification.shipping[\"A-1\"]'",
			},
		},
		"state pull": {
			usage: []string{"state pull [options]"},
			text: "Prints the backend's current state in the local file format (the bytes a pushform.state holds), " +
				"for a backup or to inspect a PostgreSQL state with local tools. Redirect it to a file.",
			examples: []string{"pushform state pull > backup.state"},
		},
		"state push": {
			usage: []string{"state push [options] FILE"},
			text: "Stores a local state file in the configured backend, under the state lock: how a team moves an " +
				"existing file state to PostgreSQL. Refused when the backend already holds a state of another " +
				"lineage, a newer serial, or the same serial with other content, unless --force. The backend keeps " +
				"its lineage and stores the pushed state as its next serial, so plans saved before are refused as stale.",
			examples: []string{"pushform state push pushform.state", "pushform state push old.state -force"},
		},
		"state repair": {
			usage: []string{"state repair [options]"},
			text: "Repairs a local state journal that a command refused as damaged: a complete line whose checksum " +
				"does not match or that does not decode, or a torn last line. Under the state lock, it writes every line " +
				"from the first damaged one on to a file beside the journal (pushform.state.journal.rejected, mode 0600) " +
				"and cuts the journal after the last intact line. It first counts what those lines record: when they record " +
				"delivered targets or targets sent without an answer, or cannot be read, it refuses, says how many, and " +
				"cuts only with --force (without those records the next plan sends those targets again). A local state file " +
				"with data appended after its end marker (its state whole before it, its checksum matching) is cut there, " +
				"the appended bytes written to pushform.state.rejected. It then prints " +
				"how the state reads. A PostgreSQL state has no journal file: there is nothing to repair.",
			examples: []string{"pushform state repair", "pushform state repair -force -state=env/test.state"},
		},
		"state prune": {
			usage: []string{"state prune [options] --before TIME"},
			text: "Drops the delivery ledger's records older than TIME (RFC 3339, or a date: the start of that day, UTC), " +
				"under the state lock. The ledger is kept forever unless pruned: it is what keeps a forgotten address, a " +
				"rename or a stale branch from sending a target content it already received, so a dropped record can no " +
				"longer stop a resend. The addresses' view (each current address's targets and last outcomes) is kept " +
				"whole. Refused, with the count, when it would drop records that a repeat_after or frequency_cap of the " +
				"configuration still needs (those younger than the longest of them), unless --force. Prints how many " +
				"records were dropped.",
			examples: []string{"pushform state prune --before 2026-01-01", "pushform state prune --before 2026-06-01T00:00:00Z --force"},
		},
		"force-unlock": {
			usage: []string{"force-unlock [options] LOCK_ID"},
			text: "Removes the lock information a run that ended without unlocking left behind. A run refused " +
				"because of the lock prints its LOCK_ID. Only do this when the process that held the lock has stopped.",
			examples: []string{"pushform force-unlock 7f3c2a9e"},
		},
		"recipients": {
			usage: []string{"recipients [options]"},
			text: "Asks the service which users can receive a push right now (the list data \"recipients\" " +
				"blocks use) and prints them one per line, or as a JSON array; the count goes to stderr.",
			examples: []string{
				"pushform recipients",
				"pushform recipients -json",
			},
		},
		"sandbox": {
			usage: []string{"sandbox --seed FILE [options]", "sandbox show [options] DEVICE_ID"},
			text: "Serves a local Push Notification Service under http://ADDR/v1, seeded with API keys, users, " +
				"devices and topics from an HCL file, and prints \"listening on http://ADDR/v1\" once it accepts " +
				"connections. It runs until interrupted. Inspection endpoints (no key): /_sandbox/devices[/ID], " +
				"/_sandbox/log/REQUEST_ID, /_sandbox/stats. Point a configuration at it with PUSHFORM_BASE_URL.\n\n" +
				"A configuration whose service block says sandbox = \"FILE\" runs the same sandbox in-process " +
				"instead; 'pushform sandbox show' prints what one of its devices received.",
			examples: []string{
				"pushform sandbox -seed=examples/quickstart/sandbox.hcl -addr=127.0.0.1:8787",
				"pushform sandbox -seed=sandbox.hcl -fail-rate=0.2 -latency=50ms",
			},
		},
		"sandbox show": {
			usage: []string{"sandbox show [options] DEVICE_ID"},
			text: "Prints what a sandbox device has shown: badge, received count and inbox. It reads the file " +
				"the embedded sandbox saves next to the state (pushform.sandbox.json in the configuration " +
				"directory, or --file when --state puts the state elsewhere) or, with --addr, asks a running " +
				"'pushform sandbox'.",
			examples: []string{
				"pushform -chdir=examples/quickstart sandbox show alice-phone",
				"pushform sandbox show kiosk-1 -addr=127.0.0.1:8787 -json",
			},
		},
		"version": {
			usage:    []string{"version [options]"},
			text:     "Prints the pushform version and the commit it was built from, as Go recorded them in the binary, and the Go version and platform.",
			examples: []string{"pushform version", "pushform version -json"},
		},
		"completion": {
			usage: []string{"completion bash|zsh|fish"},
			text: "Prints a script that completes pushform's commands, subcommands and flags in the shell. " +
				"Load it from the shell's start-up file.",
			examples: []string{
				"source <(pushform completion bash)            # ~/.bashrc",
				"source <(pushform completion zsh)             # ~/.zshrc, after compinit",
				"pushform completion fish > ~/.config/fish/completions/pushform.fish",
			},
		},
		"help": {
			usage:    []string{"help [COMMAND [SUBCOMMAND]]"},
			text:     "Prints the help of pushform, or of a command: the same as 'pushform COMMAND -h'.",
			examples: []string{"pushform help plan", "pushform help state rm"},
		},
	}
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
	case "user", "device", "topic", "since", "until", "variants":
		return "History options"
	case "state", "lock-timeout":
		return "State options"
	case "request-timeout", "recipients-timeout", "max-attempts", "retry-delay", "retry-max-delay", "max-retry-after", "rate-limit-wait":
		return "Service and retries"
	case "out", "json", "json-indent", "markdown", "detailed-exitcode", "all", "check", "diff", "write":
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
		"State options", "Service and retries", "Options", "Output", "Global options",
	}
}

// helpWidth is the width help text is wrapped at.
const helpWidth = 80

// writeHelp prints the help of the command named name, with the flags of
// fs grouped under headings.
func writeHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	doc, ok := helpDocs()[name]
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
