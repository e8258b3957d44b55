// Package config reads a directory of pushform HCL files and turns it into a
// typed, evaluated Config. No HCL or cty types appear in Config: the planner
// works on plain Go values.
package config

import (
	"fmt"
	"pushform/message"
	"time"
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
}

// Service is the service block.
type Service struct {
	BaseURL     string // may be empty when Sandbox is set or PUSHFORM_BASE_URL is used
	APIKeyEnv   string // name of the environment variable holding the API key
	Environment string // "test" or "production"
	Sandbox     string // seed file (relative to Dir) of an embedded sandbox; "" for none
	Pos         Pos
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
	Pos         Pos
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
	// Pos is where the block starts; TargetsPos where its target attribute is.
	Pos        Pos
	TargetsPos Pos
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
