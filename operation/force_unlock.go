package operation

import (
	"context"

	"pushform/state"
)

// ForceUnlock removes the lock information with id that a run which ended
// without unlocking left behind, once confirm (nil: none asked) is given
// the backend's name and says yes. The lock itself died with its process
// (or its connection): only the record goes.
func ForceUnlock(ctx context.Context, o Options, id string, confirm func(where string) (bool, error)) (*state.LockInfo, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	if confirm != nil {
		if ok, err := confirm(be.String()); !ok {
			return nil, err
		}
	}
	info, err := be.ForceUnlock(id)
	if err != nil {
		return nil, err
	}
	return &info, nil
}
