package command

import "testing"

// TestLimitSendMemory: apply sets its soft memory limit unless GOMEMLIMIT
// chose one, and never without the Env's hook (a shared test process).
func TestLimitSendMemory(t *testing.T) {
	for _, tt := range []struct {
		name      string
		gomemlim  string
		hook      bool
		wantLimit int64 // 0: not set
	}{
		{"no GOMEMLIMIT", "", true, sendMemoryLimit},
		{"GOMEMLIMIT wins", "2GiB", true, 0},
		{"no hook", "", false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got int64
			m := &Meta{Env: Env{Getenv: func(k string) string {
				if k == "GOMEMLIMIT" {
					return tt.gomemlim
				}
				return ""
			}}}
			if tt.hook {
				m.SetMemoryLimit = func(b int64) int64 { got = b; return 0 }
			}
			m.limitSendMemory()
			if got != tt.wantLimit {
				t.Errorf("limit %d, want %d", got, tt.wantLimit)
			}
		})
	}
}
