package command

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/pflag"

	"pushform/config"
	"pushform/operation"
)

// configFlags are the --var and --var-file flags of every command that
// loads the configuration (validate, plan, apply).
type configFlags struct {
	vars     []string
	varFiles []string
}

// bind adds --var and --var-file to fs. StringArray, not StringSlice: a
// value may contain commas.
func (c *configFlags) bind(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.vars, "var", nil, "set a variable, `NAME=VALUE` (repeatable)")
	fs.StringArrayVar(&c.varFiles, "var-file", nil, "read variable values from `FILE`, relative to the configuration directory (repeatable)")
}

// configOptions builds the loader options from the flags and the
// environment (PUSHFORM_VAR_name). recipients nil means not fetched.
func (m *Meta) configOptions(cf configFlags, recipients map[string][]string) config.Options {
	return config.Options{
		Vars:       cf.vars,
		VarFiles:   cf.varFiles,
		Environ:    m.Environ,
		Recipients: recipients,
	}
}

// loadConfig loads the configuration directory with l (see
// operation.LoadConfig) and prints every diagnostic (warnings too) to
// stderr. The Config is nil when there were errors.
func (m *Meta) loadConfig(l *config.Loader, cf configFlags, recipients map[string][]string) (*config.Config, hcl.Diagnostics) {
	return m.loadConfigWith(l, m.configOptions(cf, recipients))
}

// loadConfigWith is loadConfig with the loader options given.
func (m *Meta) loadConfigWith(l *config.Loader, opts config.Options) (*config.Config, hcl.Diagnostics) {
	cfg, diags := operation.LoadConfig(l, m.ConfigDir(), opts, m.backends(), m.Getenv, m.secrets)
	if len(diags) > 0 {
		if err := l.WriteDiagnostics(m.Stderr, diags, uint(m.Width), m.Color()); err != nil {
			m.Errorf("%v", err)
		}
	}
	return cfg, diags
}
