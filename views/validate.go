package views

import (
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"

	"pushform/planner"
)

// Validate shows the verdict of validate. The human view only confirms a
// valid configuration: diagnostics are printed, with their source lines,
// where the configuration is loaded.
type Validate interface {
	Validate(diags hcl.Diagnostics) error
}

var (
	_ Validate = (*ValidateHuman)(nil)
	_ Validate = (*ValidateJSON)(nil)
)

// ValidateHuman confirms a valid configuration in words.
type ValidateHuman struct {
	w io.Writer
}

// NewValidateHuman returns a human validate view writing to w.
func NewValidateHuman(w io.Writer) *ValidateHuman { return &ValidateHuman{w: w} }

// Validate says the configuration is valid; with errors it writes nothing.
func (v *ValidateHuman) Validate(diags hcl.Diagnostics) error {
	if diags.HasErrors() {
		return nil
	}
	_, err := fmt.Fprintln(v.w, "The configuration is valid.")
	return err
}

// ValidateJSON writes the verdict and every diagnostic as one JSON
// document: one line, or indented.
type ValidateJSON struct {
	w      io.Writer
	indent bool
}

// NewValidateJSON returns a JSON validate view writing to w; indent
// spreads the document over indented lines (--json-indent).
func NewValidateJSON(w io.Writer, indent bool) *ValidateJSON {
	return &ValidateJSON{w: w, indent: indent}
}

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

// Validate writes the document.
func (v *ValidateJSON) Validate(diags hcl.Diagnostics) error {
	enc := newEncoder(v.w, v.indent)
	if err := enc.Encode(newValidateResult(diags)); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
