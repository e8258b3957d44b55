package views

import (
	"fmt"
	"io"
	"time"

	"pushform/state"
	"pushform/termtext"
)

// Warnings shows what an operation warns about as it goes, on stderr: the
// lock a holder that ended without unlocking left behind, and what --force
// lets through. A nil *Warnings shows nothing.
type Warnings struct {
	w io.Writer
}

// NewWarnings returns warnings written to w.
func NewWarnings(w io.Writer) *Warnings {
	return &Warnings{w: w}
}

// StaleLock reports the lock info a holder that ended without unlocking
// left behind, once this run holds the lock; nil info says nothing. The
// lock died with that holder, so the run goes on: the warning says who it
// was, and that its journal is read back.
func (v *Warnings) StaleLock(info *state.LockInfo) {
	if v == nil || info == nil {
		return
	}
	fmt.Fprint(v.w, termtext.Lines(fmt.Sprintf("Warning: the last holder of the state lock ended without releasing it: %s (pid %d) running %s since %s, lock id %s.\n"+
		"  It was killed or crashed; its lock died with it, so this run goes on, and what it\n"+
		"  recorded in the journal is read back. (pushform force-unlock %s clears such a record without running anything.)\n",
		info.Who, info.Pid, info.Operation, info.Created.UTC().Format(time.RFC3339), info.ID, info.ID)))
}

// Warn writes one warning line.
func (v *Warnings) Warn(msg string) {
	if v == nil {
		return
	}
	fmt.Fprintf(v.w, "Warning: %s\n", msg)
}
