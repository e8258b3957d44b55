package command

import (
	"context"
	"errors"
	"path/filepath"

	"pushform/backend"
	"pushform/views"
)

// recipientsOptions are the inputs of recipients.
type recipientsOptions struct {
	*Meta
	configFlags
	stateFlags
	jsonFlags
	serviceFlags
}

// recipientsHelp is the help of recipients; its flags come from the flag set it parses.
func recipientsHelp() helpDoc {
	return helpDoc{
		usage: []string{"recipients [options]"},
		text: "Asks the service which users can receive a push right now (the list data \"recipients\" " +
			"blocks use) and prints them one per line, or as a JSON array; the count goes to stderr.",
		examples: []string{
			"pushform recipients",
			"pushform recipients -json",
		},
	}
}

func cmdRecipients(ctx context.Context, m *Meta, args []string) int {
	o := &recipientsOptions{Meta: m}
	fs := m.FlagSet("recipients")
	o.configFlags.bind(fs)
	o.stateFlags.bind(fs, false)
	o.jsonFlags.bind(fs, "the user ids")
	o.serviceFlags.bind(fs)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("recipients", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("recipients", errors.New("recipients takes no arguments"))
	}
	if err := o.serviceFlags.check(); err != nil {
		return m.usageError("recipients", err)
	}
	return runRecipients(ctx, o)
}

// runRecipients prints the users who can receive a push right now.
func runRecipients(ctx context.Context, o *recipientsOptions) int {
	m := o.Meta
	cfg, diags := m.loadConfig(m.newLoader(), o.configFlags, nil)
	if diags.HasErrors() {
		return ExitError
	}
	// The embedded sandbox keeps its devices beside a local state file.
	sopts := m.serviceOptions(o.serviceFlags)
	if cfg.Backend == nil && o.file != "" {
		sopts.DevicesDir = filepath.Dir(m.path(o.file))
	}
	svc, err := backend.Connect(cfg, sopts)
	if err != nil {
		return m.fail(err)
	}
	ids, err := svc.Recipients(ctx)
	if cerr := svc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return m.fail(err)
	}
	if err := views.NewRecipients(o.format(), m.view(o.indent)).Recipients(ids); err != nil {
		return m.fail(err)
	}
	return ExitOK
}
