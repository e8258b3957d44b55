package command

import (
	"fmt"
	"strings"

	"pushform/backend"
	"pushform/termtext"
)

// The clock is chosen once per run, from the service it talks to (see
// operation.Clock); the service is named once too (backend.Which): what
// is left here is saying so.

// noteRecordedService says, on stderr, that the run recorded its service
// in a state written before states recorded one.
func (m *Meta) noteRecordedService(sess *backend.Session) {
	if !sess.RecordedService || sess.Which == nil {
		return
	}
	fmt.Fprint(m.Stderr, termtext.Lines(fmt.Sprintf("Note: %s recorded no service (an earlier pushform wrote it); it now records %s, "+
		"the service of this run, and refuses runs against any other.\n", backend.Name(sess.Backend), sess.Which.Record())))
}

// lookupEnv tells a variable set but empty from one not set: from the
// Env's list of variables when it has one, else set means not empty.
func (m *Meta) lookupEnv(name string) (string, bool) {
	for i := len(m.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(m.Environ[i], "="); ok && k == name {
			return v, true
		}
	}
	v := m.Getenv(name)
	return v, v != ""
}
