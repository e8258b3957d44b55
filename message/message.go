// Package message is the vocabulary shared by the configuration, the
// state, the plan and apply: what kind of message an address is, how it
// addresses its targets, and the content it shows. One type each, from the
// HCL block to the request body.
package message

// Kind tells a visible notification from a badge-only update.
type Kind string

// Message kinds, named after the HCL blocks.
const (
	KindNotification Kind = "notification"
	KindBadge        Kind = "badge"
)

// TargetKind is how a message addresses its targets (spec 2.1 rule 1).
type TargetKind string

// Target kinds, named after the HCL attributes.
const (
	TargetUsers   TargetKind = "user_ids"
	TargetDevices TargetKind = "device_ids"
	TargetTopics  TargetKind = "topics"
)

// Content is what a message shows or sets; empty strings and nil pointers
// mean "not given". The JSON names are the HCL attribute names.
type Content struct {
	Title              string `json:"title,omitempty"`
	Body               string `json:"body,omitempty"`
	OpenToURL          string `json:"open_to_url,omitempty"`
	Tag                string `json:"tag,omitempty"`
	BadgeCount         *int   `json:"badge_count,omitempty"`
	SilentInForeground bool   `json:"silent_in_foreground,omitempty"`
	// Template is set on the content of a personalised notification (one
	// whose text reads user.* or device.*, or that has translations):
	// Title, Body, OpenToURL and Tag then hold its templates, in
	// canonical form, and Template what it reads a person as and its
	// translations, so that the content is the template's identity. Each
	// person is sent the text filled in for them (Text). "" for content
	// sent as it is.
	Template string `json:"template,omitempty"`
}

// Personal reports whether c is a template, filled in per person.
func (c Content) Personal() bool { return c.Template != "" }

// Text is what one person was sent of a personalised notification: the
// text filled in for them, and the translation chosen ("" for the
// notification's own text).
type Text struct {
	Title     string `json:"title"`
	Body      string `json:"body"`
	OpenToURL string `json:"open_to_url,omitempty"`
	Tag       string `json:"tag,omitempty"`
	Locale    string `json:"locale,omitempty"`
}

// Filled returns c with t's text in place of its templates.
func (c Content) Filled(t Text) Content {
	c.Title, c.Body, c.OpenToURL, c.Tag, c.Template = t.Title, t.Body, t.OpenToURL, t.Tag, ""
	return c
}

// Idempotent reports whether sending the content twice to a device shows
// nothing twice: a tagged notification replaces the earlier one with its
// tag (spec 2.1 rule 5), and a badge sets the same count again.
func (c Content) Idempotent(k Kind) bool {
	return k == KindBadge || c.Tag != ""
}
