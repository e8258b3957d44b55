package command

import (
	"strings"
	"testing"
)

// TestPolicyFlagsCheck: an override needs a reason a reader can read; a
// reason of blanks is none.
func TestPolicyFlagsCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides []string
		reason    string
		want      string
	}{
		{"neither", nil, "", ""},
		{"both", []string{"p"}, "approved by marketing", ""},
		{"no reason", []string{"p"}, "", "needs --override-reason"},
		{"a blank reason", []string{"p"}, " \t ", "needs --override-reason"},
		{"a reason alone", nil, "r", "which is missing"},
		{"an empty name", []string{""}, "r", "needs a policy name"},
	} {
		pf := policyFlags{overrides: tc.overrides, reason: tc.reason}
		err := pf.check()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
