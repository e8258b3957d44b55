package pg

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"pushform/state"
	"pushform/state/statefile"
)

// Read implements state.Reader: the snapshot with the journal rows that
// extend it replayed in order, read in one transaction.
func (m *Manager) Read() (*state.State, error) { return m.read(false) }

// ReadCompact is Read returning a compact state (see state.State.Compact),
// as plan and apply read it: no map of targets.
func (m *Manager) ReadCompact() (*state.State, error) { return m.read(true) }

func (m *Manager) read(compact bool) (*state.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := m.call()
	defer cancel()
	var (
		s   *state.State
		h   state.Head
		bad error // the stored state's fault, not the driver's
	)
	err := pgx.BeginTxFunc(ctx, m.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		s, h = nil, state.Head{Known: true}
		var (
			serial   int64
			env      string
			snapshot []byte
		)
		err := tx.QueryRow(ctx, m.q.readState, m.name).Scan(&h.Lineage, &serial, &env, &snapshot)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		h.Exists, h.Serial = true, uint64(serial)
		if snapshot != nil {
			decode := statefile.Decode
			if compact {
				decode = statefile.DecodeCompact
			}
			if s, err = decode(bytes.NewReader(snapshot)); err != nil {
				bad = fmt.Errorf("%s: the snapshot at serial %d is corrupt: %v", m, serial, err)
				return bad
			}
			if s.Lineage != h.Lineage || s.Serial != h.Serial {
				bad = fmt.Errorf("%s: the snapshot holds lineage %q serial %d, but its row says lineage %q serial %d", m, s.Lineage, s.Serial, h.Lineage, h.Serial)
				return bad
			}
		}
		rows, err := tx.Query(ctx, m.q.readJournal, m.name, serial)
		if err != nil {
			return err
		}
		defer rows.Close()
		var raw []byte
		for n := 1; rows.Next(); n++ {
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			e, err := statefile.DecodeEntry(raw)
			if err != nil {
				bad = fmt.Errorf("%s: journal entry %d of serial %d is corrupt: %v", m, n, serial, err)
				return bad
			}
			if s == nil {
				s = &state.State{Version: state.FormatVersion, Lineage: h.Lineage, Serial: h.Serial, Environment: env, Messages: map[string]*state.Message{}, Compact: compact}
			}
			if err := s.ApplyEntry(e); err != nil {
				bad = fmt.Errorf("%s: replaying journal entry %d of serial %d: %w", m, n, serial, err)
				return bad
			}
		}
		return rows.Err()
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, m.opErr("reading", err)
	}
	m.head = h
	return s, nil
}

// Append implements state.Journal. The entries of one call become rows of
// one statement, committed before Append returns (outcomes without waiting
// for the WAL flush: the next synchronous commit makes them durable). Calls that arrive while
// another call's statement is under way form a group that shares the next
// statement and commit (group commit), so concurrent appenders pay for far
// fewer commits than calls.
//
// The rows are written only if the stored snapshot is still the one this
// Manager last read or persisted (or, before either, the one it finds at
// its first Append): otherwise Append writes nothing and returns an error
// wrapping state.ErrStaleSerial or state.ErrLineage. A run that starts from
// an old state can thus not record, and so not send, anything.
func (m *Manager) Append(entries ...state.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if m.roErr != nil {
		return m.roErr
	}
	rows := make([]journalRow, len(entries))
	for i, e := range entries {
		rows[i] = journalRow{entry: statefile.AppendEntry(nil, e), sync: state.NeedsSync(e)}
	}
	return m.commit.Do(&m.mu, rows, m.appendLocked)
}

// journalRow is an entry to append, and whether its commit must wait for
// the WAL flush (state.NeedsSync): outcomes need not.
type journalRow struct {
	entry []byte
	sync  bool
}

// appendLocked writes group in one statement, committed synchronously
// unless every row is an outcome; m.mu is held.
func (m *Manager) appendLocked(group []journalRow) error {
	rows := make([][]byte, len(group))
	query := m.q.appendRowsAsync
	for i, r := range group {
		rows[i] = r.entry
		if r.sync {
			query = m.q.appendRows
		}
	}
	if err := m.usable(); err != nil {
		return err
	}
	ctx, cancel := m.call()
	defer cancel()
	if !m.head.Known {
		h, err := m.storedHead(ctx)
		if err != nil {
			return err
		}
		m.head = h
	}
	if !m.head.Exists {
		lineage := state.NewLineage()
		tag, err := m.conn.Exec(ctx, m.q.appendNew, m.name, lineage, rows)
		if err != nil {
			return m.opErr("writing journal entries", err)
		}
		if tag.RowsAffected() != int64(len(rows)) {
			return m.staleErr(ctx)
		}
		m.head = state.Head{Known: true, Exists: true, Lineage: lineage}
		return nil
	}
	tag, err := m.conn.Exec(ctx, query, m.name, m.head.Lineage, int64(m.head.Serial), rows)
	if err != nil {
		return m.opErr("writing journal entries", err)
	}
	if tag.RowsAffected() != int64(len(rows)) {
		return m.staleErr(ctx)
	}
	return nil
}

// storedHead reads the lineage and serial stored now.
func (m *Manager) storedHead(ctx context.Context) (state.Head, error) {
	h := state.Head{Known: true}
	var serial int64
	err := m.conn.QueryRow(ctx, m.q.head, m.name).Scan(&h.Lineage, &serial)
	if errors.Is(err, pgx.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, m.opErr("reading", err)
	}
	h.Exists, h.Serial = true, uint64(serial)
	return h, nil
}

// staleErr explains why the stored state is not the one this Manager
// knows, after an Append that wrote nothing.
func (m *Manager) staleErr(ctx context.Context) error {
	now, err := m.storedHead(ctx)
	if err != nil {
		return err
	}
	if err := m.head.Stale(m.String(), now); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s is at serial %d, this run read serial %d; another run wrote it since; these entries were not recorded", state.ErrStaleSerial, m, now.Serial, m.head.Serial)
}

// Persist implements state.Persister: in one transaction it checks the
// stored lineage and serial, stores s as the snapshot with the serial plus
// one and deletes the journal rows it replaces.
func (m *Manager) Persist(s *state.State) error {
	if m.roErr != nil {
		return m.roErr
	}
	out := *s
	out.Version = state.FormatVersion
	out.Serial = s.Serial + 1
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, &out); err != nil {
		return fmt.Errorf("%s: encoding the state: %w", m, err)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return err
	}
	ctx, cancel := m.call()
	defer cancel()
	var refused error
	err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		var lineage string
		var serial int64
		err := tx.QueryRow(ctx, m.q.lockState, m.name).Scan(&lineage, &serial)
		if errors.Is(err, pgx.ErrNoRows) {
			tag, err := tx.Exec(ctx, m.q.createState, m.name, out.Lineage, int64(out.Serial), out.Environment, buf.Bytes())
			if err == nil && tag.RowsAffected() == 0 {
				// Created by another Manager since the SELECT: refuse as
				// if its row had been there (roll back, then explain).
				refused = fmt.Errorf("%w: %s was created by another run while this one was writing it", state.ErrStaleSerial, m)
				return refused
			}
			return err
		}
		if err != nil {
			return err
		}
		switch {
		case lineage != s.Lineage:
			refused = fmt.Errorf("%w: %s has lineage %q, this state has %q", state.ErrLineage, m, lineage, s.Lineage)
			return refused
		case uint64(serial) != s.Serial:
			refused = fmt.Errorf("%w: %s has serial %d, this state was read at serial %d", state.ErrStaleSerial, m, serial, s.Serial)
			return refused
		}
		if _, err := tx.Exec(ctx, m.q.updateState, m.name, out.Lineage, int64(out.Serial), out.Environment, buf.Bytes()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, m.q.clearJournal, m.name)
		return err
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return m.opErr("writing the state", err)
	}
	s.Version = state.FormatVersion
	s.Serial = out.Serial
	m.head = state.HeadOf(s)
	return nil
}
