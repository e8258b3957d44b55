package command

import (
	"context"
	"errors"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/views"
)

// validateOptions are the inputs of validate.
type validateOptions struct {
	*Meta
	configFlags
	jsonFlags
	policyFlags
}

// validateHelp is the help of validate; its flags come from the flag set it parses.
func validateHelp() helpDoc {
	return helpDoc{
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
	}
}

func cmdValidate(ctx context.Context, m *Meta, args []string) int {
	o := &validateOptions{Meta: m}
	fs := m.FlagSet("validate")
	o.jsonFlags.bind(fs, "the result")
	o.configFlags.bind(fs)
	o.policyFlags.bindDirs(fs)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("validate", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("validate", errors.New("validate takes no arguments; use --chdir DIR to pick the configuration directory"))
	}
	return runValidate(ctx, o)
}

// runValidate checks the configuration without contacting any server:
// recipients lists stay unknown.
func runValidate(_ context.Context, o *validateOptions) int {
	m, cf := o.Meta, o.configFlags
	l := m.newLoader()
	var diags hcl.Diagnostics
	var cfg *config.Config
	opts := m.configOptions(cf, nil)
	opts.PolicyDirs = m.policyDirs(o.policyFlags)
	if o.enabled() {
		// The diagnostics are in the document, not on stderr.
		cfg, diags = l.Load(m.ConfigDir(), opts)
	} else {
		cfg, diags = m.loadConfigWith(l, opts)
	}
	if cfg != nil && !diags.HasErrors() {
		// The people's data, which a plan reads only when it fills a
		// text in.
		d := cfg.CheckData()
		if len(d) > 0 && !o.enabled() {
			if err := l.WriteDiagnostics(m.Stderr, d, uint(m.Width), m.Color()); err != nil {
				m.Errorf("%v", err)
			}
		}
		diags = append(diags, d...)
	}
	if err := views.NewValidate(o.format(), m.view(o.indent)).Validate(diags); err != nil {
		return m.Errorf("%v", err)
	}
	if diags.HasErrors() {
		return ExitError
	}
	return ExitOK
}
