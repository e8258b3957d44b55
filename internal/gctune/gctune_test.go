package gctune

import (
	"runtime"
	"slices"
	"testing"
)

// TestForSending: the soft memory limit is set unless GOMEMLIMIT chose
// one, with it GOGC unless GOGC chose one; with neither, the heap first
// grows to quietHeap with the collector off, and both goals are set after
// the first collection, the limit before GOGC.
func TestForSending(t *testing.T) {
	for _, tt := range []struct {
		name           string
		gomemlim, gogc string
		wantLimit      int64 // 0: not set
		wantGCPercent  int   // 0: not set
		wantQuiet      bool  // quietHeap and GOGC off until a collection
	}{
		{"neither set", "", "", sendMemoryLimit, sendGCPercent, true},
		{"GOMEMLIMIT wins", "2GiB", "", 0, 0, false},
		{"GOGC wins", "", "50", sendMemoryLimit, 0, false},
		{"GOMEMLIMIT and GOGC", "2GiB", "off", 0, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var limit int64
			var percent int
			var calls []string // in order
			var collected func()
			g := goals{
				setMemoryLimit: func(b int64) int64 { limit = b; calls = append(calls, "limit"); return 0 },
				setGCPercent:   func(p int) int { percent = p; calls = append(calls, "gogc"); return 100 },
				afterCollection: func(f func()) {
					if collected != nil {
						t.Fatal("afterCollection called twice")
					}
					collected = f
				},
			}
			g.forSending(func(k string) string {
				switch k {
				case "GOMEMLIMIT":
					return tt.gomemlim
				case "GOGC":
					return tt.gogc
				}
				return ""
			})
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

// TestAfterCollection: the hook runs its function once the collector has
// run.
func TestAfterCollection(t *testing.T) {
	done := make(chan struct{})
	afterCollection(func() { close(done) })
	runtime.GC()
	<-done
}
