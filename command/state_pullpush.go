package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"pushform/backend"
	"pushform/state"
	"pushform/state/statefile"
	"pushform/views"
)

// statePullOptions are the inputs of state pull.
type statePullOptions struct {
	*Meta
	// open opens the configured state backend.
	open func(context.Context) (backend.State, error)
}

func (m *Meta) statePull(ctx context.Context, args []string) int {
	fs := m.FlagSet("state pull")
	var sf stateFlags
	sf.bind(fs, false)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state pull", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state pull", errors.New("state pull takes no arguments; redirect its output to a file"))
	}
	return runStatePull(ctx, &statePullOptions{Meta: m, open: func(ctx context.Context) (backend.State, error) { return m.stateBackend(ctx, sf) }})
}

// runStatePull writes the backend's current state (the snapshot with its
// journal replayed) to stdout in the local file format: the bytes a
// pushform.state holds. It does not lock: it only reads, in one
// consistent read.
func runStatePull(ctx context.Context, o *statePullOptions) int {
	m := o.Meta
	if m.StdoutTerminal {
		return m.Errorf("state pull writes the state file format, which is binary: redirect it to a file, as in\n  pushform state pull > pushform.state")
	}
	be, err := o.open(ctx)
	if err != nil {
		return m.fail(err)
	}
	defer be.Close()
	// Compact: ten million targets take a few hundred MiB, not gigabytes.
	s, err := readCompact(be)
	if err != nil {
		return m.fail(err)
	}
	if s == nil {
		return m.Errorf("no state in %s", be)
	}
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, s); err != nil {
		return m.Errorf("encoding the state: %v", err)
	}
	if _, err := m.Stdout.Write(buf.Bytes()); err != nil {
		return m.Errorf("writing the state: %v", err)
	}
	return ExitOK
}

// statePushOptions are the inputs of state push.
type statePushOptions struct {
	*Meta
	// open opens the configured state backend.
	open func(context.Context) (backend.State, error)
	// file is the local state file to store, resolved.
	file        string
	force       bool
	lockTimeout time.Duration
}

func (m *Meta) statePush(ctx context.Context, args []string) int {
	fs := m.FlagSet("state push")
	var sf stateFlags
	o := &statePushOptions{Meta: m}
	sf.bind(fs, true)
	fs.BoolVar(&o.force, "force", false, "replace a state of another lineage, or a newer one, in the backend (its delivery records are kept)")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state push", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("state push", errors.New("state push takes exactly one argument, a local state file"))
	}
	o.file = m.path(fs.Arg(0))
	o.lockTimeout = sf.lockTimeout
	o.open = func(ctx context.Context) (backend.State, error) { return m.stateBackend(ctx, sf) }
	return runStatePush(ctx, o)
}

// runStatePush stores a local state file as the backend's state, under the
// backend's lock. It refuses to replace a state of another lineage, a newer
// serial of the same one, or the same serial with other content (two
// copies that went their own ways) unless --force. The backend's serial
// grows by one, as with every write, and its lineage is kept, so a plan
// saved from the state replaced, or from another copy, is refused as stale.
func runStatePush(ctx context.Context, o *statePushOptions) int {
	m := o.Meta
	src, err := readLocalState(ctx, o.file)
	if err != nil {
		return m.fail(err)
	}
	be, err := o.open(ctx)
	if err != nil {
		return m.fail(err)
	}
	sess, err := backend.Open(ctx, nil, be, backend.SessionOptions{Operation: "state push", LockTimeout: o.lockTimeout})
	if err != nil {
		return m.fail(err)
	}
	m.warnStaleLock(sess.StaleLock)
	code := m.statePushLocked(sess, src, o)
	if err := sess.Close(); err != nil {
		return m.fail(err)
	}
	return code
}

func (m *Meta) statePushLocked(sess *backend.Session, src *state.State, o *statePushOptions) int {
	cur := sess.State
	out := *src
	added := 0
	if cur != nil {
		same, err := sameState(cur, src)
		if err != nil {
			return m.Errorf("%v", err)
		}
		const keep = "\n  To keep a copy of it first: pushform state pull > backup.state"
		switch {
		case cur.Lineage != src.Lineage && !o.force:
			return m.Errorf("%s holds another state (lineage %s, serial %d) than %s (lineage %s, serial %d): pushing would replace it; pass --force to do so.%s",
				sess.Backend, cur.Lineage, cur.Serial, o.file, src.Lineage, src.Serial, keep)
		case cur.Lineage == src.Lineage && cur.Serial > src.Serial && !o.force:
			return m.Errorf("%s holds a newer serial of this state (%d) than %s (%d): pushing would undo the writes made since; pull it instead, or pass --force to replace it.%s",
				sess.Backend, cur.Serial, o.file, src.Serial, keep)
		case same:
			fmt.Fprintf(m.Stdout, "%s already holds this state (serial %d); nothing was pushed.\n", sess.Backend, cur.Serial)
			return ExitOK
		case cur.Lineage == src.Lineage && cur.Serial == src.Serial && !o.force:
			return m.Errorf("%s holds serial %d of this state, as %s does, but with other content: the two copies went their own ways; pass --force to replace the backend's.%s",
				sess.Backend, cur.Serial, o.file, keep)
		}
		// Written as the next serial of the stored state: every check a
		// write passes (lineage, serial) holds, and saved plans of both
		// copies become stale.
		out.Lineage, out.Serial = cur.Lineage, cur.Serial
		// A ledger only grows: what the backend's state recorded reached
		// whom stays, whichever addresses the pushed one holds.
		added = out.MergeLedger(cur, time.Now().UTC())
	}
	sess.State = &out
	if err := sess.Persist(); err != nil {
		return m.Errorf("%v", err)
	}
	addrs := views.Count(len(out.Messages)) + " addresses"
	if len(out.Messages) == 1 {
		addrs = "1 address"
	}
	fmt.Fprintf(m.Stdout, "Pushed %s to %s: serial %d, lineage %s, %s.\n", o.file, sess.Backend, out.Serial, out.Lineage, addrs)
	if cur != nil {
		fmt.Fprintf(m.Stdout, "Delivery records: %s had %s, %s had %s; %s kept from %s, %s in all (a ledger only grows: see pushform state prune).\n",
			o.file, views.Count(src.RecordCount()), sess.Backend, views.Count(cur.RecordCount()), views.Count(added), sess.Backend, views.Count(out.RecordCount()))
	}
	if cur != nil && cur.Lineage != src.Lineage {
		fmt.Fprintf(m.Stdout, "The backend keeps the lineage of the state it replaced (%s; %s had %s), so plans saved from either are refused as stale.\n", cur.Lineage, o.file, src.Lineage)
	}
	return ExitOK
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
