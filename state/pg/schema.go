package pg

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ddl creates the tables of a schema; %[1]s is the quoted schema name.
//
//   - states: one row per state. snapshot is the whole state in the
//     statefile format (the bytes of a local pushform.state), NULL while a
//     state has journal entries but was never persisted. serial grows by one
//     with every Persist; next_seq numbers the journal rows since.
//   - journal: the entries appended since the snapshot, one row each, in
//     the statefile binary entry encoding. serial is the snapshot serial the
//     entry extends: Read replays only the rows of the current one.
//   - locks: who holds a state's advisory lock, for the message of a refused
//     run. A row whose holder's connection is gone is a stale lock.
//
// Values are stored uncompressed (STORAGE EXTERNAL): the encodings are
// already compact, and compressing megabytes on every Persist would cost
// CPU time for little.
const ddl = `
CREATE TABLE IF NOT EXISTS %[1]s.states (
	name        text PRIMARY KEY,
	lineage     text NOT NULL,
	serial      bigint NOT NULL CHECK (serial >= 0),
	environment text NOT NULL,
	snapshot    bytea,
	next_seq    bigint NOT NULL DEFAULT 0,
	updated_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE %[1]s.states ALTER COLUMN snapshot SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS %[1]s.journal (
	state_name text NOT NULL,
	serial     bigint NOT NULL,
	seq        bigint NOT NULL,
	entry      bytea NOT NULL,
	PRIMARY KEY (state_name, serial, seq)
);
ALTER TABLE %[1]s.journal ALTER COLUMN entry SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS %[1]s.locks (
	state_name  text PRIMARY KEY,
	lock_id     text NOT NULL,
	who         text NOT NULL,
	operation   text NOT NULL,
	created     timestamptz NOT NULL,
	pid         integer NOT NULL,
	backend_pid integer NOT NULL
);
`

// queries are the statements of one schema.
type queries struct {
	schemaQuoted string
	statesTable  string // quoted, for to_regclass
	tablesExist  string
	ddl          string

	readState, readJournal, head string
	appendRows, appendNew        string
	appendRowsAsync              string // appendRows committed without waiting for the WAL flush
	lockState, createState       string
	updateState, clearJournal    string

	readLock, writeLock, deleteLock string
}

func newQueries(schema string) queries {
	s := pgx.Identifier{schema}.Sanitize()
	f := func(q string) string { return strings.ReplaceAll(q, "S.", s+".") }
	return queries{
		schemaQuoted: s,
		statesTable:  s + ".states",
		tablesExist:  `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL`,
		ddl:          fmt.Sprintf(ddl, s),

		readState:   f(`SELECT lineage, serial, environment, snapshot FROM S.states WHERE name = $1`),
		readJournal: f(`SELECT entry FROM S.journal WHERE state_name = $1 AND serial = $2 ORDER BY seq`),
		head:        f(`SELECT lineage, serial FROM S.states WHERE name = $1`),
		// One statement, so one round trip and atomic without BEGIN: it
		// inserts the rows only when the stored snapshot is the one this
		// Manager knows, and takes their numbers from the states row,
		// whose row lock also orders it against a concurrent Persist.
		appendRows: f(`WITH s AS (
	UPDATE S.states SET next_seq = next_seq + cardinality($4::bytea[])
	WHERE name = $1 AND lineage = $2 AND serial = $3
	RETURNING serial, next_seq - cardinality($4::bytea[]) AS base
)
INSERT INTO S.journal (state_name, serial, seq, entry)
SELECT $1, s.serial, s.base + u.ord, u.entry
FROM s, unnest($4::bytea[]) WITH ORDINALITY AS u(entry, ord)`),
		// Outcomes only: the commit does not wait for its WAL to reach the
		// disk (set_config(..., true) lasts this statement's transaction),
		// the next synchronous commit (an intent's) flushes it with its
		// own, WAL being written in order. See state.NeedsSync.
		appendRowsAsync: f(`WITH c AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)),
s AS (
	UPDATE S.states SET next_seq = next_seq + cardinality($4::bytea[])
	WHERE name = $1 AND lineage = $2 AND serial = $3
	RETURNING serial, next_seq - cardinality($4::bytea[]) AS base
)
INSERT INTO S.journal (state_name, serial, seq, entry)
SELECT $1, s.serial, s.base + u.ord, u.entry
FROM c, s, unnest($4::bytea[]) WITH ORDINALITY AS u(entry, ord)`),
		// The first entries of a state never persisted create its row.
		appendNew: f(`WITH s AS (
	INSERT INTO S.states (name, lineage, serial, environment, snapshot, next_seq)
	VALUES ($1, $2, 0, '', NULL, cardinality($3::bytea[]))
	ON CONFLICT (name) DO NOTHING
	RETURNING serial
)
INSERT INTO S.journal (state_name, serial, seq, entry)
SELECT $1, s.serial, u.ord, u.entry
FROM s, unnest($3::bytea[]) WITH ORDINALITY AS u(entry, ord)`),
		lockState:    f(`SELECT lineage, serial FROM S.states WHERE name = $1 FOR UPDATE`),
		createState:  f(`INSERT INTO S.states (name, lineage, serial, environment, snapshot) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING`),
		updateState:  f(`UPDATE S.states SET lineage = $2, serial = $3, environment = $4, snapshot = $5, next_seq = 0, updated_at = now() WHERE name = $1`),
		clearJournal: f(`DELETE FROM S.journal WHERE state_name = $1`),

		readLock:   f(`SELECT lock_id, who, operation, created, pid, backend_pid FROM S.locks WHERE state_name = $1`),
		writeLock:  f(`INSERT INTO S.locks (state_name, lock_id, who, operation, created, pid, backend_pid) VALUES ($1, $2, $3, $4, $5, $6, pg_backend_pid()) ON CONFLICT (state_name) DO UPDATE SET lock_id = EXCLUDED.lock_id, who = EXCLUDED.who, operation = EXCLUDED.operation, created = EXCLUDED.created, pid = EXCLUDED.pid, backend_pid = EXCLUDED.backend_pid`),
		deleteLock: f(`DELETE FROM S.locks WHERE state_name = $1 AND lock_id = $2`),
	}
}

// ensureSchema creates the schema and its tables unless they exist. Two
// processes racing to create them are serialised by a transaction-scoped
// advisory lock: CREATE ... IF NOT EXISTS alone fails the loser of a race
// with a unique violation.
func (m *Manager) ensureSchema() error {
	ctx, cancel := m.call()
	defer cancel()
	s := pgx.Identifier{m.schema}.Sanitize()
	tables := []any{s + ".states", s + ".journal", s + ".locks"}
	var ok bool
	if err := m.conn.QueryRow(ctx, m.q.tablesExist, tables...).Scan(&ok); err != nil {
		return m.opErr("checking the schema", err)
	}
	if ok {
		return nil
	}
	err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("schema", m.schema)); err != nil {
			return err
		}
		// CREATE SCHEMA needs the CREATE privilege on the database even
		// when the schema exists: only ask for it when it does not.
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, m.schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+s); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, m.q.ddl)
		return err
	})
	if err != nil {
		return m.opErr("creating schema "+m.schema, err)
	}
	return nil
}
