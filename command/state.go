package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"pushform/backend"
	"pushform/render"
	"pushform/state"
)

// stateShowLimit is how many target lines state show prints without --all.
const stateShowLimit = 50

const stateUsage = `Usage: pushform state SUBCOMMAND [flags] [args]

Subcommands:
  list                 List the addresses in the state, with target counts
  show ADDR            Show one address: content and every target's last outcome
  rm ADDR...           Remove addresses from the state (nothing is sent)
  pull                 Print the backend's state in the local file format (redirect it to a file)
  push FILE [--force]  Store a local state file in the configured backend
`

func runState(ctx context.Context, m *Meta, args []string) int {
	if len(args) == 0 {
		io.WriteString(m.Stderr, stateUsage)
		return ExitError
	}
	switch args[0] {
	case "list":
		return m.stateList(ctx, args[1:])
	case "show":
		return m.stateShow(ctx, args[1:])
	case "rm":
		return m.stateRm(ctx, args[1:])
	case "pull":
		return m.statePull(ctx, args[1:])
	case "push":
		return m.statePush(ctx, args[1:])
	case "-h", "--help", "help":
		io.WriteString(m.Stdout, stateUsage)
		return ExitOK
	default:
		return m.Errorf("unknown state subcommand %q; use list, show, rm, pull or push", args[0])
	}
}

// readState reads the state the flags choose, without locking: list and
// show only look. A missing state is an error naming where it was looked for.
func (m *Meta) readState(ctx context.Context, sf stateFlags, missingOK bool) (*state.State, string, error) {
	be, err := m.openState(ctx, sf)
	if err != nil {
		return nil, "", err
	}
	defer be.Close()
	s, err := be.Read()
	if err != nil {
		return nil, be.String(), err
	}
	if s == nil && !missingOK {
		return nil, be.String(), fmt.Errorf("no state at %s", be)
	}
	return s, be.String(), nil
}

func (m *Meta) stateList(ctx context.Context, args []string) int {
	fs := m.FlagSet("state list")
	var sf stateFlags
	sf.bind(fs, false)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state list", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state list", errors.New("state list takes no arguments"))
	}
	s, where, err := m.readState(ctx, sf, true)
	if err != nil {
		return m.Errorf("%v", err)
	}
	if s == nil {
		fmt.Fprintf(m.Stderr, "No state at %s.\n", where)
		return ExitOK
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	for _, addr := range s.Addresses() {
		fmt.Fprintf(tw, "%s\t%s\n", addr, stateOutcomeCounts(s.Messages[addr]))
	}
	tw.Flush()
	return ExitOK
}

// stateOutcomes is the order outcomes are counted and shown in.
var stateOutcomes = []state.Outcome{state.Delivered, state.Skipped, state.Failed, state.Unknown}

// stateOutcomeCounts says "3 delivered, 1 failed" or "no targets".
func stateOutcomeCounts(msg *state.Message) string {
	counts := map[state.Outcome]int{}
	for _, t := range msg.Targets {
		counts[t.Outcome]++
	}
	if len(counts) == 0 {
		return "no targets"
	}
	var parts []string
	for _, o := range stateOutcomes {
		if n := counts[o]; n > 0 {
			parts = append(parts, render.Count(n)+" "+string(o))
		}
	}
	var other []state.Outcome // outcomes from a newer pushform
	for o := range counts {
		if !slices.Contains(stateOutcomes, o) {
			other = append(other, o)
		}
	}
	slices.Sort(other)
	for _, o := range other {
		parts = append(parts, fmt.Sprintf("%s %q", render.Count(counts[o]), o))
	}
	return strings.Join(parts, ", ")
}

func (m *Meta) stateShow(ctx context.Context, args []string) int {
	fs := m.FlagSet("state show")
	var sf stateFlags
	var asJSON, all bool
	sf.bind(fs, false)
	fs.BoolVar(&asJSON, "json", false, "print the address's state as JSON")
	fs.BoolVar(&all, "all", false, fmt.Sprintf("print every target, not only the first %d", stateShowLimit))
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state show", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("state show", errors.New("state show takes exactly one address"))
	}
	addr := fs.Arg(0)
	s, _, err := m.readState(ctx, sf, false)
	if err != nil {
		return m.Errorf("%v", err)
	}
	msg := s.Messages[addr]
	if msg == nil {
		return m.Errorf("no address %s in the state; 'pushform state list' lists them", addr)
	}
	if asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(msg); err != nil {
			return m.Errorf("writing JSON: %v", err)
		}
		return ExitOK
	}
	writeStateMessage(m.Stdout, msg, all)
	return ExitOK
}

// writeStateMessage prints one address in the human format of state show.
func writeStateMessage(w io.Writer, msg *state.Message, all bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "# %s\n", msg.Address)
	fmt.Fprintf(tw, "kind\t= %s\n", msg.Kind)
	fmt.Fprintf(tw, "target_kind\t= %s\n", msg.TargetKind)
	fmt.Fprintf(tw, "fingerprint\t= %s\n", msg.Fingerprint)
	c := msg.Content
	for _, f := range []struct{ name, value string }{
		{"title", c.Title}, {"body", c.Body}, {"open_to_url", c.OpenToURL}, {"tag", c.Tag},
	} {
		if f.value != "" {
			fmt.Fprintf(tw, "%s\t= %q\n", f.name, f.value)
		}
	}
	if c.BadgeCount != nil {
		fmt.Fprintf(tw, "badge_count\t= %d\n", *c.BadgeCount)
	}
	if c.SilentInForeground {
		fmt.Fprintf(tw, "silent_in_foreground\t= true\n")
	}
	tw.Flush()

	ids := make([]string, 0, len(msg.Targets))
	for id := range msg.Targets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fmt.Fprintf(w, "\nTargets: %s (%s)\n", render.Count(len(ids)), stateOutcomeCounts(msg))
	shown := ids
	if !all && len(ids) > stateShowLimit {
		shown = ids[:stateShowLimit]
		fmt.Fprintf(w, "Showing the first %d; --all shows every target.\n", stateShowLimit)
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, id := range shown {
		t := msg.Targets[id]
		req := t.RequestID
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", id, t.Outcome, stateTargetDetail(*t), req, stateTime(t.Time))
	}
	tw.Flush()
	if len(shown) < len(ids) {
		fmt.Fprintf(w, "  ... and %s more\n", render.Count(len(ids)-len(shown)))
	}
}

// stateTargetDetail is the outcome's detail: device count, reason, message.
func stateTargetDetail(t state.Target) string {
	switch t.Outcome {
	case state.Delivered:
		switch t.DeviceCount {
		case -1:
			return "device count not reported"
		case 1:
			return "1 device"
		default:
			return strconv.Itoa(t.DeviceCount) + " devices"
		}
	case state.Skipped:
		if t.UnreachableSince != nil {
			return fmt.Sprintf("%s, unreachable since %s", t.Reason, stateTime(*t.UnreachableSince))
		}
		return t.Reason
	case state.Failed:
		return strconv.Quote(t.Message)
	case state.Unknown:
		return "sent, answer not recorded"
	}
	return "-"
}

func stateTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func (m *Meta) stateRm(ctx context.Context, args []string) int {
	fs := m.FlagSet("state rm")
	var sf stateFlags
	sf.bind(fs, true)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state rm", err)
	}
	if fs.NArg() == 0 {
		return m.usageError("state rm", errors.New("state rm needs at least one address"))
	}
	be, err := m.openState(ctx, sf)
	if err != nil {
		return m.fail(err)
	}
	sess, err := backend.Open(ctx, nil, be, backend.SessionOptions{Operation: "state rm", LockTimeout: sf.lockTimeout})
	if err != nil {
		return m.fail(err)
	}
	m.warnStaleLock(sess.StaleLock)
	code := m.stateRemove(sess, fs.Args())
	if err := sess.Close(); err != nil {
		return m.fail(err)
	}
	return code
}

func (m *Meta) stateRemove(sess *backend.Session, addrs []string) int {
	s := sess.State
	if s == nil {
		return m.Errorf("no state at %s", sess.Backend)
	}
	var missing []string
	forget := state.Entry{Type: state.EntryForget, Time: time.Now().UTC()}
	seen := map[string]bool{}
	for _, a := range addrs {
		if s.Messages[a] == nil {
			missing = append(missing, a)
		} else if !seen[a] {
			seen[a] = true
			forget.Items = append(forget.Items, state.Item{Address: a})
		}
	}
	if len(missing) > 0 {
		return m.Errorf("no address %s in the state; nothing was removed", strings.Join(missing, ", "))
	}
	if err := s.ApplyEntry(forget); err != nil {
		return m.Errorf("%v", err)
	}
	if err := sess.Persist(); err != nil {
		return m.Errorf("%v", err)
	}
	for _, it := range forget.Items {
		fmt.Fprintf(m.Stdout, "Removed %s\n", it.Address)
	}
	n := len(forget.Items)
	fmt.Fprintf(m.Stdout, "Removed %d address%s from the state (serial %d). Nothing was sent.\n", n, map[bool]string{true: "", false: "es"}[n == 1], s.Serial)
	return ExitOK
}
