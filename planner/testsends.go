package planner

import (
	"fmt"
	"slices"
	"strings"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// Nothing unseen goes out: with require_test_send (the service block's or
// a campaign's), a notification is sent only once its exact content (each
// variant's) reached a device as a test send (pushform test-send) that the
// service answered delivered. A badge shows a count, nothing to proofread:
// it is not held.

// MarkTestSends sets TestSendCommand on the changes of p that send a
// notification whose content cfg requires a test send of and st's ledger
// records none delivered (st nil: none). It clears it on the others, so a
// saved plan is checked again against the state apply reads; a change the
// saved plan marked stays marked until its content has a delivered test
// send, even when the configuration no longer requires one: the plan was
// reviewed as needing it.
func MarkTestSends(p *Plan, cfg *config.Config, st *state.State) {
	byAddr := make(map[string]*config.Message, len(cfg.Messages))
	for _, m := range cfg.Messages {
		byAddr[m.Address] = m
	}
	tested := map[string]bool{} // by fingerprint
	for _, c := range p.Changes {
		marked := c.TestSendCommand
		c.TestSendCommand = ""
		if !SendsNow(c.Action) || c.Kind != message.KindNotification {
			continue
		}
		m := byAddr[c.Address]
		if m == nil && c.Variant != nil {
			m = byAddr[c.Variant.Of]
		}
		required := m != nil && cfg.RequiresTestSend(m)
		if !required && marked == "" {
			continue
		}
		ok, seen := tested[c.Fingerprint]
		if !seen {
			ok = deliveredTestSend(st, c.Fingerprint)
			tested[c.Fingerprint] = ok
		}
		switch {
		case ok:
		case m != nil:
			c.TestSendCommand = testSendCommand(c.Address, len(cfg.TestDevices(m)) > 0, c.Content.Personal())
		default:
			c.TestSendCommand = marked
		}
	}
}

// deliveredTestSend reports whether st's ledger records a test send of
// the content fp that the service answered delivered, under any address.
func deliveredTestSend(st *state.State, fp string) bool {
	if st == nil {
		return false
	}
	for _, m := range st.Ledger {
		if !slices.Contains(m.Fingerprints(), fp) {
			continue // not decoded: a forgotten campaign stays as it is
		}
		for _, t := range m.AllTargets() {
			if t.Outcome == state.TestSend && t.Fingerprint == fp && t.Reason == string(state.Delivered) {
				return true
			}
		}
	}
	return false
}

// testSendCommand is the command that sends addr's content as a test:
// to the test_devices the configuration lists, or to a device to name;
// of a template filled in per person, the text of a person to name (a
// test of any person's text is a test of the template).
func testSendCommand(addr string, hasTestDevices, personal bool) string {
	cmd := "pushform test-send " + shellWord(addr)
	if !hasTestDevices {
		cmd += " --device ID"
	}
	if personal {
		cmd += " --as-user ID"
	}
	return cmd
}

// shellWord quotes s for a POSIX shell when it holds more than letters,
// digits and ._-: an address with a for_each key holds brackets and
// quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestSendGuard refuses a plan with changes that need a test send (see
// MarkTestSends): apply calls it before sending anything. The error is a
// *TestSendError.
func (p *Plan) TestSendGuard() error {
	var e TestSendError
	for _, c := range p.Changes {
		if c.TestSendCommand != "" {
			e.Changes = append(e.Changes, c)
		}
	}
	if len(e.Changes) == 0 {
		return nil
	}
	return &e
}

// TestSendError is a plan refused by require_test_send: the changes whose
// content has no delivered test send.
type TestSendError struct {
	Changes []*Change
}

func (e *TestSendError) Error() string {
	var b strings.Builder
	for _, c := range e.Changes {
		fmt.Fprintf(&b, "\n  %s: %s", c.Address, c.TestSendCommand)
	}
	what := "a notification has"
	if n := len(e.Changes); n > 1 {
		what = fmt.Sprintf("%d notifications have", n)
	}
	return "require_test_send: " + what + " no delivered test send of their exact content, so nothing was sent. " +
		"Send each to a test device, check it on the phone, then plan and apply again:" + b.String()
}
