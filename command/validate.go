package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"pushform/planner"
)

// validateResult is the --json output of validate; scripts rely on its shape.
type validateResult struct {
	FormatVersion string               `json:"format_version"`
	Valid         bool                 `json:"valid"`
	ErrorCount    int                  `json:"error_count"`
	WarningCount  int                  `json:"warning_count"`
	Diagnostics   []validateDiagnostic `json:"diagnostics"`
}

type validateDiagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Filename string `json:"filename"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

func newValidateResult(diags hcl.Diagnostics) validateResult {
	r := validateResult{FormatVersion: planner.FormatVersion, Valid: !diags.HasErrors(), Diagnostics: []validateDiagnostic{}}
	for _, d := range diags {
		vd := validateDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			vd.Severity = "warning"
			r.WarningCount++
		} else {
			r.ErrorCount++
		}
		if d.Subject != nil {
			vd.Filename = d.Subject.Filename
			vd.Line = d.Subject.Start.Line
			vd.Column = d.Subject.Start.Column
		}
		r.Diagnostics = append(r.Diagnostics, vd)
	}
	return r
}

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
	if o.json {
		_, diags := l.Load(m.ConfigDir(), m.configOptions(cf, nil))
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(newValidateResult(diags)); err != nil {
			return m.Errorf("writing JSON: %v", err)
		}
		if diags.HasErrors() {
			return ExitError
		}
		return ExitOK
	}
	if _, diags := m.loadConfig(l, cf, nil); diags.HasErrors() {
		return ExitError
	}
	fmt.Fprintln(m.Stdout, "The configuration is valid.")
	return ExitOK
}
