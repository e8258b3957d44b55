package command

import (
	"context"
	"fmt"
	"strings"

	"pushform/config"
	"pushform/operation"
	"pushform/planner"
	"pushform/termtext"
)

// testSendOptions are the flags and argument of test-send.
type testSendOptions struct {
	planFlags
	users, devices []string
	address        string
	asUser, locale string
}

// testSendHelp is the help of test-send; its flags come from the flag set it parses.
func testSendHelp() helpDoc {
	return helpDoc{
		usage: []string{"test-send [options] ADDR --device ID...", "test-send [options] ADDR --user ID..."},
		text: "Sends the content of one notification or badge to the given devices or users only, after the same " +
			"validation as apply, and prints each target's outcome and the request id. Without --device or --user " +
			"it sends to test_devices (the campaign's, else the service block's). A notification filled in per person " +
			"(user.* in its text, or translations) sends, with --as-user ID, the text that user would get (their " +
			"variant, locale and attributes), and with --locale LOCALE that translation (filled in from --as-user's " +
			"attributes when it reads a person; refused without one). It is recorded in the state's " +
			"ledger and in history as a test send, not a delivery: apply still sends the address to those targets. " +
			"Exit 1 when a target was not delivered.",
		examples: []string{
			"pushform test-send notification.spring --device my-phone",
			"pushform test-send campaign.spring_sale.notification.announce",
			"pushform test-send campaign.shipping.notification.shipped --device my-phone --as-user chloe --locale de",
		},
	}
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
	addr, err := addressAndIDs("test-send", "a notification or badge", fs, o.users, o.devices)
	if err != nil {
		return m.usageError("test-send", err)
	}
	o.address = addr
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
	}
	b.WriteString("Recorded in history as a test send: it is not a delivery, and apply still sends to these targets.\n")
	fmt.Fprint(m.Stdout, b.String())
	if !res.Delivered() {
		return ExitError
	}
	return ExitOK
}
