package command

import (
	"context"
	"errors"

	"github.com/hashicorp/hcl/v2"

	"pushform/views"
)

// validateOptions are the inputs of validate.
type validateOptions struct {
	*Meta
	configFlags
	json bool
}

func cmdValidate(ctx context.Context, m *Meta, args []string) int {
	o := &validateOptions{Meta: m}
	fs := m.FlagSet("validate")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON on stdout")
	o.configFlags.bind(fs)
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
	if o.json {
		// The diagnostics are in the document, not on stderr.
		_, diags = l.Load(m.ConfigDir(), m.configOptions(cf, nil))
	} else {
		_, diags = m.loadConfig(l, cf, nil)
	}
	if err := views.NewValidate(jsonFormat(o.json), m.view(false)).Validate(diags); err != nil {
		return m.Errorf("%v", err)
	}
	if diags.HasErrors() {
		return ExitError
	}
	return ExitOK
}
