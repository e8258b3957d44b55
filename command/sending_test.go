package command

import (
	"testing"

	"pushform/sandbox"
)

// TestApplyCallsSending: apply calls Env.Sending once, after the
// configuration is evaluated and before it sends; a run that fails to
// evaluate never does, nor does plan.
func TestApplyCallsSending(t *testing.T) {
	dir, _ := testService(t, viewSeed, sandbox.Options{}, `
variable "n" {
  type    = number
  default = 1
}
notification "hello" {
  user_ids = [format("u%04d", var.n)]
  title    = "Hello"
  body     = "Hi"
}
`)
	for _, tt := range []struct {
		args  []string
		code  int
		calls int
	}{
		{[]string{"plan"}, ExitOK, 0},
		{[]string{"apply", "--auto-approve", "--var", "n=one"}, ExitError, 0},
		{[]string{"apply", "--auto-approve"}, ExitOK, 1},
	} {
		calls := 0
		env := Env{Sending: func() { calls++ }}
		if code, stdout, stderr := runCLI(t, dir, env, tt.args...); code != tt.code || calls != tt.calls {
			t.Errorf("%v: exit %d, Sending called %d times; want %d, %d\nstdout:\n%s\nstderr:\n%s", tt.args, code, calls, tt.code, tt.calls, stdout, stderr)
		}
	}
}
