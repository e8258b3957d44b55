package views

import (
	"encoding/json"
	"fmt"
	"io"

	"pushform/plandoc"
	"pushform/planner"
)

// PlanJSON shows a plan as one JSON document (the plan --json format):
// one compact line, as Terraform's show -json, or indented for people.
type PlanJSON struct {
	w        io.Writer
	indent   bool
	policies []plandoc.Policy
}

// NewPlanJSON returns a JSON plan view writing to w; indent spreads the
// document over indented lines (--json-indent).
func NewPlanJSON(w io.Writer, indent bool) *PlanJSON {
	return &PlanJSON{w: w, indent: indent}
}

// WithPolicies sets the results of the plan's policies, which the
// document lists under policies (null without them).
func (v *PlanJSON) WithPolicies(results []plandoc.Policy) *PlanJSON {
	v.policies = results
	return v
}

// Plan writes the plan as one JSON document: plandoc's, whose schema is
// docs/plan-json.schema.json.
func (v *PlanJSON) Plan(p *planner.Plan) error {
	d := plandoc.New(p)
	d.Policies = v.policies
	return writeJSON(v.w, d, v.indent)
}

// writeJSON writes x as one JSON document and a newline: compact, or
// indented by two spaces. HTML characters are not escaped: the output is
// for terminals, files and jq, not for pages.
func writeJSON(w io.Writer, x any, indent bool) error {
	enc := newEncoder(w, indent)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// newEncoder returns a JSON encoder writing to w, one line per document or
// indented (--json-indent).
func newEncoder(w io.Writer, indent bool) *json.Encoder {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc
}
