package operation

import (
	"context"
	"fmt"
	"strings"

	"pushform/backend"
	"pushform/state"
)

// RemoveResult is what StateRemove removed.
type RemoveResult struct {
	// Removed are the addresses removed, each once, in the order given.
	Removed []string
	// Serial is the state's serial after.
	Serial uint64
}

// StateRemove removes addrs from the state, under the state lock, as one
// forget entry. Nothing is sent. It refuses, removing nothing, when an
// address is not in the state. The result is set once the state is saved,
// even when releasing the lock then failed.
func StateRemove(ctx context.Context, o Options, addrs []string) (*RemoveResult, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	var res *RemoveResult
	err = o.locked(ctx, nil, be, false, func(sess *backend.Session) error {
		var err error
		res, err = o.remove(sess, addrs)
		return err
	})
	return res, err
}

func (o *Options) remove(sess *backend.Session, addrs []string) (*RemoveResult, error) {
	s := sess.State
	if s == nil {
		return nil, fmt.Errorf("no state at %s", sess.Backend)
	}
	var missing []string
	forget := state.Entry{Type: state.EntryForget, Time: o.clock()().UTC()}
	seen := map[string]bool{}
	for _, a := range addrs {
		if s.Messages[a] == nil {
			missing = append(missing, a)
		} else if !seen[a] {
			seen[a] = true
			forget.Items = append(forget.Items, state.Item{Address: a})
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no address %s in the state; nothing was removed", strings.Join(missing, ", "))
	}
	if err := s.ApplyEntry(forget); err != nil {
		return nil, err
	}
	if err := sess.Persist(); err != nil {
		return nil, err
	}
	res := &RemoveResult{Serial: s.Serial}
	for _, it := range forget.Items {
		res.Removed = append(res.Removed, it.Address)
	}
	return res, nil
}
