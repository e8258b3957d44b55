// Package pg is the PostgreSQL state backend: one state shared by every
// runner of a team, so two pipelines can never apply from different copies.
//
// A state lives in three tables of one schema (see schema.go): states holds
// the last snapshot in the statefile format, journal one row per entry
// appended since, locks who holds the state's lock. Writes are small: apply
// appends each journal entry as a row, in short transactions that group
// concurrent callers, and Persist compacts once, at the end of a run. The
// lock is a PostgreSQL advisory lock on the Manager's own connection, which
// the server releases the moment that connection ends, however it ends.
//
// One Manager holds one connection for its whole life: every read and write
// goes through it, so the writes of a run die with its lock. Connect to the
// server directly or through a session-pooling proxy; a transaction-pooling
// proxy (PgBouncer's pool_mode=transaction) cannot hold a session lock.
//
// Nothing waits for ever (see Timeouts and deadline.go): the connection,
// every statement, every row lock and every round trip have a deadline, and
// an error says which one ran out. A role that may only read (readonly.go)
// reads without a lock; everything that writes is refused up front.
package pg

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"pushform/state"
)

// Defaults of Options.
const (
	DefaultSchema    = "pushform"
	DefaultStateName = "default"
)

// maxStateName caps the state name, in characters.
const maxStateName = 200

// Options say which state to open and how to reach it.
type Options struct {
	// ConnString is a postgres:// URL or a key=value connection string. It
	// holds a password: it never appears in an error of this package.
	ConnString string
	// Schema holds the tables, created when missing; DefaultSchema if "".
	// It must be a plain SQL identifier.
	Schema string
	// StateName names the state within the schema; DefaultStateName if "".
	StateName string
	// Redact, when set, removes further secrets from every error message
	// before it leaves the package (the connection password is always
	// removed).
	Redact func(string) string
	// Timeouts bound every wait on the server; zero fields take defaults.
	Timeouts Timeouts
	// Log, when set, receives a line for each connect (host, port,
	// database, role, server version, how long it took; never the
	// password) and each lock taken, waited for and released, with
	// durations (PUSHFORM_LOG=debug).
	Log func(string)
	// Interrupt is the run's context: once it is done (Ctrl-C), each call
	// to the server may take only a few more seconds, so the work in
	// progress is saved when the server answers and the command ends when
	// it does not. Nil: never interrupted.
	Interrupt context.Context
}

// Timeouts bound every wait on the server, so that a lost network, a hung
// server or another session's open transaction ends a run with an error
// naming what it waited for instead of hanging it.
type Timeouts struct {
	// Connect bounds establishing a connection (TCP, TLS, authentication);
	// default DefaultConnectTimeout.
	Connect time.Duration
	// Statement bounds each statement on the server (statement_timeout)
	// and, with a margin for the network, each round trip on the client;
	// default DefaultStatementTimeout.
	Statement time.Duration
	// Lock bounds waiting for a row lock another transaction holds
	// (lock_timeout); default DefaultLockTimeout.
	Lock time.Duration
	// Keepalive is the TCP keepalive idle time of both ends: a peer gone
	// without a word is noticed within about twice this; default
	// DefaultKeepalive.
	Keepalive time.Duration
	// CheckInterval is the server's client_connection_check_interval
	// (PostgreSQL 14 and later): how often a server running a statement
	// checks that its client is still there, so a killed run's statement,
	// and the lock its session holds, end within it; default
	// DefaultCheckInterval, Disabled to leave the server's setting.
	CheckInterval time.Duration
}

// Defaults of Timeouts: what a team sharing a state would choose. A run's
// statements take milliseconds; a snapshot of millions of targets a few
// seconds.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultStatementTimeout = time.Minute
	DefaultLockTimeout      = 10 * time.Second
	DefaultKeepalive        = 30 * time.Second
	DefaultCheckInterval    = 2 * time.Second
)

// Disabled turns a Timeouts field off where that is allowed.
const Disabled time.Duration = -1

// withDefaults fills in the zero fields.
func (t Timeouts) withDefaults() Timeouts {
	for _, f := range []struct {
		v *time.Duration
		d time.Duration
	}{{&t.Connect, DefaultConnectTimeout}, {&t.Statement, DefaultStatementTimeout}, {&t.Lock, DefaultLockTimeout}, {&t.Keepalive, DefaultKeepalive}, {&t.CheckInterval, DefaultCheckInterval}} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	return t
}

// Manager is one state in PostgreSQL. It implements state.Manager and
// state.ForceUnlocker and is safe for use by several goroutines.
type Manager struct {
	name, schema string
	key          int64 // of the state's advisory lock
	q            queries
	red          redactor
	t            Timeouts        // with defaults filled in
	stop         context.Context // Options.Interrupt
	roErr        error           // why this connection cannot write; nil when it can
	log          func(string)    // Options.Log; nil: none

	mu     sync.Mutex // guards conn and what follows; held across each database call
	conn   *pgx.Conn  // nil once closed
	head   state.Head // the stored state this Manager last read or wrote
	lockID string
	// lost is the error that closed the connection (a call that waited
	// past its deadline), which every later call reports: what the run
	// waited for, not only that the connection is gone.
	lost  error
	lock  state.LockInfo
	stale *state.LockInfo
	// waitFrom is when a Lock was first refused, until one succeeds;
	// lockedAt when the lock was taken. For the debug log.
	waitFrom, lockedAt time.Time

	commit state.GroupCommit[journalRow]
}

var (
	_ state.Manager       = (*Manager)(nil)
	_ state.ForceUnlocker = (*Manager)(nil)
)

// schemaRE is a plain SQL identifier; quoted anyway in every statement.
var schemaRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Open connects to the server, creates the schema and its tables when
// missing and returns the Manager of the state named in o.
func Open(ctx context.Context, o Options) (*Manager, error) {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.StateName == "" {
		o.StateName = DefaultStateName
	}
	m := &Manager{name: o.StateName, schema: o.Schema}
	m.red = newRedactor(o.ConnString, o.Redact)
	switch {
	case !schemaRE.MatchString(o.Schema) || strings.HasPrefix(strings.ToLower(o.Schema), "pg_") || strings.EqualFold(o.Schema, "information_schema"):
		return nil, fmt.Errorf("PostgreSQL state: schema name %s is not a plain SQL identifier (letters, digits and underscores, not starting with a digit, at most 63 characters, not pg_* or information_schema)", m.red.quote(o.Schema))
	case strings.TrimSpace(o.StateName) == "" || utf8.RuneCountInString(o.StateName) > maxStateName || strings.IndexFunc(o.StateName, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return nil, fmt.Errorf("PostgreSQL state: state name %s must be printable text of 1 to %d characters", m.red.quote(o.StateName), maxStateName)
	case strings.TrimSpace(o.ConnString) == "":
		return nil, fmt.Errorf("%s: the connection string is empty", m)
	}
	m.key = lockKey("state", o.Schema, o.StateName)
	m.q = newQueries(o.Schema)
	m.t = o.Timeouts.withDefaults()
	m.stop = o.Interrupt
	m.log = o.Log

	cfg, err := pgx.ParseConfig(o.ConnString)
	if err != nil {
		return nil, fmt.Errorf("%s: the connection string is not a valid postgres:// URL or key=value list%s", m, m.red.parseDetail(err))
	}
	m.red.add(cfg.Password)
	m.configure(cfg)
	start := time.Now()
	where := fmt.Sprintf("host=%s port=%d database=%s role=%s", cfg.Host, cfg.Port, cfg.Database, cfg.User)
	conn, err := m.connect(ctx, cfg)
	if err != nil {
		m.logf("%s: connecting to %s failed after %s: %v", m, where, since(start), err)
		return nil, err
	}
	m.conn = conn
	m.logf("%s: connected to %s (server %s) in %s", m, where, conn.PgConn().ParameterStatus("server_version"), since(start))
	if err := m.ensureSchema(); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	if err := m.checkWritable(); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	if m.roErr != nil {
		m.logf("%s: the role can only read: no lock is taken", m)
	}
	return m, nil
}

// logf writes a debug line, with any secret removed, when Options.Log is
// set.
func (m *Manager) logf(format string, args ...any) {
	if m.log != nil {
		m.log(m.red.clean(fmt.Sprintf(format, args...)))
	}
}

// since is the time since start, rounded for a log line.
func since(start time.Time) time.Duration {
	return time.Since(start).Round(100 * time.Microsecond)
}

// configure bounds every wait of the connection cfg describes: what the
// connection string sets itself wins.
func (m *Manager) configure(cfg *pgx.ConnConfig) {
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "pushform"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = m.t.Connect
	}
	// A peer gone without a word (a machine powered off, a network cut) is
	// noticed by TCP keepalives: this end ends a run whose server vanished
	// (and the server's end, set in connect, releases the lock of a runner
	// that vanished).
	idle, interval := m.keepalive()
	cfg.DialFunc = (&net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: idle, Interval: interval, Count: 3}}).DialContext
}

// keepalive is the TCP keepalive idle time and probe interval.
func (m *Manager) keepalive() (idle, interval time.Duration) {
	idle = max(m.t.Keepalive.Truncate(time.Second), time.Second)
	return idle, max((idle / 3).Truncate(time.Second), time.Second)
}

// connect connects with cfg and bounds every wait of the session on the
// server, with SET rather than startup parameters, which poolers such as
// PgBouncer refuse: the server's keepalives, each statement
// (statement_timeout), waiting for a row another transaction holds
// (lock_timeout: it is reported, not waited on), a session cut off inside a
// transaction (ended, with its locks), and, on servers that support it (14
// and later), checking during each statement that this client is still
// connected, so a killed run's statement, and the lock its session holds,
// end within CheckInterval instead of when the statement would. What the
// connection string sets itself wins.
func (m *Manager) connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		if ctx.Err() == nil && isTimeout(err) {
			return nil, fmt.Errorf("%s: connecting: the server did not answer within connect_timeout (%s)", m, cfg.ConnectTimeout)
		}
		return nil, m.opErr("connecting", err)
	}
	idle, interval := m.keepalive()
	var sets []string
	set := func(name string, v int64) {
		if _, ok := cfg.RuntimeParams[name]; !ok {
			sets = append(sets, fmt.Sprintf("SET %s = %d", name, v))
		}
	}
	set("tcp_keepalives_idle", int64(idle/time.Second))
	set("tcp_keepalives_interval", int64(interval/time.Second))
	set("tcp_keepalives_count", 3)
	set("statement_timeout", m.t.Statement.Milliseconds())
	set("lock_timeout", m.t.Lock.Milliseconds())
	set("idle_in_transaction_session_timeout", (m.t.Statement + callMargin).Milliseconds())
	if m.t.CheckInterval != Disabled && serverMajor(conn.PgConn().ParameterStatus("server_version")) >= 14 {
		set("client_connection_check_interval", m.t.CheckInterval.Milliseconds())
	}
	if len(sets) == 0 {
		return conn, nil
	}
	cctx, cancel := m.call()
	defer cancel()
	if _, err := conn.Exec(cctx, strings.Join(sets, "; ")); err != nil {
		conn.PgConn().Conn().Close() // no goodbye to a server that may not answer
		conn.Close(context.Background())
		what := "setting the session's timeouts"
		if isTimeout(err) {
			return nil, fmt.Errorf("%s: %s: the server did not answer within %s", m, what, m.t.Statement+callMargin)
		}
		return nil, m.dbErr(what, err)
	}
	return conn, nil
}

// serverMajor is the major version in a server_version ("15.4",
// "9.6.24", "13.2 (Debian 13.2-1)"); 0 when there is none.
func serverMajor(v string) int {
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}

// String names the state in messages.
func (m *Manager) String() string {
	return fmt.Sprintf("PostgreSQL state %s (schema %s)", m.red.quote(m.name), m.schema)
}

// Dir is "": files that belong with the state (the sandbox's devices) stay
// in the configuration directory.
func (m *Manager) Dir() string { return "" }

// Close releases the lock if it is still held and closes the connection.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn == nil {
		return nil
	}
	var err error
	if m.lockID != "" {
		err = m.unlockLocked(m.lockID)
	}
	// Closing says goodbye to the server; a server that does not answer
	// must not hold the command.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cerr := m.conn.Close(ctx)
	m.conn = nil
	if cerr != nil {
		err = errors.Join(err, m.dbErr("closing the connection", cerr))
	}
	return err
}

// usable returns an error when the connection is closed or lost; m.mu is
// held.
func (m *Manager) usable() error {
	switch {
	case m.conn == nil:
		return fmt.Errorf("%s: the connection is closed", m)
	case m.conn.IsClosed() && m.lost != nil:
		return m.lost
	case m.conn.IsClosed():
		return fmt.Errorf("%s: the connection to the server was lost (with it the lock, if this run held it); nothing more is recorded", m)
	}
	return nil
}

// lockKey derives an advisory lock key from names, so states of different
// schemas and names do not share a lock.
func lockKey(kind string, names ...string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pushform " + kind))
	for _, n := range names {
		h.Write([]byte{0})
		h.Write([]byte(n))
	}
	return int64(h.Sum64())
}
