package statefile

import (
	"testing"

	"pushform/state"
)

// TestStoredMessage: a record's unreadable fields ride in its message
// string and come back exactly, whatever either holds; a message of
// before is read as it is.
func TestStoredMessage(t *testing.T) {
	for _, tc := range []struct{ msg, unread string }{
		{"", ""},
		{"APNs: BadDeviceToken", ""},
		{"", `unreachableSince: "yesterday"`},
		{"boom", `deviceCount: "x"; unreachableSince: "soon"`},
		{"a \xff in it", ""},
		{"a \xff in it", "and \xff12 here \xff"},
		{"\xff3", "\xff"},
	} {
		m, u := splitMessage(storedMessage(state.Target{Message: tc.msg, Unreadable: tc.unread}))
		if m != tc.msg || u != tc.unread {
			t.Errorf("%q, %q came back as %q, %q", tc.msg, tc.unread, m, u)
		}
	}
	for _, old := range []string{"plain", "ends \xff", "\xff0", "x\xff\xff1"} {
		if m, u := splitMessage(old); m != old || u != "" {
			t.Errorf("a message of before %q read as %q, %q", old, m, u)
		}
	}
}
