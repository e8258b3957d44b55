package pg

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Every call to the server has a deadline, so that a lost network or a
// hung server ends a run with an error naming what it waited for.
const (
	// callMargin is what a call may take beyond statement_timeout: the
	// network's share. The server cancels a slow statement first, with its
	// own message.
	callMargin = 2 * time.Second
	// stopGrace is how long each call may still take once the run was
	// interrupted (Ctrl-C): long enough to save the work in progress when
	// the server answers, short enough that the command ends within
	// seconds when it does not.
	stopGrace = 5 * time.Second
)

// call returns the context of one operation on the server: the statement
// deadline plus callMargin, cut to stopGrace from the moment the run's
// context (given to Open) is done.
func (m *Manager) call() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), m.t.Statement+callMargin)
	if m.stop == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(m.stop, func() {
		t := time.AfterFunc(stopGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() { stop(); cancel() }
}

// interrupted reports whether the run's context is done.
func (m *Manager) interrupted() bool { return m.stop != nil && m.stop.Err() != nil }

// isTimeout reports whether err is a network or context deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || (errors.As(err, &ne) && ne.Timeout())
}

// opErr is dbErr, saying what the run waited for when it waited too long:
// the server (no answer within the deadline), a statement the server
// cancelled, or a row another transaction holds (named, with the statement
// that ends it). m.mu is held.
func (m *Manager) opErr(op string, err error) error {
	var pe *pgconn.PgError
	if isTimeout(err) && m.conn != nil {
		// The driver would first send a cancel request and say goodbye,
		// for up to 15 s, before closing the socket: close it now, so the
		// server (or the proxy before it) sees this end go at once, and
		// with it releases the lock.
		m.conn.PgConn().Conn().Close()
	}
	switch {
	case errors.As(err, &pe) && pe.Code == "55P03": // lock_not_available
		return &dbError{msg: fmt.Sprintf("%s: %s: waited lock_timeout (%s) for the state's row, which another transaction holds%s",
			m, op, m.t.Lock, m.rowHolders())}
	case errors.As(err, &pe) && pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout"):
		return &dbError{msg: fmt.Sprintf("%s: %s: the statement ran longer than statement_timeout (%s) and the server cancelled it; raise statement_timeout in the backend block if the state is that large",
			m, op, m.t.Statement)}
	case isTimeout(err) && m.interrupted():
		return &dbError{msg: fmt.Sprintf("%s: %s: interrupted, and the server did not answer within %s; the connection is closed, and with it this run's lock on the state",
			m, op, stopGrace), errs: []error{context.Canceled}}
	case isTimeout(err):
		m.lost = &dbError{msg: fmt.Sprintf("%s: %s: the server did not answer within %s (statement_timeout %s, plus %s for the network); the connection is closed, and with it this run's lock on the state",
			m, op, m.t.Statement+callMargin, m.t.Statement, callMargin), errs: []error{context.DeadlineExceeded}}
		return m.lost
	}
	return m.dbErr(op, err)
}

// rowHolders names the sessions with a transaction open on the states
// table (a BEGIN; SELECT ... FOR UPDATE left open, say), and how to end
// them; "" when none can be read. m.mu is held.
func (m *Manager) rowHolders() string {
	if m.conn == nil || m.conn.IsClosed() {
		return ""
	}
	ctx, cancel := m.call()
	defer cancel()
	rows, err := m.conn.Query(ctx, `SELECT a.pid, coalesce(a.usename, ''), coalesce(a.application_name, ''), coalesce(a.state, ''), a.xact_start
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'relation' AND l.relation = to_regclass($1) AND l.granted AND l.pid <> pg_backend_pid()
  AND l.mode <> 'AccessShareLock'
ORDER BY a.xact_start NULLS LAST, a.pid LIMIT 5`, m.q.statesTable)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var parts []string
	var first int32
	for rows.Next() {
		var (
			pid                  int32
			user, app, stateText string
			since                *time.Time
		)
		if rows.Scan(&pid, &user, &app, &stateText, &since) != nil {
			return ""
		}
		if first == 0 {
			first = pid
		}
		d := fmt.Sprintf("backend pid %d (user %s, application %q, %s", pid, m.red.clean(user), m.red.clean(app), m.red.clean(stateText))
		if since != nil {
			d += ", transaction open since " + since.UTC().Format(time.RFC3339)
		}
		parts = append(parts, d+")")
	}
	if rows.Err() != nil || len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(": %s. Commit or roll back that transaction, or end its session with: SELECT pg_terminate_backend(%d);", strings.Join(parts, ", "), first)
}
