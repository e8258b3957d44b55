package command

import (
	"runtime"
	"slices"
	"testing"
)

// TestLimitSendMemory: apply sets its soft memory limit unless GOMEMLIMIT
// chose one, with it a GOGC unless GOGC chose one, and never without the
// Env's hooks (a shared test process). With AfterCollection it first lets
// the heap grow to quietHeap with the collector off, and sets both goals
// after the first collection, the limit before GOGC.
func TestLimitSendMemory(t *testing.T) {
	for _, tt := range []struct {
		name           string
		gomemlim, gogc string
		hooks          bool
		wantLimit      int64 // 0: not set
		wantGCPercent  int   // 0: not set
		collects       bool  // an AfterCollection hook
		wantQuiet      bool  // quietHeap and GOGC off until it runs
	}{
		{"neither set", "", "", true, sendMemoryLimit, sendGCPercent, false, false},
		{"GOMEMLIMIT wins", "2GiB", "", true, 0, 0, false, false},
		{"GOGC wins", "", "50", true, sendMemoryLimit, 0, false, false},
		{"GOMEMLIMIT and GOGC", "2GiB", "off", true, 0, 0, false, false},
		{"no hooks", "", "", false, 0, 0, false, false},
		{"quiet heap first", "", "", true, sendMemoryLimit, sendGCPercent, true, true},
		{"GOGC wins over the quiet heap", "", "50", true, sendMemoryLimit, 0, true, false},
		{"GOMEMLIMIT wins over the quiet heap", "1GiB", "", true, 0, 0, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var limit int64
			var percent int
			var calls []string // in order
			var collected func()
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
				m.SetMemoryLimit = func(b int64) int64 { limit = b; calls = append(calls, "limit"); return 0 }
				m.SetGCPercent = func(p int) int { percent = p; calls = append(calls, "gogc"); return 100 }
			}
			if tt.collects {
				m.AfterCollection = func(f func()) {
					if collected != nil {
						t.Fatal("AfterCollection called twice")
					}
					collected = f
				}
			}
			m.limitSendMemory()
			if tt.wantQuiet {
				if limit != quietHeap || percent != -1 || collected == nil {
					t.Fatalf("before a collection: limit %d, GOGC %d, hook set %v; want %d, -1, true", limit, percent, collected != nil, quietHeap)
				}
				calls = nil
				collected()
				if !slices.Equal(calls, []string{"limit", "gogc"}) {
					t.Errorf("after the collection set %v; want the limit first, then GOGC", calls)
				}
			} else if collected != nil {
				t.Error("waits for a collection it does not need")
			}
			if limit != tt.wantLimit || percent != tt.wantGCPercent {
				t.Errorf("limit %d, GOGC %d; want %d, %d", limit, percent, tt.wantLimit, tt.wantGCPercent)
			}
		})
	}
}

// TestAfterCollection: the hook apply uses runs its function once the
// collector has run.
func TestAfterCollection(t *testing.T) {
	done := make(chan struct{})
	afterCollection(func() { close(done) })
	runtime.GC()
	<-done
}
