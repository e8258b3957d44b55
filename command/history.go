package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"pushform/message"
	"pushform/operation"
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

// historyHelp is the help of history; its flags come from the flag set it parses.
func historyHelp() helpDoc {
	return helpDoc{
		usage: []string{"history [options] --user ID", "history [options] --device ID", "history [options] --topic NAME", "history [options] ADDR"},
		text: "Answers \"what did this user receive, and why?\" from the state's delivery ledger, which keeps every " +
			"delivery record, forgotten addresses' included, until 'pushform state prune' drops it. With --user, " +
			"--device or --topic it lists what that target was sent, oldest first: time, address (and whether it " +
			"was forgotten), kind, title, tag, outcome and request id. With an address it lists what the address " +
			"sent, one line per apply (requests of one content, with the delivered, failed, skipped and unknown " +
			"counts and request ids), and when it was forgotten. --since and --until take an RFC 3339 time or a " +
			"date (a whole UTC day). It reads the state without locking it; an id the ledger has never seen is " +
			"said so, with exit 0.",
		examples: []string{
			"pushform history --user alice",
			"pushform history --device alice-phone --since 2026-11-01 --json",
			"pushform history campaign.spring_sale.notification.announce",
		},
	}
}

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
	res, err := operation.History(ctx, m.stateOperation("history", o.stateFlags),
		operation.HistoryQuery{TargetKind: kind, ID: id, Address: o.address, Window: window, Variants: o.variants})
	if err != nil {
		return m.fail(err)
	}
	v := views.NewHistory(o.jsonFlags.format(), m.view(o.indent))
	switch {
	case res.Variants != nil:
		err = views.WriteVariantsJSON(m.Stdout, *res.Variants, o.indent)
	case res.Address != nil:
		err = v.Address(*res.Address)
		if err == nil && res.Hint != nil && !o.jsonFlags.enabled() {
			m.hintTarget(res.Hint, o.address)
		}
	default:
		err = v.Target(*res.Target)
	}
	if err != nil {
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

// hintTarget follows an unknown address with what would find the word,
// for "history alice" meant as "--user alice".
func (m *Meta) hintTarget(h *operation.HistoryHint, word string) {
	switch {
	case h.TargetFlag != "":
		fmt.Fprintf(m.Stderr, "The ledger does know %s %s: 'pushform history %s %s' lists what it received.\n",
			h.TargetFlag[2:], quoteArg(word), h.TargetFlag, quoteArg(word))
	case h.Variant != "":
		fmt.Fprintf(m.Stderr, "%s has variants: each is recorded under its own address (%s, ...); 'pushform history %s --variants --json' lists who got which.\n",
			termtext.Clean(word), termtext.Clean(h.Variant), quoteArg(word))
	default:
		if addr := suggest(word, h.Addresses); addr != "" {
			fmt.Fprintf(m.Stderr, "Did you mean %s?\n", termtext.Clean(addr))
		}
	}
}
