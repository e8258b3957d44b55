package operation

import (
	"context"

	"pushform/backend"
	"pushform/state/local"
	"pushform/views"
)

// journalRepairer is a backend whose journal is a file that can be cut:
// the local file backend.
type journalRepairer interface {
	Repair(force bool) (*local.RepairReport, error)
}

// StateRepair cuts a damaged local journal after its last intact line,
// under the state lock, and once it changed something reads how the state
// reads after. The state is not read before: a damaged journal is why it
// cannot be. A backend without a journal file (PostgreSQL) has nothing to
// repair. What Repair found, its error included, is in the result; the
// error returned is the backend's (opening, locking, unlocking).
func StateRepair(ctx context.Context, o Options, force bool) (*views.StateRepair, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	rp, ok := be.(journalRepairer)
	if !ok {
		return &views.StateRepair{Backend: be.String(), NoJournal: true}, nil
	}
	id, err := backend.Lock(ctx, be, o.Operation, o.LockTimeout)
	if err != nil {
		return nil, err
	}
	if info, stale := be.StaleLock(); stale {
		o.Warnings.StaleLock(&info)
	}
	rep, err := rp.Repair(force)
	res := &views.StateRepair{Backend: be.String(), Report: rep, Err: err}
	if err == nil && (rep.Repaired || rep.Appended > 0) {
		res.After, res.ReadErr = be.Read()
	}
	return res, be.Unlock(id)
}
