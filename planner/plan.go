// Package planner works out which sends bring devices to the state a
// configuration describes. Plan is a pure function of the configuration, the
// recorded state, the recipients snapshot and the time: it does no I/O, and
// the Plan it returns is plain data that views render and apply executes.
package planner

import (
	"fmt"
	"time"

	"pushform/message"
	"pushform/state"
)

// FormatVersion is the version of the saved plan format and of plan JSON.
const FormatVersion = "1"

// Action is what a plan does to one address.
type Action string

// Actions, as in DESIGN.md "Desired state and the plan".
const (
	ActionCreate  Action = "create"   // address not in state: send to every target
	ActionSendNew Action = "send-new" // same content, targets added: send to the new ones only
	ActionRetry   Action = "retry"    // failed, unknown, or reachable-again targets
	ActionReplace Action = "replace"  // content changed, same tag before and after: devices replace the earlier one
	ActionResend  Action = "resend"   // content changed, no tag or another tag: the earlier one stays
	ActionUpdate  Action = "update"   // badge count changed: the badge converges
	ActionForget  Action = "forget"   // gone from config: state only, nothing is sent
	ActionWait    Action = "wait"     // send_after is still in the future
	ActionNoOp    Action = "no-op"
)

// Plan is the complete, deterministic result of planning.
type Plan struct {
	FormatVersion string    `json:"format_version"`
	CreatedAt     time.Time `json:"created_at"`
	Environment   string    `json:"environment"`
	// The state the plan was made from; apply refuses the plan when the
	// state has moved on since.
	StateLineage string `json:"state_lineage,omitempty"`
	StateSerial  uint64 `json:"state_serial"`
	// Recipients is the snapshot planned with (nil when the configuration
	// uses none); Refreshed says whether it was fetched for this plan.
	Recipients *state.Snapshot `json:"recipients,omitempty"`
	Refreshed  bool            `json:"refreshed"`
	// Changes has one entry per address, sorted by address; no-op ones too,
	// so views can say what is up to date.
	Changes []*Change `json:"changes"`
	// Batches are the exact requests apply sends, in order.
	Batches  []Batch  `json:"batches"`
	Warnings []string `json:"warnings,omitempty"`
	Summary  Summary  `json:"summary"`
}

// Change is the planned action on one address.
type Change struct {
	Address    string             `json:"address"`
	Action     Action             `json:"action"`
	Kind       message.Kind       `json:"kind"`
	TargetKind message.TargetKind `json:"target_kind"`
	// Fingerprint and Content are what will be sent; Prior is the content
	// recorded in state when it differs.
	Fingerprint string           `json:"fingerprint"`
	Content     message.Content  `json:"content"`
	Prior       *message.Content `json:"prior,omitempty"`
	SendAfter   *time.Time       `json:"send_after,omitempty"`
	Targets     TargetCounts     `json:"targets"`
	// Send lists the targets apply sends to, in config order.
	Send []string `json:"send,omitempty"`
	// Forget lists targets dropped from state (all of them for ActionForget).
	Forget []string `json:"forget,omitempty"`
	// Held lists unknown targets that are not re-sent: those of an
	// untagged notification, because a second copy would be visible, and
	// those sent MaxUnknownResends times without a usable answer (see
	// --retry-unknown).
	Held     []string `json:"held,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// TargetCounts break an address's targets down by what the plan does.
type TargetCounts struct {
	Total     int `json:"total"`               // targets in the configuration
	New       int `json:"new,omitempty"`       // never sent
	Retry     int `json:"retry,omitempty"`     // last outcome failed
	Unknown   int `json:"unknown,omitempty"`   // last outcome unknown, re-sent
	Held      int `json:"held,omitempty"`      // last outcome unknown, not re-sent
	Reachable int `json:"reachable,omitempty"` // skipped before, a recipient again
	Replace   int `json:"replace,omitempty"`   // reached with older content, sent again
	// TagOnly targets hold this notification under another tag (or none)
	// with the same text: not sent, see Change.Warnings.
	TagOnly  int `json:"tag_only,omitempty"`
	Skipped  int `json:"skipped,omitempty"` // skipped no_active_device, not retried
	UpToDate int `json:"up_to_date,omitempty"`
	Waiting  int `json:"waiting,omitempty"` // held back by send_after
	Forget   int `json:"forget,omitempty"`
	Send     int `json:"send"` // targets apply sends to
}

// Batch is one send request: parts of one or more changes.
type Batch struct {
	Parts []Part `json:"parts"`
}

// Part is a slice of one change's Send list within a batch.
type Part struct {
	Change int `json:"change"` // index into Plan.Changes
	From   int `json:"from"`   // Send[From:To]
	To     int `json:"to"`
}

// Summary counts addresses by action, and what apply sends.
type Summary struct {
	Create   int `json:"create"`
	SendNew  int `json:"send_new"`
	Retry    int `json:"retry"`
	Replace  int `json:"replace"`
	Resend   int `json:"resend"`
	Update   int `json:"update"`
	Forget   int `json:"forget"`
	Wait     int `json:"wait"`
	NoOp     int `json:"no_op"`
	Targets  int `json:"targets"`
	Requests int `json:"requests"`
}

// HasChanges reports whether applying the plan would send or record
// anything.
func (p *Plan) HasChanges() bool {
	s := p.Summary
	return s.Requests > 0 || s.Forget > 0 || p.forgetsTargets()
}

func (p *Plan) forgetsTargets() bool {
	for _, c := range p.Changes {
		if len(c.Forget) > 0 {
			return true
		}
	}
	return false
}

// Targets returns the targets of batch b's part pt.
func (p *Plan) Targets(pt Part) []string {
	return p.Changes[pt.Change].Send[pt.From:pt.To]
}

// Check verifies a plan read back from a file: every batch part must point
// inside its change's Send list, so executing it cannot go out of range.
func (p *Plan) Check() error {
	for i, b := range p.Batches {
		if len(b.Parts) == 0 {
			return fmt.Errorf("request %d is empty", i+1)
		}
		for _, pt := range b.Parts {
			if pt.Change < 0 || pt.Change >= len(p.Changes) {
				return fmt.Errorf("request %d names change %d of %d", i+1, pt.Change, len(p.Changes))
			}
			if c := p.Changes[pt.Change]; pt.From < 0 || pt.From >= pt.To || pt.To > len(c.Send) {
				return fmt.Errorf("request %d names targets %d..%d of %s, which has %d", i+1, pt.From, pt.To, c.Address, len(c.Send))
			}
		}
	}
	return nil
}
