package testrun

import (
	"time"

	"pushform/executor"
	"pushform/message"
	"pushform/plandoc"
	"pushform/sandbox"
	"pushform/state"
)

// The objects a run's conditions read besides plan (plandoc.Document):
// each a Go type whose JSON names are its attributes, made a cty value by
// plandoc.ObjectValue, so every key is present, null when absent, and a
// list is empty rather than null. docs/language/tests.md documents them;
// TestObjectsDocumented keeps the page and these types together.

// Apply is the apply object: what an apply run sent and what came of it.
type Apply struct {
	// Changes says the plan had changes: requests were sent.
	Changes bool `json:"changes"`
	// Delivered, Skipped, Failed and Unknown count the targets by
	// outcome; NotStarted the targets of requests never sent.
	Delivered  int `json:"delivered"`
	Skipped    int `json:"skipped"`
	Failed     int `json:"failed"`
	Unknown    int `json:"unknown"`
	NotStarted int `json:"not_started"`
	// Requests counts the requests answered, Sent those sent (once each),
	// Retries the tries again.
	Requests int `json:"requests"`
	Sent     int `json:"sent"`
	Retries  int `json:"retries"`
	// Failures are the failed targets (the first executor.MaxListed).
	Failures []ApplyFailure `json:"failures"`
	// Errors are the requests that failed as a whole.
	Errors []string `json:"errors"`
}

// ApplyFailure is a target the service answered failed.
type ApplyFailure struct {
	Address   string  `json:"address"`
	Target    string  `json:"target"`
	Message   string  `json:"message"`
	RequestID *string `json:"request_id"`
}

// applyObject is the apply object of an executor result; res nil for a
// plan with no changes.
func applyObject(res *executor.Result) Apply {
	a := Apply{Failures: []ApplyFailure{}, Errors: []string{}}
	if res == nil {
		return a
	}
	a.Changes = true
	a.Delivered, a.Skipped, a.Failed, a.Unknown = res.Counts.Delivered, res.Counts.Skipped, res.Counts.Failed, res.Counts.Unknown
	a.NotStarted, a.Requests, a.Sent, a.Retries = res.NotStarted, res.Requests, res.Sent, res.Retries
	for _, f := range res.Failures {
		a.Failures = append(a.Failures, ApplyFailure{Address: f.Address, Target: f.Target, Message: f.Message, RequestID: optional(f.RequestID)})
	}
	for _, e := range res.Errors {
		a.Errors = append(a.Errors, e.Error())
	}
	return a
}

// Device is what device(id) returns: the device as the sandbox holds it
// after the run.
type Device struct {
	DeviceID string `json:"device_id"`
	// UserID is the user signed in on it; null for a device with none.
	UserID      *string `json:"user_id"`
	Environment string  `json:"environment"`
	PushToken   bool    `json:"push_token"`
	Permission  bool    `json:"permission"`
	Online      bool    `json:"online"`
	// Badge is the app badge; Received counts every notification shown,
	// replaced ones included.
	Badge    int64 `json:"badge"`
	Received int64 `json:"received"`
	// Inbox is what it shows, oldest first: a later notification with the
	// same tag replaced the earlier one. Pending is what an offline device
	// holds until it comes online.
	Inbox   []Notification `json:"inbox"`
	Pending []Notification `json:"pending"`
}

// Notification is one notification on a device.
type Notification struct {
	Title              *string `json:"title"`
	Body               *string `json:"body"`
	OpenToURL          *string `json:"open_to_url"`
	Tag                *string `json:"tag"`
	BadgeCount         *int64  `json:"badge_count"`
	SilentInForeground bool    `json:"silent_in_foreground"`
	RequestID          string  `json:"request_id"`
}

func deviceObject(v sandbox.DeviceView) Device {
	d := Device{DeviceID: v.DeviceID, UserID: optional(v.UserID), Environment: v.Environment,
		PushToken: v.PushToken, Permission: v.Permission, Online: v.Online, Badge: v.Badge, Received: v.Received,
		Inbox: notifications(v.Inbox), Pending: notifications(v.Pending)}
	return d
}

func notifications(es []sandbox.InboxEntry) []Notification {
	out := make([]Notification, 0, len(es))
	for _, e := range es {
		out = append(out, Notification{Title: optional(e.Title), Body: optional(e.Body), OpenToURL: optional(e.OpenToURL),
			Tag: optional(e.Tag), BadgeCount: e.BadgeCount, SilentInForeground: e.SilentInForeground, RequestID: e.RequestID})
	}
	return out
}

// Delivery is one record of history_user(id) and history_device(id):
// what pushform history --user ID lists, oldest first.
type Delivery struct {
	Time    time.Time `json:"time"`
	Address string    `json:"address"`
	// Forgotten says the address is no longer in the configuration.
	Forgotten bool   `json:"forgotten"`
	Kind      string `json:"kind"`
	// Content is what was sent; its fields null when not set (or not
	// known to the ledger).
	Content plandoc.Content `json:"content"`
	// Text is, for a notification filled in per person (Content is its
	// template), the text the target was sent; null otherwise.
	Text *plandoc.Text `json:"text"`
	// Outcome is delivered, skipped, failed or unknown; DeviceCount
	// (delivered), Reason (skipped) and Message (failed) detail it.
	Outcome     string  `json:"outcome"`
	RequestID   *string `json:"request_id"`
	DeviceCount *int    `json:"device_count"`
	Reason      *string `json:"reason"`
	Message     *string `json:"message"`
}

// history is the history object of the target of kind and id in st (nil:
// nothing recorded yet).
func history(st *state.State, kind message.TargetKind, id string) []Delivery {
	out := []Delivery{}
	if st == nil {
		return out
	}
	for _, d := range st.TargetHistory(kind, id) {
		rec := Delivery{Time: d.Time.UTC(), Address: d.Address, Forgotten: d.Forgotten, Kind: string(d.Kind),
			Content: plandoc.ContentOf(d.Content), Outcome: string(d.Outcome), RequestID: optional(d.RequestID),
			Reason: optional(d.Reason), Message: optional(d.Message)}
		if d.Text != nil {
			t := plandoc.TextOf(*d.Text)
			rec.Text = &t
		}
		if d.Outcome == state.Delivered && d.DeviceCount >= 0 {
			n := d.DeviceCount
			rec.DeviceCount = &n
		}
		out = append(out, rec)
	}
	return out
}

// Request is one request the service received during the run, in the
// order they arrived: requests.
type Request struct {
	// Endpoint is "send" or "recipients".
	Endpoint string `json:"endpoint"`
	Method   string `json:"method"`
	// Status is the HTTP status answered; RequestID its x-request-id.
	Status    int     `json:"status"`
	RequestID *string `json:"request_id"`
	// Notifications are a send's notification objects; empty for the
	// recipients list.
	Notifications []SentNotification `json:"notifications"`
	// Results are a send's result entries, in the order answered.
	Results []Result `json:"results"`
}

// SentNotification is one notification object of a send request (spec
// 2.1), its fields in snake_case; a field not sent is null.
type SentNotification struct {
	UserIDs            *[]string `json:"user_ids"`
	DeviceIDs          *[]string `json:"device_ids"`
	Topics             *[]string `json:"topics"`
	Title              *string   `json:"title"`
	Body               *string   `json:"body"`
	OpenToURL          *string   `json:"open_to_url"`
	Tag                *string   `json:"tag"`
	BadgeCount         *int64    `json:"badge_count"`
	SilentInForeground *bool     `json:"silent_in_foreground"`
}

// Result is one result entry of a send's answer (spec 2.2).
type Result struct {
	UserID   *string   `json:"user_id"`
	DeviceID *string   `json:"device_id"`
	Topics   *[]string `json:"topics"`
	// Outcome is delivered, skipped or failed.
	Outcome     string  `json:"outcome"`
	DeviceCount *int64  `json:"device_count"`
	Reason      *string `json:"reason"`
	Message     *string `json:"message"`
}

// optional is s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
