// Package planner works out which sends bring devices to the state a
// configuration describes. Plan is a pure function of the configuration, the
// recorded state, the recipients snapshot and the time: it does no I/O, and
// the Plan it returns is plain data that views render and apply executes.
package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// FormatVersion is the version of the saved plan format and of plan JSON.
const FormatVersion = "1"

// Plan is the complete, deterministic result of planning.
type Plan struct {
	FormatVersion string    `json:"format_version"`
	CreatedAt     time.Time `json:"created_at"`
	Environment   string    `json:"environment"`
	// Service is the service the plan was made for; apply refuses the plan
	// with another. Nil in a plan made by an earlier pushform.
	Service *state.Service `json:"service,omitempty"`
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
	// Renames are forgets paired with creates that look like renames:
	// apply refuses the plan unless allowed (see ResendGuard).
	Renames []Rename `json:"renames,omitempty"`
	// KindChanges are changes that send content which reached targets of
	// another kind before (see detectKindChanges): apply refuses the plan
	// unless allowed (see ResendGuard).
	KindChanges []KindChange `json:"kind_changes,omitempty"`
	// Pacing lists the send_rate groups of the plan's sends, by Group.
	Pacing []Pace `json:"pacing,omitempty"`
	// AwaitingReview lists, in a scheduled plan (Options.Scheduled), the
	// changes it leaves out because no reviewed apply accepted them: new
	// addresses, changed shapes (content, targets, settings), forgets and
	// moves.
	AwaitingReview []Review `json:"awaiting_review,omitempty"`
	// Shapes lists, in a plan that is not scheduled, the shapes applying
	// it accepts (see review.go): those of the addresses whose shape the
	// state does not record as reviewed.
	Shapes []Shape `json:"shapes,omitempty"`
}

// Review is a change a scheduled plan leaves for a reviewed apply.
type Review struct {
	Address string `json:"address"`
	Action  Action `json:"action"`
	// Why says what makes it a change to review: "new address", "content
	// changed", "changed since the reviewed apply (...)", "not reviewed:
	// ...", "forget", "moved from ADDR".
	Why string `json:"why"`
}

// Rename is a forgotten address and a created one whose targets overlap
// (see detectRenames): most likely a rename without a moved block, which
// would show a notification again on the targets of both.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Targets counts the targets To sends to that From already reached
	// (or may have: unknown outcomes count).
	Targets int `json:"targets"`
	// Same is set when the content is the same (--allow-resend or
	// repeat_after sends it again); otherwise it was edited too.
	Same bool `json:"same,omitempty"`
	// Replaces: edited under the same tag, so once a moved block records
	// the rename the edit replaces the earlier notification on devices;
	// an edit without it is sent as a second notification, shown beside
	// the earlier one.
	Replaces bool `json:"replaces,omitempty"`
}

// MovedBlock is the moved block that records r as a rename.
func (r Rename) MovedBlock() string {
	return fmt.Sprintf("moved {\n  from = %s\n  to   = %s\n}\n", r.From, r.To)
}

// Pace is one send_rate group: the sends of the changes whose Paces name
// Group together reach at most Count targets per Per.
type Pace struct {
	// Group is the block address of a paced notification or badge
	// (notification.order, all its instances) or campaign.NAME.
	Group string        `json:"group"`
	Count int           `json:"count"`
	Per   time.Duration `json:"per"`
	// Targets and Requests are what this plan sends in the group;
	// Duration is how long that takes at the rate, about.
	Targets  int           `json:"targets"`
	Requests int           `json:"requests"`
	Duration time.Duration `json:"duration"`
}

// Interval is how long n targets take at the pace's rate.
func (p Pace) Interval(n int) time.Duration {
	return time.Duration(int64(n) * int64(p.Per) / int64(p.Count))
}

// Rate is the rate as written in the configuration: "600/minute".
func (p Pace) Rate() string {
	return config.Rate{Count: p.Count, Per: p.Per}.String()
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
	// SendBefore ends the delivery window: apply starts no request or
	// retry for this change from then on.
	SendBefore *time.Time `json:"send_before,omitempty"`
	// MovedFrom is the address the state recorded this change under,
	// renamed by a moved block; apply records the move first.
	MovedFrom string `json:"moved_from,omitempty"`
	// Paces names the Plan.Pacing groups this change's sends count in.
	Paces   []string     `json:"paces,omitempty"`
	Targets TargetCounts `json:"targets"`
	// Send lists the targets apply sends to, in config order (those of a
	// personalised notification grouped by their text, see Personal).
	Send []string `json:"send,omitempty"`
	// Forget lists targets dropped from state (all of them for ActionForget).
	Forget []string `json:"forget,omitempty"`
	// Held lists unknown targets that are not re-sent: those of an
	// untagged notification, because a second copy would be visible, and
	// those sent MaxUnknownResends times without a usable answer (see
	// --retry-unknown).
	Held []string `json:"held,omitempty"`
	// AlreadyDelivered lists the targets not sent because the ledger shows
	// they received this content before (see ledger.go); AlreadyVia gives,
	// parallel, the index in Earlier of the delivery that says so.
	AlreadyDelivered []string          `json:"already_delivered,omitempty"`
	AlreadyVia       []int             `json:"already_via,omitempty"`
	Earlier          []EarlierDelivery `json:"earlier,omitempty"`
	// Local says what deliver_at_local and quiet_hours did: the waves
	// and the quiet window (see localtime.go); nil when neither applies.
	Local    *Local   `json:"local,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Rollout is where a staged rollout stands (see rollout.go); nil
	// for a message without one.
	Rollout *RolloutStatus `json:"rollout,omitempty"`
	// Variant says which variant (or holdout) of which address this is.
	Variant *VariantInfo `json:"variant,omitempty"`
	// Personal is what a personalised notification sends each target
	// (see personal.go); nil for a change that sends its Content as it
	// is, which is then its template. Locales counts the targets it sends
	// by the translation chosen (or the default locale, or "default");
	// HeldByReason counts, by reason, the targets held because their text
	// could not be filled in, and HeldIDs names a few of each.
	Personal     *Personal           `json:"personal,omitempty"`
	Locales      map[string]int      `json:"locales,omitempty"`
	HeldByReason map[string]int      `json:"held_by_reason,omitempty"`
	HeldIDs      map[string][]string `json:"held_ids,omitempty"`
	// Holdout lists the held-out targets apply records (outcome holdout),
	// those not recorded yet.
	Holdout []string `json:"holdout,omitempty"`
	// TestSendCommand is set when require_test_send holds the change
	// back: its content has no delivered test send, and this command
	// sends one (see MarkTestSends).
	TestSendCommand string `json:"test_send_command,omitempty"`
	// Accept: apply records Content as the address's content with nothing
	// sent (a notification waiting for send_after or a frequency_cap, a
	// tag-only change whose targets keep the earlier tag), so the decision
	// is made once and a scheduled apply knows the content was reviewed.
	Accept bool `json:"accept,omitempty"`

	// inState and recorded say whether the state holds the address, and
	// with this content; review why a scheduled plan holds it for review
	// ("" when the state records its shape as accepted): set while
	// planning, not saved.
	inState, recorded bool
	review            string
}

// noteState sets inState and recorded from prior, the address's state
// (nil: none).
func (c *Change) noteState(prior *state.Message) {
	c.inState, c.recorded = prior != nil, prior != nil && prior.Fingerprint == c.Fingerprint
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
	Waiting  int `json:"waiting,omitempty"` // held back by send_after, or deliver_at_local not yet due
	// Quiet targets are due but inside quiet_hours: sent when it ends.
	Quiet int `json:"quiet,omitempty"`
	// Expired targets were not delivered by send_before: never sent.
	Expired int `json:"expired,omitempty"`
	// Capped targets are held back by a frequency_cap for now.
	Capped int `json:"capped,omitempty"`
	// AlreadyDelivered targets received this content before (the ledger
	// says so): not sent. Repeat targets received it too and are sent it
	// again, as repeat_after or --allow-resend allows (they are counted in
	// New, Replace, ... as well).
	AlreadyDelivered int `json:"already_delivered,omitempty"`
	Repeat           int `json:"repeat,omitempty"`
	Forget           int `json:"forget,omitempty"`
	// Staged targets are held for a later rollout stage (or a halted
	// one); they are counted in no other field.
	Staged int `json:"staged,omitempty"`
	// Holdout counts a holdout's targets not recorded yet.
	Holdout int `json:"holdout,omitempty"`
	// Unfilled targets are held because their text could not be filled
	// in (Change.HeldByReason says why); they are counted in no other
	// field.
	Unfilled int `json:"unfilled,omitempty"`
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
	Repeat   int `json:"repeat"`
	Replace  int `json:"replace"`
	Resend   int `json:"resend"`
	Update   int `json:"update"`
	Forget   int `json:"forget"`
	Wait     int `json:"wait"`
	NoOp     int `json:"no_op"`
	Targets  int `json:"targets"`
	Requests int `json:"requests"`
	// Moved counts the addresses a moved block renames (whatever else
	// their change does); Expired and Capped the addresses whose action
	// is expired or capped, and the targets fields their targets (a
	// change of another action may hold back some targets too).
	Moved          int `json:"moved"`
	Expired        int `json:"expired"`
	ExpiredTargets int `json:"expired_targets"`
	Capped         int `json:"capped"`
	CappedTargets  int `json:"capped_targets"`
	// AlreadyDelivered counts the addresses whose action is
	// already-delivered, AlreadyDeliveredTargets the targets of every
	// change not sent because they had the content; Disabled the
	// addresses with enabled = false.
	AlreadyDelivered        int `json:"already_delivered"`
	AlreadyDeliveredTargets int `json:"already_delivered_targets"`
	Disabled                int `json:"disabled"`
	// Quiet counts the addresses whose action is quiet; WaitingTargets
	// and QuietTargets the targets of every change held back by a
	// deliver_at_local not yet due, and by quiet_hours.
	Quiet          int `json:"quiet,omitempty"`
	LocalWait      int `json:"local_wait,omitempty"` // of Wait, those waiting for deliver_at_local
	WaitingTargets int `json:"waiting_targets,omitempty"`
	QuietTargets   int `json:"quiet_targets,omitempty"`
	// Staged counts the addresses whose action is stage, StagedTargets
	// the targets every change holds for a later rollout stage, and
	// Halted the rollouts their failure gate halted (all three left out
	// of JSON when 0).
	Staged        int `json:"staged,omitempty"`
	StagedTargets int `json:"staged_targets,omitempty"`
	Halted        int `json:"halted,omitempty"`
	// HoldoutTargets counts the held-out targets apply records (left out
	// of JSON when 0).
	HoldoutTargets int `json:"holdout_targets,omitempty"`
	// Unfilled counts the addresses whose action is unfilled, and
	// UnfilledTargets the targets every change holds because their text
	// could not be filled in (both left out of JSON when 0).
	Unfilled        int `json:"unfilled,omitempty"`
	UnfilledTargets int `json:"unfilled_targets,omitempty"`
	// PacedSeconds is how long the slowest send_rate group takes, about.
	PacedSeconds float64 `json:"paced_seconds,omitempty"`
	// Reach is who the sends reach (see CountReach); nil when not
	// counted.
	Reach *Reach `json:"reach,omitempty"`
}

// HasChanges reports whether applying the plan would send or record
// anything (a shape to accept included).
// QuietFrom is when the first quiet window of a target c sends begins
// (Local.QuietFrom): its targets are sent before then, or not at all.
func (c *Change) QuietFrom() *time.Time {
	if c.Local == nil {
		return nil
	}
	return c.Local.QuietFrom
}

// DecidedUntil is when the plan's decisions of the time of day stop
// holding: the first quiet window of a target it sends begins (Local.
// QuietFrom); apply starts no request for a change after its own. Nil
// when no target it sends has quiet hours.
func (p *Plan) DecidedUntil() *time.Time {
	var until *time.Time
	for _, c := range p.Changes {
		if c.Local != nil && c.Local.QuietFrom != nil && len(c.Send) > 0 {
			until = earliest(until, *c.Local.QuietFrom)
		}
	}
	return until
}

func (p *Plan) HasChanges() bool {
	s := p.Summary
	return s.Requests > 0 || s.Forget > 0 || s.Moved > 0 || p.forgetsTargets() || p.recordsAlready() || p.recordsHoldout() || p.recordsUnfilled() || p.accepts() || len(p.Shapes) > 0
}

// recordsUnfilled reports whether apply records targets held because
// their text could not be filled in.
func (p *Plan) recordsUnfilled() bool {
	for _, c := range p.Changes {
		if c.Personal != nil && len(c.Personal.Unfilled) > 0 {
			return true
		}
	}
	return false
}

// recordsHoldout reports whether apply records held-out targets.
func (p *Plan) recordsHoldout() bool {
	for _, c := range p.Changes {
		if len(c.Holdout) > 0 {
			return true
		}
	}
	return false
}

// accepts reports whether apply records a content with nothing sent.
func (p *Plan) accepts() bool {
	for _, c := range p.Changes {
		if c.Accept {
			return true
		}
	}
	return false
}

// recordsAlready reports whether apply records already-delivered targets
// (those an earlier address of this same plan sends are not recorded).
func (p *Plan) recordsAlready() bool {
	for _, c := range p.Changes {
		for _, e := range c.Earlier {
			if !e.InPlan {
				return true
			}
		}
	}
	return false
}

// ResendGuard refuses a plan with renames (see Plan.Renames): applying it
// would show notifications again that devices already have. Apply calls it
// before sending anything, unless the user allowed it.
func (p *Plan) ResendGuard() error {
	if len(p.KindChanges) > 0 {
		return p.kindGuard()
	}
	if len(p.Renames) == 0 {
		return nil
	}
	var b strings.Builder
	for _, r := range p.Renames {
		if r.Same {
			fmt.Fprintf(&b, "%s looks like a rename of %s (same content; %d of its targets already have it). ", r.To, r.From, r.Targets)
		} else {
			fmt.Fprintf(&b, "%s looks like a rename of %s with its content changed (%d of its targets have the earlier one). ", r.To, r.From, r.Targets)
		}
	}
	b.WriteString("Applying would forget the one and send the other, so those devices would show a notification again.\n")
	b.WriteString("If it is a rename, add to the configuration:\n\n")
	for _, r := range p.Renames {
		b.WriteString(r.MovedBlock())
	}
	b.WriteString("\nand plan again; to send it again anyway, apply with --allow-resend. Nothing was sent.")
	return errors.New(b.String())
}

// kindGuard refuses a plan with kind changes (see Plan.KindChanges), and
// names its renames too.
func (p *Plan) kindGuard() error {
	var b strings.Builder
	for _, kc := range p.KindChanges {
		fmt.Fprintf(&b, "%s: %s.\n", kc.Address, kc.risk())
	}
	for _, r := range p.Renames {
		fmt.Fprintf(&b, "%s looks like a rename of %s: add a moved block (from = %s, to = %s) to keep it from being sent again.\n", r.To, r.From, r.From, r.To)
	}
	b.WriteString("To send it anyway, apply with --allow-resend. Nothing was sent.")
	return errors.New(b.String())
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

// PaceOf returns the pace group named g.
func (p *Plan) PaceOf(g string) (Pace, bool) {
	for _, pc := range p.Pacing {
		if pc.Group == g {
			return pc, true
		}
	}
	return Pace{}, false
}

// Check verifies a plan read back from a file: every batch part must point
// inside its change's Send list, so executing it cannot go out of range,
// the parts of a request share their pacing, and every rate is usable.
func (p *Plan) Check() error {
	for _, pc := range p.Pacing {
		if pc.Count < 1 || pc.Per <= 0 {
			return fmt.Errorf("send rate group %s has rate %d per %s", pc.Group, pc.Count, pc.Per)
		}
	}
	for _, c := range p.Changes {
		for _, g := range c.Paces {
			if _, ok := p.PaceOf(g); !ok {
				return fmt.Errorf("%s names send rate group %s, which the plan does not have", c.Address, g)
			}
		}
	}
	for _, c := range p.Changes {
		if pe := c.Personal; pe != nil {
			if len(pe.TextOf) != len(c.Send) {
				return fmt.Errorf("%s sends %d targets and gives texts for %d", c.Address, len(c.Send), len(pe.TextOf))
			}
			for _, i := range pe.TextOf {
				if i < 0 || int(i) >= len(pe.Texts) {
					return fmt.Errorf("%s names text %d of %d", c.Address, i, len(pe.Texts))
				}
			}
		}
		if len(c.AlreadyVia) != len(c.AlreadyDelivered) {
			return fmt.Errorf("%s lists %d already-delivered targets and %d earlier deliveries for them", c.Address, len(c.AlreadyDelivered), len(c.AlreadyVia))
		}
		for _, v := range c.AlreadyVia {
			if v < 0 || v >= len(c.Earlier) {
				return fmt.Errorf("%s names earlier delivery %d of %d", c.Address, v, len(c.Earlier))
			}
		}
	}
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
			if !slices.Equal(p.Changes[pt.Change].Paces, p.Changes[b.Parts[0].Change].Paces) {
				return fmt.Errorf("request %d packs changes of different send rates", i+1)
			}
		}
	}
	return nil
}
