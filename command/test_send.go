package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pushform/config"
	"pushform/operation"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// testSendOptions are the flags and argument of test-send.
type testSendOptions struct {
	planFlags
	users, devices []string
	address        string
	asUser, locale string
}

func cmdTestSend(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("test-send")
	o := &testSendOptions{}
	o.configFlags.bind(fs)
	o.stateFlags.bind(fs, true)
	o.serviceFlags.bind(fs)
	fs.StringArrayVar(&o.devices, "device", nil, "send to device `ID` (repeatable; default: test_devices)")
	fs.StringArrayVar(&o.users, "user", nil, "send to user `ID` (repeatable)")
	fs.StringVar(&o.asUser, "as-user", "", "send the text user `ID` would get of a personalised notification (their variant, locale and attributes)")
	fs.StringVar(&o.locale, "locale", "", "send the translation of `LOCALE` (fr, fr-CA), filled in from --as-user's attributes when it reads a person")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("test-send", err)
	}
	switch fs.NArg() {
	case 0:
		return m.usageError("test-send", errors.New("test-send takes the address of a notification or badge, such as notification.welcome"))
	case 1:
		o.address = fs.Arg(0)
	default:
		return m.usageError("test-send", fmt.Errorf("test-send takes one address, not %d arguments", fs.NArg()))
	}
	for _, id := range slices.Concat(o.users, o.devices) {
		if strings.TrimSpace(id) == "" {
			return m.usageError("test-send", errors.New("--user and --device take a non-empty id"))
		}
	}
	o.maxUnknownResends = planner.DefaultMaxUnknownResends
	return runTestSend(ctx, m, o)
}

// runTestSend validates the configuration as apply does, sends the
// address's content to the given targets only, prints each target's
// outcome and the request id, and records the test send in the ledger.
func runTestSend(ctx context.Context, m *Meta, o *testSendOptions) int {
	r, err := m.openRun(ctx, &o.planFlags, "test-send")
	if err != nil {
		return m.fail(err)
	}
	defer m.closeRun(r)
	msg, res, err := r.TestSend(ctx, operation.TestSendOptions{Address: o.address, Users: o.users, Devices: o.devices, AsUser: o.asUser, Locale: o.locale})
	if err != nil {
		return m.fail(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Test send of %s, request id %s:\n", termtext.Clean(msg.Address), termtext.Clean(res.RequestID))
	if o.asUser != "" {
		fmt.Fprintf(&b, "  the text user %s would get\n", termtext.Quote(o.asUser))
	}
	if o.locale != "" {
		fmt.Fprintf(&b, "  the %s translation\n", termtext.Clean(o.locale))
	}
	failed := false
	for _, t := range res.Targets {
		noun := "user"
		if t.Kind == config.TargetDevices {
			noun = "device"
		}
		line := fmt.Sprintf("  %s %s: %s", noun, termtext.Clean(t.ID), t.Outcome)
		if t.Detail != "" {
			line += " (" + termtext.Clean(t.Detail) + ")"
		}
		b.WriteString(line + "\n")
		failed = failed || t.Outcome != state.Delivered
	}
	b.WriteString("Recorded in history as a test send: it is not a delivery, and apply still sends to these targets.\n")
	fmt.Fprint(m.Stdout, b.String())
	if failed {
		return ExitError
	}
	return ExitOK
}
