// Package plandoc is the plan as a documented object: the document plan
// --json prints, the plan and change objects a policy's condition reads,
// and what pushform test asserts on. Its schema is fixed and documented
// (docs/plan-json.schema.json, docs/plan-json.md): every key is present in
// every document, null when it has no value, and lists are empty rather
// than absent, so a condition never meets "Unsupported attribute" for a
// key that a particular plan happens not to use.
//
// New builds the Document from a planner.Plan; Value turns it (or one of
// its changes) into the cty value HCL expressions evaluate against.
// Nothing here prints or reads files.
package plandoc

import (
	"reflect"
	"time"

	"pushform/message"
	"pushform/planner"
)

// Document is plan --json: the plan, its changes, what apply sends and
// the results of the policies.
type Document struct {
	FormatVersion string `json:"format_version"`
	Environment   string `json:"environment"`
	// Service is the service the plan was made for; nil for a plan made
	// by an earlier pushform.
	Service   *Service  `json:"service"`
	CreatedAt time.Time `json:"created_at"`
	// StateLineage is nil when there was no state yet.
	StateLineage   *string   `json:"state_lineage"`
	StateSerial    uint64    `json:"state_serial"`
	Changes        []Change  `json:"changes"`
	Warnings       []string  `json:"warnings"`
	Summary        Summary   `json:"summary"`
	HasChanges     bool      `json:"has_changes"`
	Requests       []Request `json:"requests"`
	Renames        []Rename  `json:"renames"`
	Pacing         []Pace    `json:"pacing"`
	AwaitingReview []Review  `json:"awaiting_review"`
	// KindChanges are changes apply refuses without --allow-resend:
	// their content reached targets of another kind before.
	KindChanges []KindChange `json:"kind_changes"`
	// Shapes are the evaluated shapes applying the plan accepts as
	// reviewed (see planner.Shape).
	Shapes []Shape `json:"shapes"`
	// Policies are the results of the policies on this plan, one per
	// policy; nil (null) in the plan object a condition reads, since the
	// policies are evaluated on the plan before their results exist.
	Policies []Policy `json:"policies"`
}

// Change is the planned action on one address.
type Change struct {
	Address    string `json:"address"`
	Action     string `json:"action"`
	Kind       string `json:"kind"`
	TargetKind string `json:"target_kind"`
	// Sends says applying the change sends something now (create,
	// send-new, retry, repeat, replace, resend, update): the changes a
	// policy's for_each_change checks.
	Sends   bool         `json:"sends"`
	Targets TargetCounts `json:"targets"`
	Content Content      `json:"content"`
	// Prior is the content the state records when it differs.
	Prior      *Content   `json:"prior"`
	SendAfter  *time.Time `json:"send_after"`
	SendBefore *time.Time `json:"send_before"`
	MovedFrom  *string    `json:"moved_from"`
	Paces      []string   `json:"paces"`
	Earlier    []Earlier  `json:"earlier"`
	Warnings   []string   `json:"warnings"`
	Local      *Local     `json:"local"`
	Rollout    *Rollout   `json:"rollout"`
	Variant    *Variant   `json:"variant"`
	Accept     bool       `json:"accept"`
	// NeedsTestSend says require_test_send holds the change back: its
	// content has no delivered test send; TestSendCommand sends one (nil
	// otherwise).
	NeedsTestSend   bool    `json:"needs_test_send"`
	TestSendCommand *string `json:"test_send_command"`
	// Locales counts, for a notification filled in per person, the
	// targets it sends by the translation they get (null for one sent as
	// it is); Samples are texts filled in for a few, when the data block
	// asks for them.
	Locales map[string]int `json:"locales"`
	Samples []Sample       `json:"samples"`
}

// Sample is the text one person gets of a personalised notification,
// and the locale locales counts them under.
type Sample struct {
	Target string `json:"target"`
	Locale string `json:"locale"`
	Text   Text   `json:"text"`
}

// Text is a text filled in for a person: Locale is the translation
// chosen, null for the notification's own text.
type Text struct {
	Title     string  `json:"title"`
	Body      string  `json:"body"`
	OpenToURL *string `json:"open_to_url"`
	Tag       *string `json:"tag"`
	Locale    *string `json:"locale"`
}

// Content is what a notification or badge shows; a field it does not set
// is null.
type Content struct {
	Title              *string `json:"title"`
	Body               *string `json:"body"`
	OpenToURL          *string `json:"open_to_url"`
	Tag                *string `json:"tag"`
	BadgeCount         *int    `json:"badge_count"`
	SilentInForeground bool    `json:"silent_in_foreground"`
	// Template is set on the content of a notification filled in per
	// person: what it reads a person as, and its translations (its title,
	// body, ... are its templates); null otherwise.
	Template *string `json:"template"`
}

// TargetCounts break an address's targets down by what the plan does:
// planner.TargetCounts with every count present.
type TargetCounts struct {
	Total            int `json:"total"`
	New              int `json:"new"`
	Retry            int `json:"retry"`
	Unknown          int `json:"unknown"`
	Held             int `json:"held"`
	Reachable        int `json:"reachable"`
	Replace          int `json:"replace"`
	TagOnly          int `json:"tag_only"`
	Skipped          int `json:"skipped"`
	UpToDate         int `json:"up_to_date"`
	Waiting          int `json:"waiting"`
	Quiet            int `json:"quiet"`
	Expired          int `json:"expired"`
	Capped           int `json:"capped"`
	AlreadyDelivered int `json:"already_delivered"`
	Repeat           int `json:"repeat"`
	Forget           int `json:"forget"`
	Staged           int `json:"staged"`
	Holdout          int `json:"holdout"`
	// Unfilled targets are held because their text could not be filled
	// in; HeldByReason counts them by reason (empty when none).
	Unfilled     int            `json:"unfilled"`
	Send         int            `json:"send"`
	HeldByReason map[string]int `json:"held_by_reason"`
}

// Summary counts addresses by action, and what apply sends:
// planner.Summary with every count present.
type Summary struct {
	Create                  int            `json:"create"`
	SendNew                 int            `json:"send_new"`
	Retry                   int            `json:"retry"`
	Repeat                  int            `json:"repeat"`
	Replace                 int            `json:"replace"`
	Resend                  int            `json:"resend"`
	Update                  int            `json:"update"`
	Forget                  int            `json:"forget"`
	Wait                    int            `json:"wait"`
	NoOp                    int            `json:"no_op"`
	Targets                 int            `json:"targets"`
	Requests                int            `json:"requests"`
	Moved                   int            `json:"moved"`
	Expired                 int            `json:"expired"`
	ExpiredTargets          int            `json:"expired_targets"`
	Capped                  int            `json:"capped"`
	CappedTargets           int            `json:"capped_targets"`
	AlreadyDelivered        int            `json:"already_delivered"`
	AlreadyDeliveredTargets int            `json:"already_delivered_targets"`
	Disabled                int            `json:"disabled"`
	Quiet                   int            `json:"quiet"`
	LocalWait               int            `json:"local_wait"`
	WaitingTargets          int            `json:"waiting_targets"`
	QuietTargets            int            `json:"quiet_targets"`
	Staged                  int            `json:"staged"`
	StagedTargets           int            `json:"staged_targets"`
	Halted                  int            `json:"halted"`
	HoldoutTargets          int            `json:"holdout_targets"`
	Unfilled                int            `json:"unfilled"`
	UnfilledTargets         int            `json:"unfilled_targets"`
	PacedSeconds            float64        `json:"paced_seconds"`
	Reach                   *planner.Reach `json:"reach"`
}

// Earlier is a delivery that makes targets of a change already delivered.
type Earlier struct {
	Address   string     `json:"address"`
	RequestID *string    `json:"request_id"`
	Time      *time.Time `json:"time"`
	Outcome   *string    `json:"outcome"`
	Forgotten bool       `json:"forgotten"`
	InPlan    bool       `json:"in_plan"`
}

// Local is what deliver_at_local and quiet_hours do to a change.
type Local struct {
	DeliverAtLocal *string    `json:"deliver_at_local"`
	QuietHours     *string    `json:"quiet_hours"`
	Waves          []Wave     `json:"waves"`
	NextWave       *time.Time `json:"next_wave"`
	QuietOpens     *time.Time `json:"quiet_opens"`
	QuietFrom      *time.Time `json:"quiet_from"`
	DefaultZone    int        `json:"default_zone"`
	Zones          int        `json:"zones"`
}

// Wave is the targets of one change that fall due at one time.
type Wave struct {
	At      time.Time `json:"at"`
	Send    int       `json:"send"`
	Waiting int       `json:"waiting"`
	Quiet   int       `json:"quiet"`
	Expired int       `json:"expired"`
}

// Rollout is where a staged rollout stands.
type Rollout struct {
	State          string     `json:"state"`
	Stages         []Stage    `json:"stages"`
	Current        int        `json:"current"`
	Sends          int        `json:"sends"`
	NextDue        *time.Time `json:"next_due"`
	Wait           string     `json:"wait"`
	Failed         int        `json:"failed"`
	Attempted      int        `json:"attempted"`
	FailureRate    float64    `json:"failure_rate"`
	MaxFailureRate float64    `json:"max_failure_rate"`
	RequestIDs     []string   `json:"request_ids"`
	Salt           string     `json:"salt"`
}

// Stage is one stage of a rollout: planner.StageStatus.
type Stage struct {
	Percent string `json:"percent"`
	Size    int    `json:"size"`
	Sent    int    `json:"sent"`
	Send    int    `json:"send"`
}

// Variant says which variant (or the holdout) of which address a change
// is; Name is null for the holdout.
type Variant struct {
	Of     string  `json:"of"`
	Name   *string `json:"name"`
	Weight int     `json:"weight"`
	Share  float64 `json:"share"`
	// Kept counts the targets the ledger had assigned to it already (see
	// planner.VariantInfo).
	Kept int `json:"kept"`
}

// Request is one request apply sends.
type Request struct {
	Targets   int      `json:"targets"`
	Addresses []string `json:"addresses"`
}

// Rename is a forget and a create that look like a rename: apply refuses
// the plan unless --allow-resend; MovedBlock records it instead.
type Rename struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Targets    int    `json:"targets"`
	Same       bool   `json:"same"`
	MovedBlock string `json:"moved_block"`
}

// Pace is one send_rate group of the plan.
type Pace struct {
	Group    string  `json:"group"`
	Rate     string  `json:"rate"`
	Targets  int     `json:"targets"`
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

// Review is a change a scheduled plan leaves for a reviewed apply.
type Review struct {
	Address string `json:"address"`
	Action  string `json:"action"`
	Why     string `json:"why"`
}

// KindChange is a change whose content reached targets of another kind
// before: planner.KindChange.
type KindChange struct {
	Address        string             `json:"address"`
	TargetKind     message.TargetKind `json:"target_kind"`
	Earlier        message.TargetKind `json:"earlier_target_kind"`
	EarlierAddress string             `json:"earlier_address"`
	EarlierTargets int                `json:"earlier_targets"`
	Targets        int                `json:"targets"`
	Edited         bool               `json:"edited"`
}

// Shape is the evaluated shape of an address that applying the plan
// accepts as reviewed: planner.Shape, Prior null for none.
type Shape struct {
	Address     string  `json:"address"`
	Fingerprint string  `json:"fingerprint"`
	Prior       *string `json:"prior"`
}

// Policy is the result of one policy on a plan.
type Policy struct {
	Name string `json:"name"`
	// Enforcement is "deny" or "warn".
	Enforcement string `json:"enforcement"`
	// Result is "pass", "warn" (a warn policy failed), "deny" (a deny
	// policy failed: apply sends nothing) or "overridden" (a deny policy
	// failed and --override-policy let it through).
	Result string `json:"result"`
	// File and Line are where the policy block is.
	File string `json:"file"`
	Line int    `json:"line"`
	// ForEachChange is the block's for_each_change; Checked counts what
	// it checked: the changes that send, or 1 (the plan).
	ForEachChange bool `json:"for_each_change"`
	Checked       int  `json:"checked"`
	// Failures are the failed checks, in plan order.
	Failures []Failure `json:"failures"`
	// Override is the override that let a failed deny through; nil
	// otherwise.
	Override *Override `json:"override"`
}

// Failure is one failed check of a policy.
type Failure struct {
	// Address is the change checked; nil for a policy on the plan.
	Address *string `json:"address"`
	// Message is the policy's error_message, or why its condition could
	// not be evaluated.
	Message string `json:"message"`
}

// Override lets a named deny policy through: --override-policy NAME with
// --override-reason TEXT.
type Override struct {
	Policy string `json:"policy"`
	Reason string `json:"reason"`
}

// Result values of a Policy.
const (
	Pass       = "pass"
	Warn       = "warn"
	Deny       = "deny"
	Overridden = "overridden"
)

// New builds the document of p. Its Policies are nil: the caller sets
// them once the policies are evaluated.
func New(p *planner.Plan) *Document {
	d := &Document{
		FormatVersion:  planner.FormatVersion,
		Environment:    p.Environment,
		Service:        ServiceOf(p.Service),
		CreatedAt:      p.CreatedAt,
		StateLineage:   optional(p.StateLineage),
		StateSerial:    p.StateSerial,
		Changes:        make([]Change, 0, len(p.Changes)),
		Warnings:       Warnings(p),
		Summary:        Summary(p.Summary),
		HasChanges:     p.HasChanges(),
		Requests:       make([]Request, 0, len(p.Batches)),
		Renames:        make([]Rename, 0, len(p.Renames)),
		Pacing:         make([]Pace, 0, len(p.Pacing)),
		AwaitingReview: make([]Review, 0, len(p.AwaitingReview)),
		KindChanges:    make([]KindChange, 0, len(p.KindChanges)),
		Shapes:         make([]Shape, 0, len(p.Shapes)),
	}
	for _, c := range p.Changes {
		d.Changes = append(d.Changes, change(c))
	}
	for _, bt := range p.Batches {
		r := Request{Addresses: []string{}}
		for _, pt := range bt.Parts {
			r.Targets += pt.To - pt.From
			r.Addresses = append(r.Addresses, p.Changes[pt.Change].Address)
		}
		d.Requests = append(d.Requests, r)
	}
	for _, r := range p.Renames {
		d.Renames = append(d.Renames, Rename{From: r.From, To: r.To, Targets: r.Targets, Same: r.Same, MovedBlock: r.MovedBlock()})
	}
	for _, pc := range p.Pacing {
		d.Pacing = append(d.Pacing, Pace{Group: pc.Group, Rate: pc.Rate(), Targets: pc.Targets, Requests: pc.Requests, Seconds: pc.Duration.Seconds()})
	}
	for _, s := range p.Shapes {
		d.Shapes = append(d.Shapes, Shape{Address: s.Address, Fingerprint: s.Fingerprint, Prior: optional(s.Prior)})
	}
	for _, k := range p.KindChanges {
		d.KindChanges = append(d.KindChanges, KindChange(k))
	}
	for _, r := range p.AwaitingReview {
		d.AwaitingReview = append(d.AwaitingReview, Review{Address: r.Address, Action: string(r.Action), Why: r.Why})
	}
	return d
}

// change is the document of one planned change.
func change(c *planner.Change) Change {
	out := Change{
		Address: c.Address, Action: string(c.Action), Kind: string(c.Kind), TargetKind: string(c.TargetKind),
		Sends: planner.SendsNow(c.Action), Targets: targetCounts(c), Content: content(c.Content),
		SendAfter: c.SendAfter, SendBefore: c.SendBefore, MovedFrom: optional(c.MovedFrom),
		Paces: list(c.Paces), Earlier: make([]Earlier, 0, len(c.Earlier)), Warnings: list(c.Warnings),
		Accept: c.Accept, NeedsTestSend: c.TestSendCommand != "", TestSendCommand: optional(c.TestSendCommand),
		Locales: c.Locales, Samples: []Sample{},
	}
	if c.Personal != nil {
		for _, sm := range c.Personal.Samples {
			t := sm.Text
			out.Samples = append(out.Samples, Sample{Target: sm.Target, Locale: sm.Locale, Text: TextOf(t)})
		}
	}
	if c.Prior != nil {
		p := content(*c.Prior)
		out.Prior = &p
	}
	for _, e := range c.Earlier {
		ed := Earlier{Address: e.Address, RequestID: optional(e.RequestID), Outcome: optional(string(e.Outcome)), Forgotten: e.Forgotten, InPlan: e.InPlan}
		if !e.Time.IsZero() {
			t := e.Time
			ed.Time = &t
		}
		out.Earlier = append(out.Earlier, ed)
	}
	if l := c.Local; l != nil {
		out.Local = &Local{DeliverAtLocal: optional(l.DeliverAtLocal), QuietHours: optional(l.QuietHours), Waves: make([]Wave, 0, len(l.Waves)),
			NextWave: l.NextWave, QuietOpens: l.QuietOpens, QuietFrom: l.QuietFrom, DefaultZone: l.DefaultZone, Zones: l.Zones}
		for _, w := range l.Waves {
			out.Local.Waves = append(out.Local.Waves, Wave(w))
		}
	}
	if r := c.Rollout; r != nil {
		out.Rollout = &Rollout{State: r.State, Stages: make([]Stage, 0, len(r.Stages)), Current: r.Current, Sends: r.Sends, NextDue: r.NextDue,
			Wait: time.Duration(r.Wait).String(), Failed: r.Failed, Attempted: r.Attempted, FailureRate: r.FailureRate,
			MaxFailureRate: r.MaxFailureRate, RequestIDs: list(r.RequestIDs), Salt: r.Salt}
		for _, s := range r.Stages {
			out.Rollout.Stages = append(out.Rollout.Stages, Stage(s))
		}
	}
	if v := c.Variant; v != nil {
		out.Variant = &Variant{Of: v.Of, Name: optional(v.Name), Weight: v.Weight, Share: v.Share, Kept: v.Kept}
	}
	return out
}

// content is the document of a content: its unset fields null.
func content(c message.Content) Content {
	return Content{Title: optional(c.Title), Body: optional(c.Body), OpenToURL: optional(c.OpenToURL), Tag: optional(c.Tag),
		BadgeCount: c.BadgeCount, SilentInForeground: c.SilentInForeground, Template: optional(c.Template)}
}

// TextOf is the document of a text filled in for a person.
func TextOf(t message.Text) Text {
	return Text{Title: t.Title, Body: t.Body, OpenToURL: optional(t.OpenToURL), Tag: optional(t.Tag), Locale: optional(t.Locale)}
}

// targetCounts is c's counts, every one (a count planner.TargetCounts
// adds is copied by its name: a test fails until the document has it),
// and its held targets by reason.
func targetCounts(c *planner.Change) TargetCounts {
	tc := TargetCounts{HeldByReason: map[string]int{}}
	src, dst := reflect.ValueOf(c.Targets), reflect.ValueOf(&tc).Elem()
	for i := range src.NumField() {
		dst.FieldByName(src.Type().Field(i).Name).Set(src.Field(i))
	}
	for why, n := range c.HeldByReason {
		tc.HeldByReason[why] = n
	}
	return tc
}

// optional is s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// list is l, or an empty list for nil: a list key is never null.
func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
