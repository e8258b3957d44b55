package state

import "sync"

// Recorder journals entries and then folds them into a State, so memory
// never runs ahead of the journal. It is safe for concurrent use: the
// journal append (an fsync, or a database commit) runs outside the lock,
// so concurrent callers can share one sync in a backend that groups them.
type Recorder struct {
	journal Journal
	mu      sync.Mutex
	st      *State
}

// NewRecorder returns a Recorder appending to j and folding into st.
func NewRecorder(j Journal, st *State) *Recorder {
	return &Recorder{journal: j, st: st}
}

// Record appends entries to the journal and, once they are durable,
// applies them to the state.
func (r *Recorder) Record(entries ...Entry) error {
	if err := r.journal.Append(entries...); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range entries {
		if err := r.st.ApplyEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// Read calls fn with the state while no entry is being folded into it.
func (r *Recorder) Read(fn func(*State)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.st)
}
