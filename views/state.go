package views

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// State shows what the state records: the addresses (state list) and one
// address with its targets (state show).
type State interface {
	// List shows every address with its outcome counts.
	List(s *state.State) error
	// Show shows one address: its content and every target's last outcome.
	Show(msg *state.Message) error
}

var (
	_ State = (*StateHuman)(nil)
	_ State = (*StateJSON)(nil)
)

// StateHuman shows the state as aligned text.
type StateHuman struct {
	w     io.Writer
	limit int
}

// NewStateHuman returns a human state view writing to w; Show lists at most
// limit targets (every one when limit <= 0).
func NewStateHuman(w io.Writer, limit int) *StateHuman {
	return &StateHuman{w: w, limit: limit}
}

// List writes one line per address: the address and its outcome counts.
func (v *StateHuman) List(s *state.State) error {
	if s == nil {
		return nil
	}
	tw := tabwriter.NewWriter(v.w, 0, 4, 2, ' ', 0)
	for _, addr := range s.Addresses() {
		fmt.Fprintf(tw, "%s\t%s\n", termtext.Clean(addr), outcomeCounts(s.Messages[addr]))
	}
	return tw.Flush()
}

// stateOutcomes is the order outcomes are counted and shown in.
var stateOutcomes = []state.Outcome{state.Delivered, state.Skipped, state.Failed, state.Unknown}

// listedOutcomes are the outcomes state list counts by name: those and
// the targets recorded as already delivered under another address.
var listedOutcomes = append(slices.Clip(stateOutcomes), state.AlreadyDelivered)

// countOutcomes counts msg's targets by outcome.
func countOutcomes(msg *state.Message) map[state.Outcome]int {
	counts := map[state.Outcome]int{}
	for _, t := range msg.Targets {
		counts[t.Outcome]++
	}
	return counts
}

// outcomeCounts says "3 delivered, 1 failed" or "no targets".
func outcomeCounts(msg *state.Message) string {
	counts := countOutcomes(msg)
	if len(counts) == 0 {
		return "no targets"
	}
	var parts []string
	for _, o := range listedOutcomes {
		if n := counts[o]; n > 0 {
			parts = append(parts, Count(n)+" "+string(o))
		}
	}
	var other []state.Outcome // outcomes from a newer pushform
	for o := range counts {
		if !slices.Contains(listedOutcomes, o) {
			other = append(other, o)
		}
	}
	slices.Sort(other)
	for _, o := range other {
		parts = append(parts, Count(counts[o])+" "+termtext.Quote(string(o)))
	}
	return strings.Join(parts, ", ")
}

// Show writes one address: its attributes, then its targets sorted by id.
func (v *StateHuman) Show(msg *state.Message) error {
	w := v.w
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "# %s\n", termtext.Clean(msg.Address))
	fmt.Fprintf(tw, "kind\t= %s\n", termtext.Clean(string(msg.Kind)))
	fmt.Fprintf(tw, "target_kind\t= %s\n", termtext.Clean(string(msg.TargetKind)))
	fmt.Fprintf(tw, "fingerprint\t= %s\n", termtext.Clean(msg.Fingerprint))
	c := msg.Content
	for _, f := range []struct{ name, value string }{
		{"title", c.Title}, {"body", c.Body}, {"open_to_url", c.OpenToURL}, {"tag", c.Tag},
	} {
		if f.value != "" {
			fmt.Fprintf(tw, "%s\t= %s\n", f.name, termtext.Quote(f.value))
		}
	}
	if c.BadgeCount != nil {
		fmt.Fprintf(tw, "badge_count\t= %d\n", *c.BadgeCount)
	}
	if c.SilentInForeground {
		fmt.Fprintf(tw, "silent_in_foreground\t= true\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	ids := make([]string, 0, len(msg.Targets))
	for id := range msg.Targets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fmt.Fprintf(w, "\nTargets: %s (%s)\n", Count(len(ids)), outcomeCounts(msg))
	shown := ids
	if v.limit > 0 && len(ids) > v.limit {
		shown = ids[:v.limit]
		fmt.Fprintf(w, "Showing the first %s; --all shows every target.\n", Count(v.limit))
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, id := range shown {
		t := msg.Targets[id]
		req := termtext.Clean(t.RequestID)
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", termtext.Clean(id), termtext.Clean(string(t.Outcome)), targetDetail(*t)+unreadableNote(t.Unreadable), req, stateTime(t.Time))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(shown) < len(ids) {
		fmt.Fprintf(w, "  ... and %s more\n", Count(len(ids)-len(shown)))
	}
	return nil
}

// targetDetail is the outcome's detail: device count, reason, message,
// escaped for a terminal.
func targetDetail(t state.Target) string {
	switch t.Outcome {
	case state.Delivered:
		switch t.DeviceCount {
		case -1:
			return "device count not reported"
		case 1:
			return "1 device"
		default:
			return Count(t.DeviceCount) + " devices"
		}
	case state.Skipped:
		if t.UnreachableSince != nil {
			return fmt.Sprintf("%s, unreachable since %s", termtext.Clean(t.Reason), stateTime(*t.UnreachableSince))
		}
		return termtext.Clean(t.Reason)
	case state.Failed:
		return termtext.Quote(t.Message)
	case state.Unknown:
		return "sent, answer not recorded"
	case state.AlreadyDelivered:
		return "not sent: delivered under " + termtext.Clean(t.Reason)
	}
	return "-"
}

func stateTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// StateJSON shows the state as indented JSON documents.
type StateJSON struct {
	w      io.Writer
	indent bool
}

// NewStateJSON returns a JSON state view writing to w; indent spreads each
// document over indented lines.
func NewStateJSON(w io.Writer, indent bool) *StateJSON {
	return &StateJSON{w: w, indent: indent}
}

// jsonStateList is the shape of state list as JSON.
type jsonStateList struct {
	FormatVersion string             `json:"format_version"`
	Environment   string             `json:"environment,omitempty"`
	Lineage       string             `json:"lineage,omitempty"`
	Serial        uint64             `json:"serial"`
	Addresses     []jsonStateAddress `json:"addresses"`
}

type jsonStateAddress struct {
	Address    string                `json:"address"`
	Kind       message.Kind          `json:"kind"`
	TargetKind message.TargetKind    `json:"target_kind"`
	Targets    int                   `json:"targets"`
	Outcomes   map[state.Outcome]int `json:"outcomes"`
}

// List writes every address with its target and outcome counts; a nil
// state lists none.
func (v *StateJSON) List(s *state.State) error {
	out := jsonStateList{FormatVersion: planner.FormatVersion, Addresses: []jsonStateAddress{}}
	if s != nil {
		out.Environment, out.Lineage, out.Serial = s.Environment, s.Lineage, s.Serial
		for _, addr := range s.Addresses() {
			m := s.Messages[addr]
			out.Addresses = append(out.Addresses, jsonStateAddress{Address: addr, Kind: m.Kind, TargetKind: m.TargetKind,
				Targets: len(m.Targets), Outcomes: countOutcomes(m)})
		}
	}
	return writeJSON(v.w, out, v.indent)
}

// Show writes the address's recorded state as it is kept.
func (v *StateJSON) Show(msg *state.Message) error {
	return writeJSON(v.w, struct {
		FormatVersion string `json:"format_version"`
		*state.Message
	}{planner.FormatVersion, msg}, v.indent)
}
