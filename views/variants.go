package views

import (
	"io"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/state"
)

// VariantAssignment is one target's part in a notification's variants:
// the variant it got (or the holdout), and what became of it.
type VariantAssignment struct {
	TargetKind message.TargetKind `json:"target_kind"`
	Target     string             `json:"target"`
	Variant    string             `json:"variant,omitempty"`
	Holdout    bool               `json:"holdout,omitempty"`
	Outcome    state.Outcome      `json:"outcome"`
	RequestID  string             `json:"request_id,omitempty"`
	Time       time.Time          `json:"time"`
}

// VariantSummary is one variant (or the holdout) of the export.
type VariantSummary struct {
	Name     string                `json:"name,omitempty"`
	Holdout  bool                  `json:"holdout,omitempty"`
	Address  string                `json:"address"`
	Title    string                `json:"title,omitempty"`
	Body     string                `json:"body,omitempty"`
	Targets  int                   `json:"targets"`
	Outcomes map[state.Outcome]int `json:"outcomes"`
}

// VariantExport is history ADDR --variants --json: which variant each
// target of ADDR got, for the brand's own analytics (the service reports
// no opens).
type VariantExport struct {
	Address     string              `json:"address"`
	Variants    []VariantSummary    `json:"variants"`
	Assignments []VariantAssignment `json:"assignments"`
}

// WriteVariantsJSON writes x as the documented JSON document.
func WriteVariantsJSON(w io.Writer, x VariantExport, indent bool) error {
	if x.Variants == nil {
		x.Variants = []VariantSummary{}
	}
	if x.Assignments == nil {
		x.Assignments = []VariantAssignment{}
	}
	return writeJSON(w, struct {
		FormatVersion string `json:"format_version"`
		VariantExport
	}{planner.FormatVersion, x}, indent)
}
