package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// History shows what the state's delivery ledger holds: what one target
// received (history --user ID) and what one address sent (history ADDR).
type History interface {
	// Target shows one target's deliveries, oldest first.
	Target(h TargetHistory) error
	// Address shows one address's applies and its forgetting.
	Address(h AddressHistory) error
}

var (
	_ History = (*HistoryHuman)(nil)
	_ History = (*HistoryJSON)(nil)
)

// Window is the time range history was asked for: --since (inclusive) and
// --until (exclusive); a zero end is open.
type Window struct {
	Since, Until time.Time
}

// Contains reports whether t lies in the window.
func (w Window) Contains(t time.Time) bool {
	return (w.Since.IsZero() || !t.Before(w.Since)) && (w.Until.IsZero() || t.Before(w.Until))
}

// open reports whether the window is the whole ledger.
func (w Window) open() bool { return w.Since.IsZero() && w.Until.IsZero() }

// TargetHistory is one target's history: its deliveries in the window,
// oldest first.
type TargetHistory struct {
	TargetKind message.TargetKind
	ID         string
	Window     Window
	// Known is false when the ledger holds no record of the target at all,
	// in or out of the window.
	Known      bool
	Deliveries []Delivery
}

// Delivery is one ledger record: content that was sent to a target.
type Delivery struct {
	Time    time.Time
	Address string
	// ForgottenAt is when the address was forgotten (removed from the
	// configuration's view); zero while it is current. Its records stay.
	ForgottenAt time.Time
	Kind        message.Kind
	Fingerprint string
	Content     message.Content
	// Text is, for a personalised notification (Content is its template),
	// the text the target was sent; nil when there is none.
	Text      *message.Text
	Outcome   state.Outcome
	RequestID string
	// DeviceCount (delivered: -1 when the service did not say), Reason
	// (skipped; already-delivered: the address that delivered it) and
	// Message (failed) detail the outcome.
	DeviceCount int
	Reason      string
	Message     string
	// Unreadable: the optional fields of the service's answer that could
	// not be read, as served.
	Unreadable string
}

// AddressHistory is one address's history: its applies and forgettings
// in the window, oldest first.
type AddressHistory struct {
	Address string
	Window  Window
	// Known is false when the ledger holds no record of the address.
	Known bool
	// ForgottenAt is when the address was forgotten, zero while it is in
	// the configuration's view (whatever the window).
	ForgottenAt time.Time
	Applies     []ApplyRecord
	// Forgets are the forgettings in the window: of the address, or of some
	// of its targets (an address forgotten and added again has both).
	Forgets []ForgetRecord
	// Overrides are the deny policies applies overrode to send under the
	// address, in the window.
	Overrides []state.Override
}

// ForgetRecord is one forgetting under an address: when, and how many
// targets' records it moved out of the configuration's view.
type ForgetRecord struct {
	Time    time.Time
	Targets int
}

// ApplyRecord is what one apply sent under an address: the requests of one
// content, with each target's outcome counted.
type ApplyRecord struct {
	// Start and End are the times of its first and last record.
	Start, End  time.Time
	Kind        message.Kind
	Fingerprint string
	Content     message.Content
	RequestIDs  []string
	Outcomes    map[state.Outcome]int
}

// HistoryHuman shows history as aligned text.
type HistoryHuman struct {
	w io.Writer
}

// NewHistoryHuman returns a human history view writing to w.
func NewHistoryHuman(w io.Writer) *HistoryHuman { return &HistoryHuman{w: w} }

// windowText says which part of the ledger was read: "" for all of it.
func windowText(w Window) string {
	switch {
	case w.open():
		return ""
	case w.Until.IsZero():
		return " since " + stateTime(w.Since)
	case w.Since.IsZero():
		return " before " + stateTime(w.Until)
	}
	return " from " + stateTime(w.Since) + " to " + stateTime(w.Until)
}

// Target writes a headline, one line per delivery, and when each
// forgotten address was forgotten.
func (v *HistoryHuman) Target(h TargetHistory) error {
	who := noun1(targetNoun(h.TargetKind)) + " " + termtext.Quote(h.ID)
	if !h.Known {
		_, err := fmt.Fprintf(v.w, "The ledger has no record of %s: nothing was ever sent to it from this state.\n", who)
		return err
	}
	if len(h.Deliveries) == 0 {
		_, err := fmt.Fprintf(v.w, "No record of %s%s.\n", who, windowText(h.Window))
		return err
	}
	var addrs []string
	forgotten := map[string]time.Time{}
	for _, d := range h.Deliveries {
		at, seen := forgotten[d.Address]
		if !seen {
			addrs = append(addrs, d.Address)
		}
		if d.ForgottenAt.After(at) {
			at = d.ForgottenAt
		}
		forgotten[d.Address] = at
	}
	fmt.Fprintf(v.w, "%s: %s under %s%s, oldest first\n\n", capitalise(who),
		plural(len(h.Deliveries), "record", "records"), plural(len(addrs), "address", "addresses"), windowText(h.Window))
	tw := tabwriter.NewWriter(v.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tADDRESS\tKIND\tTITLE\tTAG\tOUTCOME\tREQUEST ID")
	for _, d := range h.Deliveries {
		addr := termtext.Clean(d.Address)
		if !d.ForgottenAt.IsZero() {
			addr += " (forgotten)"
		}
		shown := d.Content
		title := ""
		if d.Text != nil {
			// What this target was sent, not the template it was made of.
			shown = shown.Filled(*d.Text)
			if d.Text.Locale != "" {
				title = " (" + termtext.Clean(d.Text.Locale) + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", stateTime(d.Time), addr, termtext.Clean(string(d.Kind)),
			contentTitle(d.Kind, shown)+title, orDash(shown.Tag, termtext.Quote), outcomeText(d)+unreadableNote(d.Unreadable),
			orDash(d.RequestID, termtext.Clean))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for _, a := range addrs {
		if at := forgotten[a]; !at.IsZero() {
			notes = append(notes, fmt.Sprintf("%s was forgotten at %s; its records stay in the ledger.", termtext.Clean(a), stateTime(at)))
		}
	}
	if len(notes) > 0 {
		_, err := fmt.Fprintf(v.w, "\n%s\n", strings.Join(notes, "\n"))
		return err
	}
	return nil
}

// unreadableNote shows the optional fields of an answer that could not be
// read, as served; "" when there are none.
func unreadableNote(u string) string {
	if u == "" {
		return ""
	}
	return ", unreadable: " + termtext.Quote(u)
}

// outcomeText is a delivery's outcome with why, when there is a why:
// skipped (no_active_device), failed ("APNs: BadDeviceToken"), already
// delivered (under notification.a).
func outcomeText(d Delivery) string {
	switch {
	case d.Outcome == state.AlreadyDelivered && d.Reason != "":
		return "already delivered (under " + termtext.Clean(d.Reason) + ")"
	case d.Outcome == state.Skipped && d.Reason != "":
		return "skipped (" + termtext.Clean(d.Reason) + ")"
	case d.Outcome == state.Failed && d.Message != "":
		return "failed (" + termtext.Quote(d.Message) + ")"
	case d.Outcome == state.Unfilled:
		return "held (text not filled in: " + termtext.Clean(d.Reason) + ")"
	case d.Outcome == state.Holdout:
		s := "held out (receives nothing"
		if d.Reason != "" {
			s += ": holdout of " + termtext.Clean(d.Reason)
		}
		return s + ")"
	case d.Outcome == state.TestSend:
		// Not a delivery: the service's answer to the test is the reason.
		s := "test send"
		if d.Reason != "" {
			s += ", " + termtext.Clean(d.Reason)
		}
		if d.Message != "" {
			s += " (" + termtext.Quote(d.Message) + ")"
		}
		return s
	}
	return termtext.Clean(string(d.Outcome))
}

// historyRequestIDs is how many request ids an apply line shows.
const historyRequestIDs = 3

// Address writes a headline, then one line per apply and per forgetting,
// in time order.
func (v *HistoryHuman) Address(h AddressHistory) error {
	addr := termtext.Clean(h.Address)
	if !h.Known {
		_, err := fmt.Fprintf(v.w, "The ledger has no record of %s: nothing was ever sent under it from this state.\n", addr)
		return err
	}
	if len(h.Applies) == 0 && len(h.Forgets) == 0 && len(h.Overrides) == 0 {
		_, err := fmt.Fprintf(v.w, "No record of %s%s.\n", addr, windowText(h.Window))
		return err
	}
	status := "current"
	if !h.ForgottenAt.IsZero() {
		status = "forgotten at " + stateTime(h.ForgottenAt) + "; its records stay in the ledger"
	}
	fmt.Fprintf(v.w, "%s: %s%s (%s)\n\n", addr, plural(len(h.Applies), "apply", "applies"), windowText(h.Window), status)
	// Already-delivered targets (not sent: the ledger showed they had it)
	// get a column only where there are some.
	already := false
	for _, a := range h.Applies {
		already = already || a.Outcomes[state.AlreadyDelivered] > 0
	}
	tw := tabwriter.NewWriter(v.w, 0, 4, 2, ' ', 0)
	if already {
		fmt.Fprintln(tw, "TIME\tTITLE\tDELIVERED\tFAILED\tSKIPPED\tUNKNOWN\tALREADY DELIVERED\tREQUEST IDS")
	} else {
		fmt.Fprintln(tw, "TIME\tTITLE\tDELIVERED\tFAILED\tSKIPPED\tUNKNOWN\tREQUEST IDS")
	}
	forgets := h.Forgets
	forgetLines := func(upTo time.Time) {
		for len(forgets) > 0 && (upTo.IsZero() || forgets[0].Time.Before(upTo)) {
			// The last cell of a line is no column's: the long text
			// leaves the widths alone.
			fmt.Fprintf(tw, "%s\tforgotten: %s out of the configuration's view, nothing recalled\n",
				stateTime(forgets[0].Time), plural(forgets[0].Targets, "target", "targets"))
			forgets = forgets[1:]
		}
	}
	for _, a := range h.Applies {
		forgetLines(a.Start)
		counts := []string{Count(a.Outcomes[state.Delivered]), Count(a.Outcomes[state.Failed]), Count(a.Outcomes[state.Skipped]),
			Count(a.Outcomes[state.Unknown])}
		if already {
			counts = append(counts, Count(a.Outcomes[state.AlreadyDelivered]))
		}
		title := contentTitle(a.Kind, a.Content)
		if n := a.Outcomes[state.TestSend]; n > 0 {
			title += fmt.Sprintf(" (test send to %s, not counted)", plural(n, "target", "targets"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", stateTime(a.Start), title,
			strings.Join(counts, "\t"), requestIDs(a.RequestIDs))
	}
	forgetLines(time.Time{})
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(h.Overrides) > 0 {
		fmt.Fprintf(v.w, "\nDeny policies overridden to send under it:\n")
		for _, o := range h.Overrides {
			fmt.Fprintf(v.w, "  %s  %s: %s\n", stateTime(o.Time), termtext.Clean(o.Policy), termtext.Clean(strconv.Quote(o.Reason)))
		}
	}
	return nil
}

// requestIDs lists the first few request ids and how many more there are.
func requestIDs(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	shown := make([]string, 0, historyRequestIDs)
	for _, id := range ids[:min(len(ids), historyRequestIDs)] {
		shown = append(shown, termtext.Clean(id))
	}
	s := strings.Join(shown, ", ")
	if n := len(ids) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %s more", Count(n))
	}
	return s
}

// contentTitle is what a history line shows of the content: the quoted
// title of a notification, the count of a badge.
func contentTitle(k message.Kind, c message.Content) string {
	switch {
	case c.Title != "":
		return termtext.Quote(c.Title)
	case c.BadgeCount != nil:
		return fmt.Sprintf("badge %d", *c.BadgeCount)
	case k == message.KindBadge:
		return "badge"
	}
	return "-"
}

func orDash(s string, f func(string) string) string {
	if s == "" {
		return "-"
	}
	return f(s)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// HistoryJSON shows history as one JSON document.
type HistoryJSON struct {
	w      io.Writer
	indent bool
}

// NewHistoryJSON returns a JSON history view writing to w; indent spreads
// the document over indented lines.
func NewHistoryJSON(w io.Writer, indent bool) *HistoryJSON {
	return &HistoryJSON{w: w, indent: indent}
}

// jsonWindow is the window of a history document; absent ends are open.
type jsonWindow struct {
	Since *time.Time `json:"since,omitempty"`
	Until *time.Time `json:"until,omitempty"`
}

func windowJSON(w Window) jsonWindow {
	var out jsonWindow
	if !w.Since.IsZero() {
		t := w.Since.UTC()
		out.Since = &t
	}
	if !w.Until.IsZero() {
		t := w.Until.UTC()
		out.Until = &t
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

type jsonDelivery struct {
	Time        time.Time       `json:"time"`
	Address     string          `json:"address"`
	Forgotten   bool            `json:"forgotten"`
	ForgottenAt *time.Time      `json:"forgotten_at,omitempty"`
	Kind        message.Kind    `json:"kind"`
	Fingerprint string          `json:"fingerprint"`
	Content     message.Content `json:"content"`
	Text        *message.Text   `json:"text,omitempty"`
	Outcome     state.Outcome   `json:"outcome"`
	RequestID   string          `json:"request_id,omitempty"`
	DeviceCount int             `json:"device_count,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Message     string          `json:"message,omitempty"`
	Unreadable  string          `json:"unreadable,omitempty"`
}

// Target writes {"format_version","target_kind","target","known",
// "window","deliveries":[...]}, deliveries oldest first.
func (v *HistoryJSON) Target(h TargetHistory) error {
	out := struct {
		FormatVersion string             `json:"format_version"`
		TargetKind    message.TargetKind `json:"target_kind"`
		Target        string             `json:"target"`
		Known         bool               `json:"known"`
		Window        jsonWindow         `json:"window"`
		Deliveries    []jsonDelivery     `json:"deliveries"`
	}{FormatVersion: planner.FormatVersion, TargetKind: h.TargetKind, Target: h.ID, Known: h.Known,
		Window: windowJSON(h.Window), Deliveries: make([]jsonDelivery, 0, len(h.Deliveries))}
	for _, d := range h.Deliveries {
		out.Deliveries = append(out.Deliveries, jsonDelivery{Time: d.Time.UTC(), Address: d.Address,
			Forgotten: !d.ForgottenAt.IsZero(), ForgottenAt: timePtr(d.ForgottenAt), Kind: d.Kind,
			Fingerprint: d.Fingerprint, Content: d.Content, Text: d.Text, Outcome: d.Outcome, RequestID: d.RequestID,
			DeviceCount: d.DeviceCount, Reason: d.Reason, Message: d.Message, Unreadable: d.Unreadable})
	}
	return writeJSON(v.w, out, v.indent)
}

type jsonApply struct {
	Start       time.Time             `json:"start"`
	End         time.Time             `json:"end"`
	Kind        message.Kind          `json:"kind"`
	Fingerprint string                `json:"fingerprint"`
	Content     message.Content       `json:"content"`
	Outcomes    map[state.Outcome]int `json:"outcomes"`
	RequestIDs  []string              `json:"request_ids"`
}

type jsonForget struct {
	Time    time.Time `json:"time"`
	Targets int       `json:"targets"`
}

// Address writes {"format_version","address","known","forgotten",
// "forgotten_at","window","applies":[...],"forgets":[...]}, each oldest
// first.
func (v *HistoryJSON) Address(h AddressHistory) error {
	out := struct {
		FormatVersion string       `json:"format_version"`
		Address       string       `json:"address"`
		Known         bool         `json:"known"`
		Forgotten     bool         `json:"forgotten"`
		ForgottenAt   *time.Time   `json:"forgotten_at,omitempty"`
		Window        jsonWindow   `json:"window"`
		Applies       []jsonApply  `json:"applies"`
		Forgets       []jsonForget `json:"forgets"`
		// Overrides are the deny policies applies overrode to send under
		// the address: time, policy, reason.
		Overrides []jsonOverride `json:"overrides"`
	}{FormatVersion: planner.FormatVersion, Address: h.Address, Known: h.Known, Forgotten: !h.ForgottenAt.IsZero(),
		ForgottenAt: timePtr(h.ForgottenAt), Window: windowJSON(h.Window), Applies: make([]jsonApply, 0, len(h.Applies)),
		Forgets: make([]jsonForget, 0, len(h.Forgets)), Overrides: make([]jsonOverride, 0, len(h.Overrides))}
	for _, o := range h.Overrides {
		out.Overrides = append(out.Overrides, jsonOverride{Time: o.Time.UTC(), Policy: o.Policy, Reason: o.Reason})
	}
	for _, f := range h.Forgets {
		out.Forgets = append(out.Forgets, jsonForget{Time: f.Time.UTC(), Targets: f.Targets})
	}
	for _, a := range h.Applies {
		outcomes := map[state.Outcome]int{}
		for _, o := range stateOutcomes {
			outcomes[o] = a.Outcomes[o]
		}
		for o, n := range a.Outcomes {
			outcomes[o] = n
		}
		ids := a.RequestIDs
		if ids == nil {
			ids = []string{}
		}
		out.Applies = append(out.Applies, jsonApply{Start: a.Start.UTC(), End: a.End.UTC(), Kind: a.Kind,
			Fingerprint: a.Fingerprint, Content: a.Content, Outcomes: outcomes, RequestIDs: ids})
	}
	return writeJSON(v.w, out, v.indent)
}

// jsonOverride is a deny policy an apply overrode.
type jsonOverride struct {
	Time   time.Time `json:"time"`
	Policy string    `json:"policy"`
	Reason string    `json:"reason"`
}
