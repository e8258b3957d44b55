package operation

import (
	"bytes"
	"context"
	"fmt"

	"pushform/backend"
	"pushform/state"
	"pushform/state/statefile"
	"pushform/views"
)

// StatePush stores the local state file (resolved) as the backend's
// state, under the backend's lock. It refuses to replace a state of
// another lineage, a newer serial of the same one, or the same serial
// with other content (two copies that went their own ways) unless force.
// The backend's serial grows by one, as with every write, and its lineage
// is kept, so a plan saved from the state replaced, or from another copy,
// is refused as stale. The result is set once the state is saved (or
// found the same), even when releasing the lock then failed.
func StatePush(ctx context.Context, o Options, file string, force bool) (*views.StatePush, error) {
	src, err := readLocalState(ctx, file)
	if err != nil {
		return nil, err
	}
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	var res *views.StatePush
	err = o.locked(ctx, nil, be, false, func(sess *backend.Session) error {
		var err error
		res, err = o.push(sess, src, file, force)
		return err
	})
	return res, err
}

func (o *Options) push(sess *backend.Session, src *state.State, file string, force bool) (*views.StatePush, error) {
	cur := sess.State
	out := *src
	res := &views.StatePush{File: file, Backend: sess.Backend.String(), Pushed: src, Replaced: cur, Stored: &out}
	if cur != nil {
		same, err := sameState(cur, src)
		if err != nil {
			return nil, err
		}
		const keep = "\n  To keep a copy of it first: pushform state pull > backup.state"
		switch {
		case cur.Lineage != src.Lineage && !force:
			return nil, fmt.Errorf("%s holds another state (lineage %s, serial %d) than %s (lineage %s, serial %d): pushing would replace it; pass --force to do so.%s",
				sess.Backend, cur.Lineage, cur.Serial, file, src.Lineage, src.Serial, keep)
		case cur.Lineage == src.Lineage && cur.Serial > src.Serial && !force:
			return nil, fmt.Errorf("%s holds a newer serial of this state (%d) than %s (%d): pushing would undo the writes made since; pull it instead, or pass --force to replace it.%s",
				sess.Backend, cur.Serial, file, src.Serial, keep)
		case same:
			res.Same = true
			return res, nil
		case cur.Lineage == src.Lineage && cur.Serial == src.Serial && !force:
			return nil, fmt.Errorf("%s holds serial %d of this state, as %s does, but with other content: the two copies went their own ways; pass --force to replace the backend's.%s",
				sess.Backend, cur.Serial, file, keep)
		}
		// Written as the next serial of the stored state: every check a
		// write passes (lineage, serial) holds, and saved plans of both
		// copies become stale.
		out.Lineage, out.Serial = cur.Lineage, cur.Serial
		// A ledger only grows: what the backend's state recorded reached
		// whom stays, whichever addresses the pushed one holds.
		res.Added = out.MergeLedger(cur, o.clock()().UTC())
	}
	sess.State = &out
	if err := sess.Persist(); err != nil {
		return nil, err
	}
	return res, nil
}

// readLocalState reads a local state file (with its journal, if a run left
// one) through the local backend.
func readLocalState(ctx context.Context, path string) (*state.State, error) {
	f, err := backend.OpenState(ctx, backend.StateOptions{Path: path})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := f.Read()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no state in %s", path)
	}
	return s, nil
}

// sameState reports whether two states hold the same lineage, serial and
// content, comparing their encodings.
func sameState(a, b *state.State) (bool, error) {
	var ea, eb bytes.Buffer
	if err := statefile.Encode(&ea, a); err != nil {
		return false, err
	}
	if err := statefile.Encode(&eb, b); err != nil {
		return false, err
	}
	return bytes.Equal(ea.Bytes(), eb.Bytes()), nil
}
