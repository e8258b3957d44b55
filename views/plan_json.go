package views

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"pushform/message"
	"pushform/planner"
)

// PlanJSON shows a plan as one JSON document (the plan --json format):
// one compact line, as Terraform's show -json, or indented for people.
type PlanJSON struct {
	w      io.Writer
	indent bool
}

// NewPlanJSON returns a JSON plan view writing to w; indent spreads the
// document over indented lines (--json-indent).
func NewPlanJSON(w io.Writer, indent bool) *PlanJSON {
	return &PlanJSON{w: w, indent: indent}
}

// jsonPlan is the documented shape of plan --json.
type jsonPlan struct {
	FormatVersion string           `json:"format_version"`
	Environment   string           `json:"environment"`
	Service       *jsonService     `json:"service,omitempty"`
	CreatedAt     time.Time        `json:"created_at"`
	StateLineage  string           `json:"state_lineage,omitempty"`
	StateSerial   uint64           `json:"state_serial"`
	Changes       []jsonChange     `json:"changes"`
	Warnings      []string         `json:"warnings"`
	Summary       planner.Summary  `json:"summary"`
	HasChanges    bool             `json:"has_changes"`
	Requests      []jsonRequestRef `json:"requests"`
	// Renames, Pacing and AwaitingReview are left out when empty.
	Renames        []jsonRename     `json:"renames,omitempty"`
	Pacing         []jsonPace       `json:"pacing,omitempty"`
	AwaitingReview []planner.Review `json:"awaiting_review,omitempty"`

	// KindChanges are left out when empty too: changes apply refuses
	// without --allow-resend, whose content reached another kind of
	// target before.
	KindChanges []planner.KindChange `json:"kind_changes,omitempty"`
	// Shapes are the shapes applying the plan accepts as reviewed (left
	// out when none).
	Shapes []planner.Shape `json:"shapes,omitempty"`
}

// jsonRename is a forget and a create that look like a rename: apply
// refuses the plan unless --allow-resend; MovedBlock records it instead.
type jsonRename struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Targets    int    `json:"targets"`
	MovedBlock string `json:"moved_block"`
}

// jsonPace is one send_rate group of the plan.
type jsonPace struct {
	Group    string  `json:"group"`
	Rate     string  `json:"rate"`
	Targets  int     `json:"targets"`
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

type jsonChange struct {
	Address    string             `json:"address"`
	Action     planner.Action     `json:"action"`
	Kind       message.Kind       `json:"kind"`
	TargetKind message.TargetKind `json:"target_kind"`
	Targets    jsonTargets        `json:"targets"`
	// Locales counts, for a personalised notification, the targets it
	// sends by the translation they get (left out otherwise); Samples
	// are texts filled in for a few, when the data block asks for them.
	Locales    map[string]int   `json:"locales,omitempty"`
	Samples    []planner.Sample `json:"samples,omitempty"`
	Content    message.Content  `json:"content"`
	Prior      *message.Content `json:"prior,omitempty"`
	SendAfter  *time.Time       `json:"send_after,omitempty"`
	SendBefore *time.Time       `json:"send_before,omitempty"`
	MovedFrom  string           `json:"moved_from,omitempty"`
	Paces      []string         `json:"paces,omitempty"`
	// Earlier lists the deliveries that make targets already delivered.
	Earlier  []planner.EarlierDelivery `json:"earlier,omitempty"`
	Warnings []string                  `json:"warnings,omitempty"`
	// Local is what deliver_at_local and quiet_hours hold: waves, next
	// wave, quiet window (left out when neither applies).
	Local *planner.Local `json:"local,omitempty"`
	// Rollout is where a staged rollout stands: its stages with their
	// sizes, what was sent, the failure gate and when the next is due.
	Rollout *planner.RolloutStatus `json:"rollout,omitempty"`
	// Variant says which variant (or holdout) of which address this is.
	Variant *planner.VariantInfo `json:"variant,omitempty"`
	// Accept: apply records the content with nothing sent (see
	// planner.Change.Accept).
	Accept bool `json:"accept,omitempty"`
}

// jsonTargets are a change's target counts, and the targets held because
// their text could not be filled in, by reason (left out when none).
type jsonTargets struct {
	planner.TargetCounts
	HeldByReason map[string]int `json:"held_by_reason,omitempty"`
}

type jsonRequestRef struct {
	Targets   int      `json:"targets"`
	Addresses []string `json:"addresses"`
}

// Plan writes the plan as one JSON document.
func (v *PlanJSON) Plan(p *planner.Plan) error {
	out := jsonPlan{
		FormatVersion:  planner.FormatVersion,
		Environment:    p.Environment,
		CreatedAt:      p.CreatedAt,
		StateLineage:   p.StateLineage,
		StateSerial:    p.StateSerial,
		Changes:        make([]jsonChange, 0, len(p.Changes)),
		Service:        serviceJSON(p.Service),
		Warnings:       planWarnings(p),
		Summary:        p.Summary,
		HasChanges:     p.HasChanges(),
		Requests:       make([]jsonRequestRef, 0, len(p.Batches)),
		AwaitingReview: p.AwaitingReview,
		Shapes:         p.Shapes,
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range p.Changes {
		jc := jsonChange{Address: c.Address, Action: c.Action, Kind: c.Kind, TargetKind: c.TargetKind,
			Targets: jsonTargets{c.Targets, c.HeldByReason}, Locales: c.Locales, Content: c.Content, Prior: c.Prior, SendAfter: c.SendAfter, SendBefore: c.SendBefore,
			MovedFrom: c.MovedFrom, Paces: c.Paces, Earlier: c.Earlier, Warnings: c.Warnings, Local: c.Local, Rollout: c.Rollout, Variant: c.Variant, Accept: c.Accept}
		if c.Personal != nil {
			jc.Samples = c.Personal.Samples
		}
		out.Changes = append(out.Changes, jc)
	}
	for _, r := range p.Renames {
		out.Renames = append(out.Renames, jsonRename{From: r.From, To: r.To, Targets: r.Targets, MovedBlock: r.MovedBlock()})
	}
	out.KindChanges = p.KindChanges
	for _, pc := range p.Pacing {
		out.Pacing = append(out.Pacing, jsonPace{Group: pc.Group, Rate: pc.Rate(), Targets: pc.Targets, Requests: pc.Requests, Seconds: pc.Duration.Seconds()})
	}
	for _, bt := range p.Batches {
		r := jsonRequestRef{}
		for _, pt := range bt.Parts {
			r.Targets += pt.To - pt.From
			r.Addresses = append(r.Addresses, p.Changes[pt.Change].Address)
		}
		out.Requests = append(out.Requests, r)
	}
	return writeJSON(v.w, out, v.indent)
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
