package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pushform/config"
	"pushform/executor"
	"pushform/message"
	"pushform/planner"
	"pushform/state"
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
	// AsUser, for a personalised notification, sends the text that person
	// would get (their variant, locale and attributes); Locale sends the
	// translation of that locale (filled in from AsUser's attributes when
	// it reads a person).
	AsUser, Locale string
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
	msg, err := testSendMessage(cfg, o.Address, o.AsUser, sess.State)
	if err != nil {
		return nil, nil, err
	}
	text, err := testText(msg, o.AsUser, o.Locale)
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
		Text: text, Users: users, Devices: devices}, r.Clock.Now().UTC())
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

// testText is the text a test send of msg sends when msg is filled in
// per person: the one asUser would get (of locale's translation, when
// given), or locale's translation when it reads no person. Nil for a
// message sent as it is.
func testText(msg *config.Message, asUser, locale string) (*message.Text, error) {
	t := msg.Template
	addr := termtext.Clean(msg.Address)
	if locale != "" {
		l, ok := config.NormalizeLocale(locale)
		if !ok {
			return nil, fmt.Errorf("test-send: --locale takes a BCP 47 locale tag such as fr or fr-CA, not %s", termtext.Quote(locale))
		}
		locale = l
	}
	switch {
	case t == nil && (asUser != "" || locale != ""):
		return nil, fmt.Errorf("test-send: --as-user and --locale test the text a person gets of a personalised notification; %s sends one text to everyone", addr)
	case t == nil:
		return nil, nil
	case asUser == "" && t.NeedsPerson(locale):
		what := "its text"
		if locale != "" {
			what = "its " + locale + " text"
		}
		return nil, fmt.Errorf("test-send: %s is filled in per person and %s reads %s.*: give --as-user ID to send the text that user would get. Nothing was sent", addr, what, t.Root)
	}
	var r config.Rendering
	var err error
	switch {
	case locale != "":
		r, err = t.RenderAs(asUser, locale)
	default:
		r, err = t.Render(asUser)
	}
	if err != nil {
		return nil, fmt.Errorf("test-send: %w", err)
	}
	if r.Held != "" {
		return nil, fmt.Errorf("test-send: the text of %s %s cannot be filled in (%s), so a plan holds them: nothing was sent", t.Root, termtext.Quote(asUser), termtext.Clean(r.Held))
	}
	if locale != "" && r.Translation == "" && t.DefaultLocale != locale {
		return nil, fmt.Errorf("test-send: %s has no translation for %s (it has %s). Nothing was sent", addr, locale, strings.Join(t.Translations(), ", "))
	}
	c := r.Content
	return &message.Text{Title: c.Title, Body: c.Body, OpenToURL: c.OpenToURL, Tag: c.Tag, Locale: r.Translation}, nil
}

// testSendMessage returns the message test-send sends for addr: a
// notification or badge of cfg, or one variant of a notification
// (ADDR.variant.NAME), with that variant's content and address; of a
// notification with variants, the variant asUser gets (st's ledger says,
// else their bucket).
func testSendMessage(cfg *config.Config, addr, asUser string, st *state.State) (*config.Message, error) {
	base, variant, isVariant := strings.Cut(addr, planner.VariantInfix)
	for _, msg := range cfg.Messages {
		switch {
		case msg.Address == addr && len(msg.Variants) > 0 && asUser != "":
			parts, err := planner.Assign(cfg, st, msg, []string{asUser})
			if err != nil {
				return nil, err
			}
			if parts[asUser] == nil {
				return nil, fmt.Errorf("test-send: user %s is in the holdout of %s and receives nothing: nothing to test", termtext.Quote(asUser), termtext.Clean(addr))
			}
			return parts[asUser], nil
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
					c.Address, c.Content, c.Template, c.Variants = addr, v.Content, v.Template, nil
					return &c, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("test-send: %s is not a notification or badge of the configuration (give the full address, e.g. campaign.NAME.notification.NAME, or NAME.variant.V for a variant)", termtext.Clean(addr))
}
