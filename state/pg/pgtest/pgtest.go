// Package pgtest gives tests the PostgreSQL server named by
// PUSHFORM_TEST_PG_URL, and a schema of their own on it so they run in
// parallel. Without a reachable server the tests that need one are
// skipped, with one line saying how to run them; with
// PUSHFORM_TEST_PG_REQUIRED=1 (as in CI) they fail instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pushform/state/pg"
)

// Environment variables read by URL.
const (
	EnvURL      = "PUSHFORM_TEST_PG_URL"
	EnvRequired = "PUSHFORM_TEST_PG_REQUIRED"
)

var (
	once      sync.Once
	reachErr  error // why the server cannot be used; nil when it can
	explained sync.Once
)

// URL returns the test server's connection URL. When none is configured or
// the server does not answer it skips the test, or fails it when
// PUSHFORM_TEST_PG_REQUIRED=1.
func URL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(EnvURL)
	once.Do(func() {
		if url == "" {
			reachErr = fmt.Errorf("%s is not set", EnvURL)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			reachErr = fmt.Errorf("the server in %s does not answer (%s)", EnvURL, redactedErr(url, err))
			return
		}
		conn.Close(ctx)
	})
	if reachErr == nil {
		return url
	}
	if os.Getenv(EnvRequired) == "1" {
		tb.Fatalf("PostgreSQL tests are required (%s=1) but %v", EnvRequired, reachErr)
	}
	skipped := true
	explained.Do(func() {
		skipped = false
		tb.Skipf("skipping the PostgreSQL tests: %v; run them with %s=postgres://USER:PASSWORD@127.0.0.1:5432/DB (.ci/run starts a server and sets it)", reachErr, EnvURL)
	})
	if skipped {
		tb.SkipNow()
	}
	return ""
}

// redactedErr is err without the URL's password: test logs are output too.
func redactedErr(url string, err error) string {
	msg := strings.NewReplacer(":\n\t", ": ", "\n\t", "; ").Replace(err.Error())
	if cfg, perr := pgx.ParseConfig(url); perr == nil && cfg.Password != "" {
		return strings.ReplaceAll(msg, cfg.Password, "[redacted]")
	}
	return msg
}

// Schema returns the name of a schema that no other test uses, and drops it
// with everything in it when the test ends. The schema itself is created
// by pg.Open.
func Schema(tb testing.TB) string {
	tb.Helper()
	url := URL(tb)
	var b [6]byte
	rand.Read(b[:])
	name := "pftest_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("dropping test schema %s: %s", name, redactedErr(url, err))
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("dropping test schema %s: %s", name, redactedErr(url, err))
		}
	})
	return name
}

// Options returns options for the state "test" in a schema of the test's
// own (see Schema).
func Options(tb testing.TB) pg.Options {
	tb.Helper()
	return pg.Options{ConnString: URL(tb), Schema: Schema(tb), StateName: "test"}
}

// Open opens a Manager with o and closes it when the test ends.
func Open(tb testing.TB, o pg.Options) *pg.Manager {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := pg.Open(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// ReadOnlyRole creates a login role that may only read the tables of
// schema (USAGE on it, SELECT on its tables, as the read-only GRANTs of
// docs/backends/pg.md), and returns the test server's URL for it. The
// schema's tables must exist. The role is dropped when the test ends. It
// skips the test when the test role may not create roles (CREATEROLE:
// .ci/run grants it).
func ReadOnlyRole(tb testing.TB, schema string) string {
	tb.Helper()
	base := URL(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connecting to the test server: %s", redactedErr(base, err))
	}
	defer conn.Close(ctx)
	var can bool
	if err := conn.QueryRow(ctx, `SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&can); err != nil {
		tb.Fatal(err)
	}
	if !can {
		tb.Skip("skipping the read-only role test: the test role may not create roles (ALTER ROLE ... CREATEROLE, as .ci/run does)")
	}
	var b [6]byte
	rand.Read(b[:])
	role, password := "pftest_ro_"+hex.EncodeToString(b[:]), "ro-"+hex.EncodeToString(b[:])
	r, s := pgx.Identifier{role}.Sanitize(), pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`CREATE ROLE ` + r + ` LOGIN PASSWORD '` + password + `'`,
		`GRANT USAGE ON SCHEMA ` + s + ` TO ` + r,
		`GRANT SELECT ON ALL TABLES IN SCHEMA ` + s + ` TO ` + r,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			tb.Fatalf("creating the read-only role: %v", err)
		}
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("dropping role %s: %s", role, redactedErr(base, err))
			return
		}
		defer conn.Close(ctx)
		// Its sessions first (a killed test's), then what it was granted
		// (gone already when the schema was dropped first).
		conn.Exec(ctx, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = $1`, role)
		var exists bool
		conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists)
		qs := []string{`DROP ROLE ` + r}
		if exists {
			qs = append([]string{`REVOKE ALL ON ALL TABLES IN SCHEMA ` + s + ` FROM ` + r, `REVOKE USAGE ON SCHEMA ` + s + ` FROM ` + r}, qs...)
		}
		for _, q := range qs {
			if _, err := conn.Exec(ctx, q); err != nil {
				tb.Errorf("dropping role %s: %v", role, err)
				return
			}
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal("the test server's URL does not parse")
	}
	u.User = url.UserPassword(role, password)
	return u.String()
}
