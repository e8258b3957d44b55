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

// ConfigErrors is a view that writes, in its own format, the diagnostics
// of a configuration that does not load: the JSON views of plan and
// apply, so that a script reading their stdout learns why there is no
// plan. Human views have none: the diagnostics go to stderr with their
// source lines, where the configuration is loaded.
type ConfigErrors interface {
	ConfigErrors(diags hcl.Diagnostics) error
}

var (
	_ ConfigErrors = (*ValidateJSON)(nil)
	_ ConfigErrors = (*PlanJSON)(nil)
	_ ConfigErrors = (*ApplyJSON)(nil)
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

// ConfigErrors writes the validate document.
func (v *ValidateJSON) ConfigErrors(diags hcl.Diagnostics) error { return v.Validate(diags) }

// ConfigErrors writes the diagnostics as validate --json does: plan
// --json prints that document instead of a plan.
func (v *PlanJSON) ConfigErrors(diags hcl.Diagnostics) error {
	return NewValidateJSON(v.w, v.indent).Validate(diags)
}

// ConfigErrors writes one line of type "diagnostics" after the version
// line, with validate --json's fields; no summary follows.
func (v *ApplyJSON) ConfigErrors(diags hcl.Diagnostics) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.enc.Encode(struct {
		Type string `json:"type"`
		validateResult
	}{"diagnostics", newValidateResult(diags)})
	v.flushLocked()
	return err
}

// Validate writes the document.
func (v *ValidateJSON) Validate(diags hcl.Diagnostics) error {
	enc := newEncoder(v.w, v.indent)
	if err := enc.Encode(newValidateResult(diags)); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
