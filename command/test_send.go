package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// testSendOptions are the flags and argument of test-send.
type testSendOptions struct {
	planFlags
	users, devices []string
	address        string
}

func cmdTestSend(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("test-send")
	o := &testSendOptions{}
	o.configFlags.bind(fs)
	o.stateFlags.bind(fs, true)
	o.serviceFlags.bind(fs)
	fs.StringArrayVar(&o.devices, "device", nil, "send to device `ID` (repeatable; default: test_devices)")
	fs.StringArrayVar(&o.users, "user", nil, "send to user `ID` (repeatable)")
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
	for _, id := range append(slices.Clone(o.users), o.devices...) {
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
	sess := r.Session
	defer func() {
		if err := sess.Close(); err != nil {
			m.Errorf("%v", err)
		}
	}()
	cfg := sess.Config
	msg, err := testSendMessage(cfg, o.address)
	if err != nil {
		return m.fail(err)
	}
	devices := o.devices
	if len(devices) == 0 && len(o.users) == 0 {
		devices = cfg.TestDevices(msg)
		if len(devices) == 0 {
			return m.fail(errors.New("test-send: give --device ID or --user ID, or list test_devices in the service block (or the campaign)"))
		}
	}
	svc, err := sess.Service()
	if err != nil {
		return m.fail(err)
	}
	rec, err := sess.Recorder(cfg.Service.Environment)
	if err != nil {
		return m.fail(err)
	}
	res, err := executor.SendTest(ctx, svc.Client, executor.TestSend{Address: msg.Address, Kind: msg.Kind, Content: msg.Content,
		Users: o.users, Devices: devices}, time.Now().UTC())
	if err != nil {
		return m.fail(err)
	}
	if err := rec.Record(res.Entry); err != nil {
		return m.fail(fmt.Errorf("recording the test send (request id %s): %w", res.RequestID, err))
	}
	if err := sess.Persist(); err != nil {
		return m.fail(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Test send of %s, request id %s:\n", termtext.Clean(msg.Address), termtext.Clean(res.RequestID))
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

// testSendMessage returns the message test-send sends for addr: a
// notification or badge of cfg, or one variant of a notification
// (ADDR.variant.NAME), with that variant's content and address.
func testSendMessage(cfg *config.Config, addr string) (*config.Message, error) {
	base, variant, isVariant := strings.Cut(addr, planner.VariantInfix)
	for _, msg := range cfg.Messages {
		switch {
		case msg.Address == addr && len(msg.Variants) > 0:
			names := make([]string, len(msg.Variants))
			for i, v := range msg.Variants {
				names[i] = msg.Address + planner.VariantInfix + v.Name
			}
			return nil, fmt.Errorf("test-send: %s has variants; send one of them: %s", termtext.Clean(addr), termtext.Clean(strings.Join(names, ", ")))
		case msg.Address == addr:
			return msg, nil
		case isVariant && msg.Address == base:
			for _, v := range msg.Variants {
				if v.Name == variant {
					c := *msg
					c.Address, c.Content, c.Variants = addr, v.Content, nil
					return &c, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("test-send: %s is not a notification or badge of the configuration (give the full address, e.g. campaign.NAME.notification.NAME, or NAME.variant.V for a variant)", termtext.Clean(addr))
}
