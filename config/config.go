// Package config reads a directory of pushform HCL files and turns it into a
// typed, evaluated Config. No HCL or cty types appear in Config but the
// backend block's body, which the backend of its type decodes, and the
// policies' expressions, which package policy evaluates once there is a
// plan: the planner works on plain Go values.
package config

import (
	"fmt"
	"pushform/message"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Config is one evaluated configuration directory.
type Config struct {
	// Dir is the configuration directory, absolute.
	Dir string
	// Service says where and how to reach the Push Notification Service.
	Service Service
	// Topics are the declared topics, by block label.
	Topics map[string]Topic
	// Campaigns are the campaign blocks, by name.
	Campaigns map[string]Campaign
	// DataSources names the data "recipients" blocks, sorted. The command
	// fetches the recipients list when any message refers to one.
	DataSources []string
	// Messages are the notification and badge blocks after for_each
	// expansion, sorted by Address.
	Messages []*Message
	// Backend is where the state is kept; nil means the local file backend
	// (the default).
	Backend *Backend
	// Moved are the moved blocks, in source order (files by name). They are
	// checked: no conflicts, no cycles, every chain ends at an address of
	// the configuration. MovedTo follows them.
	Moved []Moved
	// FrequencyCap is the top-level frequency_cap; nil when there is none.
	FrequencyCap *FrequencyCap
	// TimeZones and QuietHours are the top-level time_zones and
	// quiet_hours blocks; nil when there are none (see localtime.go).
	TimeZones  *TimeZones
	QuietHours *QuietHours
	// UserData, DeviceData and Locales are the top-level user_data,
	// device_data and locales blocks; nil when there are none (see
	// persondata.go).
	UserData, DeviceData *PersonData
	Locales              *Locales
	// Policies are the policy blocks, the configuration's (files by name)
	// then those of the policy directories, in order.
	Policies []*Policy
}

// Backend is the backend block, kept unevaluated: its type (the block
// label) and body, which the backend of that type decodes with its own
// schema (see BackendTypes).
type Backend struct {
	// Type is the block label, such as "pg".
	Type string
	// Body is the block's body, not yet decoded.
	Body hcl.Body
	// TypeRange is where the label is; DeclRange the block header.
	TypeRange, DeclRange hcl.Range
	Pos                  Pos
}

// Moved is a moved block: the state recorded under From now belongs to To.
// Both are canonical message addresses (notification.welcome,
// campaign.onboarding.notification.welcome, notification.order["A-1"]).
// When neither has an instance key, the move is of the whole block: every
// instance moves with its key (notification.a["k"] to notification.b["k"]).
type Moved struct {
	From, To string
	Pos      Pos
}

// FrequencyCap holds a user back once Max notifications reached them within
// Per (badge updates do not count and are never held).
type FrequencyCap struct {
	Max int
	Per time.Duration
	Pos Pos
}

// Rate is a send rate: at most Count targets per Per.
type Rate struct {
	Count int
	Per   time.Duration
}

// Service is the service block.
type Service struct {
	BaseURL     string // may be empty when Sandbox is set or PUSHFORM_BASE_URL is used
	APIKeyEnv   string // name of the environment variable holding the API key
	Environment string // "test" or "production"
	Sandbox     string // seed file (relative to Dir) of an embedded sandbox; "" for none
	// TestDevices are the device ids pushform test-send sends to when given
	// none (a campaign's own test_devices come first).
	TestDevices []string
	// MaxPlanAge is max_plan_age: apply refuses a saved plan made longer
	// ago (DefaultMaxPlanAge when not set). RequireTestSend is
	// require_test_send (see guardrails.go).
	MaxPlanAge      time.Duration
	RequireTestSend bool
	Pos             Pos
	// APIKeyEnvPos is where api_key_env is set; zero when it is not (the
	// default, DefaultAPIKeyEnv).
	APIKeyEnvPos Pos
}

// Topic is a declared topic.
type Topic struct {
	Name        string
	Description string
	Pos         Pos
}

// Campaign is a campaign block; its messages are in Config.Messages.
type Campaign struct {
	Name        string
	Description string
	// SendRate paces the sends of all the campaign's messages together; nil
	// for no pacing.
	SendRate *Rate
	// MaxTargets caps the targets the campaign's messages reach together,
	// counted per message (a user reached by two notifications counts
	// twice); 0 means no cap.
	MaxTargets int
	// FrequencyCap is the campaign's own frequency_cap, applied to its
	// notifications on top of Config.FrequencyCap; nil when there is none.
	FrequencyCap *FrequencyCap
	// Disabled is enabled = false, and RepeatAfter is repeat_after: both
	// are inherited by the campaign's messages that do not set their own
	// (the Message fields already hold the result).
	Disabled    bool
	RepeatAfter time.Duration
	// TimeZones, QuietHours and DeliverAtLocal are the campaign's own,
	// inherited by its messages (the Message fields hold the result).
	TimeZones      *TimeZones
	QuietHours     *QuietHours
	DeliverAtLocal *LocalTime
	// TestDevices are the campaign's test_devices: the default targets of
	// a test send of its messages, before the service block's.
	TestDevices []string
	// RequireTestSend is the campaign's require_test_send.
	RequireTestSend bool
	// Rollout is the campaign's rollout block, the default of its
	// messages (each rolled out on its own buckets); nil when none.
	Rollout *Rollout
	// UserData, DeviceData and Locales are the campaign's own, which win
	// over the top level's for its messages.
	UserData, DeviceData *PersonData
	Locales              *Locales
	Pos                  Pos
	// SendRatePos and MaxTargetsPos are where those attributes are, for
	// diagnostics at plan time.
	SendRatePos, MaxTargetsPos Pos
}

// Kind, TargetKind and Content are the shared vocabulary of package message.
type (
	Kind       = message.Kind
	TargetKind = message.TargetKind
	Content    = message.Content
)

// Message kinds and target kinds.
const (
	KindNotification = message.KindNotification
	KindBadge        = message.KindBadge
	TargetUsers      = message.TargetUsers
	TargetDevices    = message.TargetDevices
	TargetTopics     = message.TargetTopics
)

// Message is one notification or badge block instance.
type Message struct {
	// Address is the unique address, e.g. notification.order_shipped["A-1001"]
	// or campaign.spring_sale.notification.announce.
	Address  string
	Kind     Kind
	Campaign string // enclosing campaign name, "" at top level
	Name     string // block label
	Key      string // for_each key, "" without for_each
	Targets  Targets
	Content  Content
	// SendAfter, when set, holds the message back until that time.
	SendAfter *time.Time
	// SendBefore, when set, ends the delivery window: from then on targets
	// not yet reached are not sent, retried or replaced. After SendAfter.
	SendBefore *time.Time
	// SendRate paces this message's sends; nil for no pacing of its own.
	SendRate *Rate
	// MaxTargets caps the targets of the block, all its for_each instances
	// together (every instance carries the block's value); 0 means no cap.
	MaxTargets int
	// SharedTag says the tag is shared on purpose with another address
	// reaching the same targets: the later send replaces the earlier one
	// (spec 2.1 rules 5 and 7).
	SharedTag bool
	// Disabled is enabled = false (the block's own, else its campaign's):
	// the message is paused. It sends nothing and keeps its records; the
	// plan lists it as disabled, not forgotten. The zero value is enabled.
	Disabled bool
	// RepeatAfter is repeat_after (the block's own, else its campaign's):
	// the same content may reach a target again once that long has passed
	// since its last delivery. 0 means never again.
	RepeatAfter time.Duration
	// DeliverAtLocal makes each target due at that wall-clock time in its
	// own zone (TimeZones); nil sends at once. QuietHours holds targets
	// whose local time is inside it, unless IgnoreQuietHours. TimeZones
	// and QuietHours are the campaign's, else the top level's; badges
	// have neither DeliverAtLocal nor quiet hours applied.
	DeliverAtLocal   *LocalTime
	IgnoreQuietHours bool
	TimeZones        *TimeZones
	QuietHours       *QuietHours
	// Rollout releases the message in stages (the block's own rollout,
	// else its campaign's); nil sends every target at once.
	Rollout *Rollout
	// Variants are the variant blocks: each target gets exactly one (or
	// the holdout), by bucket. Empty for a message of one content.
	Variants []Variant
	// Template fills in a personalised notification's text for each
	// person (template.go); Content then holds the template in canonical
	// form, its identity. Nil for a message sent as it is. A notification
	// with variants has templates per variant (Variant.Template).
	Template *Template
	// Holdout is the share of the audience that receives nothing (0..1),
	// recorded so the brand can compare.
	Holdout float64
	// Salt is what the message's targets are hashed with to assign them
	// to stages (package bucket): salt = "..." when set, else Address, so
	// a rename keeps its assignments only with the old address as salt.
	Salt string
	// Shape is the fingerprint of the message's whole evaluated shape
	// (see shape.go): what a reviewed apply accepts, and what apply
	// --scheduled compares with it. "" when the configuration has errors.
	Shape string
	// Pos is where the block starts; TargetsPos where its target attribute
	// is; MaxTargetsPos where max_targets is.
	Pos           Pos
	TargetsPos    Pos
	MaxTargetsPos Pos
}

// Targets are the ids a message goes to.
type Targets struct {
	Kind TargetKind
	// IDs are the target ids, in config order, without duplicates. Nil while
	// Unknown.
	IDs []string
	// Recipients names the data source when the attribute is exactly
	// data.recipients.NAME.user_ids, so a large list needs no conversion.
	Recipients string
	// Unknown is true when the ids depend on a recipients list that was not
	// supplied (validate, or plan before fetching).
	Unknown bool
}

// Pos is a source position for messages that point back at the config.
type Pos struct {
	Filename string
	Line     int
	Column   int
}

// String formats the position as file:line.
func (p Pos) String() string {
	if p.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", p.Filename, p.Line)
}
