package command

import (
	"strings"
	"testing"

	"pushform/internal/testutil"
)

// TestScheduledRefusals: apply --scheduled refuses a saved plan and every
// flag that would send what no review accepted, before reading anything.
func TestScheduledRefusals(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"x.plan"}, `--scheduled plans by itself and cannot apply the saved plan "x.plan"`},
		{[]string{"--replace", "badge.reset"}, "Can't use --replace with --scheduled"},
		{[]string{"--resume", "notification.x"}, "Can't use --resume with --scheduled"},
		{[]string{"--allow-resend"}, "Can't use --allow-resend with --scheduled"},
		{[]string{"--retry-unknown"}, "Can't use --retry-unknown with --scheduled"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := testutil.Quickstart(t)
			code, out, errOut := runIn(t, dir, "", nil, append([]string{"apply", "--scheduled"}, tt.args...)...)
			if code != ExitError || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %q", code, out, errOut, tt.want)
			}
		})
	}
}
