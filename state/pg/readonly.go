package pg

import (
	"fmt"
	"strings"
)

// A role that may only read (granted USAGE on the schema and SELECT on its
// tables, as a pull request's plan job is) works for everything that
// reads: Open creates nothing when the tables exist, and Read takes no lock
// and writes nothing. Everything that writes is refused up front, with what
// the role lacks.

// checkWritable finds out whether this connection may write the state;
// m.mu is held or m is not shared yet.
func (m *Manager) checkWritable() error {
	ctx, cancel := m.call()
	defer cancel()
	s := m.q.schemaQuoted
	var (
		role     string
		readOnly bool
		grants   [8]bool
	)
	err := m.conn.QueryRow(ctx, `SELECT current_user, current_setting('transaction_read_only') = 'on',
  has_table_privilege($1, 'SELECT'), has_table_privilege($1, 'INSERT'), has_table_privilege($1, 'UPDATE'),
  has_table_privilege($2, 'INSERT'), has_table_privilege($2, 'DELETE'),
  has_table_privilege($3, 'INSERT'), has_table_privilege($3, 'UPDATE'), has_table_privilege($3, 'DELETE')`,
		s+".states", s+".journal", s+".locks").Scan(&role, &readOnly,
		&grants[0], &grants[1], &grants[2], &grants[3], &grants[4], &grants[5], &grants[6], &grants[7])
	if err != nil {
		return m.opErr("checking the role's privileges", err)
	}
	names := []string{"SELECT on states", "INSERT on states", "UPDATE on states", "INSERT on journal", "DELETE on journal",
		"INSERT on locks", "UPDATE on locks", "DELETE on locks"}
	var missing []string
	for i, ok := range grants {
		if !ok {
			missing = append(missing, names[i])
		}
	}
	why := ""
	switch {
	case readOnly:
		why = "the server only serves reads (a standby, or default_transaction_read_only)"
	case len(missing) > 0:
		why = "it lacks " + strings.Join(missing, ", ")
	default:
		return nil
	}
	m.roErr = fmt.Errorf("%s: the database role %s can only read this state (%s). Plan, show, history and state list/show work with it; "+
		"apply and the commands that change the state need a role that may write it (the GRANTs are in docs/backends/pg.md, \"A role that can only read\")",
		m, m.red.quote(role), why)
	return nil
}

// ReadOnly returns why this Manager cannot write the state (a role granted
// only SELECT, a read-only server), nil when it can. A read-only Manager
// reads without a lock; Lock, Append, Persist and ForceUnlock return this
// error.
func (m *Manager) ReadOnly() error { return m.roErr }
