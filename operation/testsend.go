package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pushform/config"
	"pushform/executor"
	"pushform/planner"
	"pushform/termtext"
)

// TestSendOptions are the inputs of TestSend.
type TestSendOptions struct {
	// Address is a notification or badge of the configuration, or one
	// variant of a notification (ADDR.variant.NAME).
	Address string
	// Users and Devices are the targets; with neither, the test_devices
	// the configuration lists for the message.
	Users, Devices []string
}

// ErrNoTestDevices is TestSend's error when it is given no targets and
// the configuration lists no test_devices for the message.
var ErrNoTestDevices = errors.New("test-send: give --device ID or --user ID, or list test_devices in the service block (or the campaign)")

// TestSend sends the content of one address to the given targets only,
// and records it in the ledger as a test send (not a delivery: apply
// still sends to these targets). It returns the message sent and each
// target's outcome.
func (r *Run) TestSend(ctx context.Context, o TestSendOptions) (*config.Message, *executor.TestSendResult, error) {
	sess := r.Session
	cfg := sess.Config
	msg, err := testSendMessage(cfg, o.Address)
	if err != nil {
		return nil, nil, err
	}
	users, devices := o.Users, o.Devices
	if len(devices) == 0 && len(users) == 0 {
		devices = cfg.TestDevices(msg)
		if len(devices) == 0 {
			return nil, nil, ErrNoTestDevices
		}
	}
	users, devices, err = testTargets(users, devices)
	if err != nil {
		return nil, nil, err
	}
	svc, err := sess.Service()
	if err != nil {
		return nil, nil, err
	}
	rec, err := sess.Recorder(cfg.Service.Environment)
	if err != nil {
		return nil, nil, err
	}
	res, err := executor.SendTest(ctx, svc.Client, executor.TestSend{Address: msg.Address, Kind: msg.Kind, Content: msg.Content,
		Users: users, Devices: devices}, r.Clock.Now().UTC())
	if err != nil {
		return nil, nil, err
	}
	if err := rec.Record(res.Entry); err != nil {
		return nil, nil, fmt.Errorf("recording the test send (request id %s): %w", res.RequestID, err)
	}
	if err := sess.Persist(); err != nil {
		return nil, nil, err
	}
	return msg, res, nil
}

// testTargets checks the targets of a test send and returns them with
// each id once, in the order first given: one request, so each device
// shows the test once. Users and devices are refused together, since
// the service gives no map from users to devices (a user's own device
// would show it twice), and more ids than one request takes are refused
// before anything is sent.
func testTargets(users, devices []string) ([]string, []string, error) {
	if len(users) > 0 && len(devices) > 0 {
		return nil, nil, errors.New("test-send: give --user or --device, not both: the service does not say which devices a user has, so a device of one of these users could show the test twice. Run test-send once for the users and once for the devices")
	}
	users, devices = distinctIDs(users), distinctIDs(devices)
	for _, k := range []struct {
		flag string
		ids  []string
	}{{"--user", users}, {"--device", devices}} {
		if n := len(k.ids); n > planner.DefaultBatchLimit {
			return nil, nil, fmt.Errorf("test-send: %d distinct %s ids are more than one request takes (%d); a test send is one request: give at most %d. Nothing was sent",
				n, k.flag, planner.DefaultBatchLimit, planner.DefaultBatchLimit)
		}
	}
	return users, devices, nil
}

// distinctIDs returns ids without repeats, in the order first given.
func distinctIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
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
				names[i] = planner.VariantAddress(msg.Address, v.Name)
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
