package command

import "testing"

// TestLimitSendMemory: apply sets its soft memory limit unless GOMEMLIMIT
// chose one, with it a GOGC unless GOGC chose one, and never without the
// Env's hooks (a shared test process).
func TestLimitSendMemory(t *testing.T) {
	for _, tt := range []struct {
		name           string
		gomemlim, gogc string
		hooks          bool
		wantLimit      int64 // 0: not set
		wantGCPercent  int   // 0: not set
	}{
		{"neither set", "", "", true, sendMemoryLimit, sendGCPercent},
		{"GOMEMLIMIT wins", "2GiB", "", true, 0, 0},
		{"GOGC wins", "", "50", true, sendMemoryLimit, 0},
		{"GOMEMLIMIT and GOGC", "2GiB", "off", true, 0, 0},
		{"no hooks", "", "", false, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var limit int64
			var percent int
			m := &Meta{Env: Env{Getenv: func(k string) string {
				switch k {
				case "GOMEMLIMIT":
					return tt.gomemlim
				case "GOGC":
					return tt.gogc
				}
				return ""
			}}}
			if tt.hooks {
				m.SetMemoryLimit = func(b int64) int64 { limit = b; return 0 }
				m.SetGCPercent = func(p int) int { percent = p; return 100 }
			}
			m.limitSendMemory()
			if limit != tt.wantLimit || percent != tt.wantGCPercent {
				t.Errorf("limit %d, GOGC %d; want %d, %d", limit, percent, tt.wantLimit, tt.wantGCPercent)
			}
		})
	}
}
