package local_test

import (
	"testing"

	"pushform/state"
	"pushform/state/statetest"
)

// TestFileManagerCompact runs the backend's tests reading compact states.
func TestFileManagerCompact(t *testing.T) {
	statetest.TestManager(t, func(t *testing.T) state.Manager { return statetest.Compact(t, newFile(t)) })
}
