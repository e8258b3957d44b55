package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL backend's goals.
const (
	goalPGThroughputShare = 0.85 // of the service-latency bound, whole apply command
	goalPGWALAmp          = 5.0  // WAL bytes written during the apply / final state
	pgConnEnv             = "PUSHFORM_PG_CONN_STR"
	pgURLEnv              = "PUSHFORM_TEST_PG_URL"
)

// pgApply applies the big campaign with its state in PostgreSQL (a schema
// of its own, dropped afterwards) and measures the whole command against
// the latency bound, and the WAL the server wrote against the final
// state's size. Without a server it skips, saying so.
func (b *bench) pgApply(ctx context.Context) ([]Row, error) {
	if b.o.pgURL == "" {
		b.logf("pg: skipping the PostgreSQL rows: no -pg URL and %s is not set", pgURLEnv)
		return nil, nil
	}
	db, err := pgx.Connect(ctx, b.o.pgURL)
	if err != nil {
		b.logf("pg: skipping the PostgreSQL rows: the server does not answer (%s)", redactURL(b.o.pgURL, err.Error()))
		return nil, nil
	}
	defer db.Close(context.Background())
	var rnd [4]byte
	rand.Read(rnd[:])
	schema := "pfbench_" + hex.EncodeToString(rnd[:])
	defer func() {
		if _, err := db.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			b.logf("pg: dropping schema %s: %s", schema, redactURL(b.o.pgURL, err.Error()))
		}
	}()
	dir, err := b.campaign("apply-pg", announceHCL+fmt.Sprintf("\nbackend \"pg\" {\n  schema_name = %q\n  state_name  = \"bench\"\n}\n", schema))
	if err != nil {
		return nil, err
	}
	others := func() int {
		var n int
		db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n)
		return n
	}
	var lsn string
	if err := db.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return nil, fmt.Errorf("pg: reading the WAL position: %s", redactURL(b.o.pgURL, err.Error()))
	}
	busyBefore := others()
	b.logf("pg: apply: %s targets, --parallelism %d, state in schema %s", group(int64(b.n)), b.o.parallelism, schema)
	var ev eventTimes
	r, err := b.pushform(ctx, dir, ev.line, "apply", "--auto-approve", "--json", "--parallelism", fmt.Sprint(b.o.parallelism))
	if err != nil {
		return nil, err
	}
	if err := r.check(0, "apply with the PostgreSQL backend"); err != nil {
		return nil, err
	}
	var wal float64
	if err := db.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8`, lsn).Scan(&wal); err != nil {
		return nil, fmt.Errorf("pg: reading the WAL position: %s", redactURL(b.o.pgURL, err.Error()))
	}
	busyAfter := others()
	sum, err := applySummary(r.stdout)
	if err != nil {
		return nil, err
	}
	if sum.Counts.Delivered != b.n {
		return nil, fmt.Errorf("pg: apply delivered %d of %d targets", sum.Counts.Delivered, b.n)
	}
	var size int64
	var journal int
	err = db.QueryRow(ctx, `SELECT octet_length(snapshot), (SELECT count(*) FROM `+schema+`.journal) FROM `+schema+`.states WHERE name = 'bench'`).Scan(&size, &journal)
	if err != nil {
		return nil, fmt.Errorf("pg: reading the final state: %s", redactURL(b.o.pgURL, err.Error()))
	}
	if journal != 0 {
		return nil, fmt.Errorf("pg: %d journal rows left after the apply: the final snapshot must replace them", journal)
	}
	if ev.first.IsZero() || ev.responses == 0 {
		return nil, fmt.Errorf("pg: apply sent nothing")
	}

	// A no-op plan over the state, read from the server.
	var plans []float64
	for range b.o.runs {
		pr, err := b.pushform(ctx, dir, nil, "plan", "--refresh=false", "--detailed-exitcode")
		if err != nil {
			return nil, err
		}
		if err := pr.check(0, "no-op plan with the PostgreSQL backend"); err != nil {
			return nil, err
		}
		plans = append(plans, pr.wall.Seconds())
	}

	bound := float64(b.o.parallelism*batchLimit) / b.o.latency.Seconds()
	whole := float64(b.n) / r.wall.Seconds()
	sendTime := ev.last.Sub(ev.first)
	send := float64(b.n) / sendTime.Seconds()
	noise := ""
	if busyBefore+busyAfter > 0 {
		noise = fmt.Sprintf("; %d other active sessions before, %d after (their WAL counts too)", busyBefore, busyAfter)
	}
	return []Row{
		atLeast(fmt.Sprintf("apply with the PostgreSQL backend, %s targets, --parallelism %d (whole command)", group(int64(b.n)), b.o.parallelism),
			fmt.Sprintf(">= %.0f%% of %s", goalPGThroughputShare*100, rate(bound)),
			fmt.Sprintf("%s = %.0f%% of the bound (%s wall, %s max RSS)", rate(whole), 100*whole/bound, secs(r.wall), mib(r.maxRSS)),
			whole, goalPGThroughputShare*bound),
		info("  its send phase", fmt.Sprintf("%s = %.0f%% of the bound (%s for %s requests)", rate(send), 100*send/bound, secs(sendTime), group(int64(ev.responses))),
			fmt.Sprintf("before it %s, after it %s", secs(ev.first.Sub(r.start)), secs(r.start.Add(r.wall).Sub(ev.last)))),
		atMost("WAL written during the pg apply / final state", fmt.Sprintf("<= %.0fx", goalPGWALAmp),
			fmt.Sprintf("%s WAL, final snapshot %s%s", mib(int64(wal)), mib(size), noise), wal/float64(size), goalPGWALAmp),
		info("no-op plan, state in PostgreSQL (--refresh=false)", spread(plans, func(x float64) string { return fmt.Sprintf("%.2f s", x) }), ""),
	}, nil
}

// redactURL removes the password of a connection URL from a message.
func redactURL(conn, msg string) string {
	u, err := url.Parse(conn)
	if err != nil || u.User == nil {
		return msg
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		return msg
	}
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), url.UserPassword("", pw).String()[1:]} {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return msg
}
