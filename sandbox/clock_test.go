package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClockSavedWithDevices: the simulated clock SetClock advances is
// written with the devices, read back by LoadDevices and ReadClock, never
// goes backwards, and a file without one (or no file) reads as none.
func TestClockSavedWithDevices(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultDevicesFile)
	if at, err := ReadClock(path); err != nil || !at.IsZero() {
		t.Fatalf("no file: ReadClock = %v, %v", at, err)
	}
	s := New(mustSeed(t, conformanceSeed), Options{})
	if err := s.SaveDevices(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), `"clock"`) {
		t.Fatalf("a clock never set was saved: %s", b)
	}
	if at, err := ReadClock(path); err != nil || !at.IsZero() {
		t.Fatalf("no clock: ReadClock = %v, %v", at, err)
	}
	day2 := time.Date(2030, 3, 2, 9, 0, 0, 0, time.UTC)
	s.SetClock(day2)
	s.SetClock(day2.Add(-time.Hour)) // ignored: never backwards
	if err := s.SaveDevices(path); err != nil {
		t.Fatal(err)
	}
	if at, err := ReadClock(path); err != nil || !at.Equal(day2) {
		t.Fatalf("ReadClock = %v, %v, want %v", at, err, day2)
	}
	loaded := New(mustSeed(t, conformanceSeed), Options{})
	if err := loaded.LoadDevices(path); err != nil {
		t.Fatal(err)
	}
	if got := loaded.Clock(); !got.Equal(day2) {
		t.Fatalf("loaded clock %v, want %v", got, day2)
	}
	// Saved again unchanged (a run that only plans keeps the time).
	if err := loaded.SaveDevices(path); err != nil {
		t.Fatal(err)
	}
	if at, _ := ReadClock(path); !at.Equal(day2) {
		t.Fatalf("after a save without SetClock: %v, want %v", at, day2)
	}
}
