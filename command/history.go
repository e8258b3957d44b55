package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"pushform/backend"
	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
	"pushform/views"
)

// historyOptions are the flags and argument of history.
type historyOptions struct {
	stateFlags
	jsonFlags
	user, device, topic string
	since, until        string
	address             string
	variants            bool
}

// historyApplyGap is the longest pause between two requests of one
// content under one address that history still shows as one apply: the
// ledger records requests, not runs, and one run sends an address one
// content in requests that follow each other closely.
const historyApplyGap = 10 * time.Minute

func cmdHistory(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("history")
	var o historyOptions
	o.stateFlags.bind(fs, false)
	fs.StringVar(&o.user, "user", "", "list what user `ID` received")
	fs.StringVar(&o.device, "device", "", "list what device `ID` received")
	fs.StringVar(&o.topic, "topic", "", "list what topic `NAME` was sent")
	fs.StringVar(&o.since, "since", "", "only records from `TIME` on: RFC 3339, or a date (2026-11-24: from the start of that day, UTC)")
	fs.StringVar(&o.until, "until", "", "only records before `TIME`: RFC 3339, or a date (2026-11-24: up to the end of that day, UTC)")
	fs.BoolVar(&o.variants, "variants", false, "with ADDR and --json: export which variant (or the holdout) each target got")
	o.jsonFlags.bind(fs, "the history")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("history", err)
	}
	window, err := o.window()
	if err != nil {
		return m.usageError("history", err)
	}
	kind, id, err := o.target(fs)
	if err != nil {
		return m.usageError("history", err)
	}
	if o.variants && (o.address == "" || !o.jsonFlags.enabled()) {
		return m.usageError("history", errors.New("--variants exports the variants of an address as JSON: give ADDR and --json"))
	}
	s, err := m.readLedger(ctx, o.stateFlags)
	if err != nil {
		return m.fail(err)
	}
	if o.variants {
		if err := views.WriteVariantsJSON(m.Stdout, variantExport(s, o.address), o.indent); err != nil {
			return m.fail(err)
		}
		return ExitOK
	}
	v := views.NewHistory(o.jsonFlags.format(), m.view(o.indent))
	if o.address != "" {
		h := addressHistory(s, o.address, window)
		if err := v.Address(h); err != nil {
			return m.fail(err)
		}
		if !h.Known && !o.jsonFlags.enabled() {
			m.hintTarget(s, o.address)
		}
		return ExitOK
	}
	if err := v.Target(targetHistory(s, kind, id, window)); err != nil {
		return m.fail(err)
	}
	return ExitOK
}

// target says what history is asked about: exactly one of --user,
// --device, --topic and an address. kind is "" for an address.
func (o *historyOptions) target(fs *pflag.FlagSet) (message.TargetKind, string, error) {
	var chosen []string
	var kind message.TargetKind
	var id string
	for _, f := range []struct {
		name  string
		kind  message.TargetKind
		value string
	}{{"user", message.TargetUsers, o.user}, {"device", message.TargetDevices, o.device}, {"topic", message.TargetTopics, o.topic}} {
		if !fs.Changed(f.name) {
			continue
		}
		if f.value == "" {
			return "", "", fmt.Errorf("--%s needs a non-empty id", f.name)
		}
		chosen = append(chosen, "--"+f.name)
		kind, id = f.kind, f.value
	}
	switch {
	case fs.NArg() > 1:
		return "", "", errors.New("history takes at most one address")
	case fs.NArg() == 1 && len(chosen) > 0:
		return "", "", fmt.Errorf("history takes an address or %s, not both", chosen[0])
	case fs.NArg() == 1:
		o.address = fs.Arg(0)
		if o.address == "" {
			return "", "", errors.New("history needs a non-empty address")
		}
		return "", "", nil
	case len(chosen) > 1:
		return "", "", fmt.Errorf("%s and %s cannot be combined: history lists one target", chosen[0], chosen[1])
	case len(chosen) == 0:
		return "", "", errors.New("history needs --user ID, --device ID, --topic NAME or an address")
	}
	return kind, id, nil
}

// window parses --since and --until.
func (o *historyOptions) window() (views.Window, error) {
	var w views.Window
	var err error
	if o.since != "" {
		if w.Since, err = parseHistoryTime("--since", o.since, false); err != nil {
			return w, err
		}
	}
	if o.until != "" {
		if w.Until, err = parseHistoryTime("--until", o.until, true); err != nil {
			return w, err
		}
	}
	if !w.Since.IsZero() && !w.Until.IsZero() && !w.Since.Before(w.Until) {
		return w, fmt.Errorf("--since %s is not before --until %s: the window is empty", o.since, o.until)
	}
	return w, nil
}

// parseHistoryTime reads an RFC 3339 time or a date (a whole UTC day):
// the day's start, or with end the next day's start, so that --until
// 2026-11-24 takes in that whole day.
func parseHistoryTime(flag, v string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	return time.Time{}, fmt.Errorf("%s %s is neither an RFC 3339 time (2026-11-24T09:00:00Z) nor a date (2026-11-24)", flag, quoteArg(v))
}

// readLedger reads the state for history, without locking (it only
// looks), compact when the backend can: one target's history out of ten
// million targets then needs no map. No state reads as an empty ledger.
func (m *Meta) readLedger(ctx context.Context, sf stateFlags) (*state.State, error) {
	be, err := m.stateBackend(ctx, sf)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	s, err := readCompact(be)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = &state.State{}
	}
	return s, nil
}

// readCompact reads the state compact when the backend can.
func readCompact(be backend.State) (*state.State, error) {
	if cr, ok := be.(interface{ ReadCompact() (*state.State, error) }); ok {
		return cr.ReadCompact()
	}
	return be.Read()
}

// targetHistory gathers one target's deliveries in the window.
func targetHistory(s *state.State, kind message.TargetKind, id string, w views.Window) views.TargetHistory {
	all := s.TargetHistory(kind, id)
	h := views.TargetHistory{TargetKind: kind, ID: id, Window: w, Known: len(all) > 0}
	for _, d := range all {
		if !w.Contains(d.Time) {
			continue
		}
		vd := views.Delivery{Time: d.Time, Address: d.Address, Kind: d.Kind, Fingerprint: d.Fingerprint,
			Content: d.Content, Text: d.Text, Outcome: d.Outcome, RequestID: d.RequestID,
			DeviceCount: d.DeviceCount, Reason: d.Reason, Message: d.Message, Unreadable: d.Unreadable}
		if d.Forgotten {
			vd.ForgottenAt = d.ForgottenAt
		}
		h.Deliveries = append(h.Deliveries, vd)
	}
	return h
}

// addressHistory gathers an address's applies in the window: the ledger's
// request events of one content that follow each other within
// historyApplyGap, with no forgetting between them, make one apply.
func addressHistory(s *state.State, addr string, w views.Window) views.AddressHistory {
	events, current := s.AddressHistory(addr)
	h := views.AddressHistory{Address: addr, Window: w, Known: len(events) > 0 || current}
	var last *views.ApplyRecord
	for _, ev := range events {
		if ev.Forgot {
			// The latest forgetting is the one that holds, unless the
			// address is back in the configuration's view since.
			if !current && ev.Time.After(h.ForgottenAt) {
				h.ForgottenAt = ev.Time
			}
			if w.Contains(ev.Time) {
				h.Forgets = append(h.Forgets, views.ForgetRecord{Time: ev.Time, Targets: ev.Targets})
			}
			last = nil
			continue
		}
		if !w.Contains(ev.Time) {
			continue
		}
		if last == nil || last.Fingerprint != ev.Fingerprint || ev.Time.Sub(last.End) > historyApplyGap {
			h.Applies = append(h.Applies, views.ApplyRecord{Start: ev.Time, End: ev.Time, Kind: ev.Kind,
				Fingerprint: ev.Fingerprint, Content: ev.Content, Outcomes: map[state.Outcome]int{}})
			last = &h.Applies[len(h.Applies)-1]
		}
		last.End = ev.Time
		if ev.RequestID != "" { // one event per request and content
			last.RequestIDs = append(last.RequestIDs, ev.RequestID)
		}
		for o, n := range ev.Outcomes {
			last.Outcomes[o] += n
		}
	}
	return h
}

// hintTarget follows an unknown address with the target options that
// would find the word, for "history alice" meant as "--user alice".
func (m *Meta) hintTarget(s *state.State, word string) {
	for _, f := range []struct {
		flag string
		kind message.TargetKind
	}{{"--user", message.TargetUsers}, {"--device", message.TargetDevices}, {"--topic", message.TargetTopics}} {
		if len(s.TargetHistory(f.kind, word)) > 0 {
			fmt.Fprintf(m.Stderr, "The ledger does know %s %s: 'pushform history %s %s' lists what it received.\n",
				f.flag[2:], quoteArg(word), f.flag, quoteArg(word))
			return
		}
	}
	var addrs []string
	for msg := range s.LedgerMessages() {
		if !slices.Contains(addrs, msg.Address) {
			addrs = append(addrs, msg.Address)
		}
	}
	for _, a := range addrs {
		if strings.HasPrefix(a, word+planner.VariantInfix) || a == word+planner.HoldoutSuffix {
			fmt.Fprintf(m.Stderr, "%s has variants: each is recorded under its own address (%s, ...); 'pushform history %s --variants --json' lists who got which.\n",
				termtext.Clean(word), termtext.Clean(a), quoteArg(word))
			return
		}
	}
	if addr := suggest(word, addrs); addr != "" {
		fmt.Fprintf(m.Stderr, "Did you mean %s?\n", termtext.Clean(addr))
	}
}
