package backend_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/internal/testutil"
	"pushform/state/pg"
)

const svc = testutil.ServiceTest

// load writes files into a temporary directory and loads it with the
// built-in backend types.
func load(t *testing.T, files map[string]string) (*config.Loader, *config.Config, hcl.Diagnostics) {
	t.Helper()
	l := config.NewLoader()
	l.Backends = backend.Builtins()
	cfg, diags := l.Load(testutil.WriteFiles(t, files), config.Options{})
	return l, cfg, diags
}

func TestPGBlock(t *testing.T) {
	defaults := backend.PGConfig{ConnStrEnv: backend.DefaultConnStrEnv, SchemaName: backend.DefaultSchemaName, StateName: backend.DefaultStateName}
	with := func(f func(*backend.PGConfig)) *backend.PGConfig {
		c := defaults
		f(&c)
		return &c
	}
	tests := []struct {
		name string
		src  string
		want *backend.PGConfig // nil: no backend
	}{
		{"none", "", nil},
		{"defaults", "backend \"pg\" {}\n", with(func(*backend.PGConfig) {})},
		{"all set", "backend \"pg\" {\n  conn_str_env = \"TEAM_PG\"\n  schema_name  = \"push_2026\"\n  state_name   = \"Marketing EU\"\n}\n",
			with(func(c *backend.PGConfig) {
				c.ConnStrEnv, c.SchemaName, c.StateName = "TEAM_PG", "push_2026", "Marketing EU"
			})},
		{"longest names", "backend \"pg\" {\n  schema_name = \"" + strings.Repeat("s", 63) + "\"\n  state_name = \"" + strings.Repeat("é", backend.MaxStateNameLength) + "\"\n}\n",
			with(func(c *backend.PGConfig) {
				c.SchemaName, c.StateName = strings.Repeat("s", 63), strings.Repeat("é", backend.MaxStateNameLength)
			})},
		{"timeouts", "backend \"pg\" {\n  connect_timeout = \"3s\"\n  statement_timeout = \"2m\"\n  lock_timeout = \"500ms\"\n  tcp_keepalive = \"15s\"\n  connection_check_interval = \"5s\"\n}\n",
			with(func(c *backend.PGConfig) {
				c.Timeouts = pg.Timeouts{Connect: 3 * time.Second, Statement: 2 * time.Minute, Lock: 500 * time.Millisecond, Keepalive: 15 * time.Second, CheckInterval: 5 * time.Second}
			})},
		{"check interval off", "backend \"pg\" {\n  connection_check_interval = \"0s\"\n}\n",
			with(func(c *backend.PGConfig) { c.Timeouts.CheckInterval = pg.Disabled })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cfg, diags := load(t, map[string]string{"main.hcl": svc, "backend.hcl": tt.src})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if tt.want == nil {
				if cfg.Backend != nil {
					t.Fatalf("backend = %+v; want none", cfg.Backend)
				}
				return
			}
			if cfg.Backend == nil || cfg.Backend.Type != "pg" || cfg.Backend.Pos != (config.Pos{Filename: "backend.hcl", Line: 1, Column: 1}) {
				t.Fatalf("backend = %+v", cfg.Backend)
			}
			got, d := backend.DecodePG(cfg.Backend)
			if d.HasErrors() {
				t.Fatal(d.Error())
			}
			tt.want.Pos = cfg.Backend.Pos
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestPGBlockRules(t *testing.T) {
	const pw = "s3cr3t-Pa55"
	tests := []struct {
		name, src, summary string
		line               int
	}{
		{"unknown type", "backend \"s3\" {}\n", "Unsupported backend type", 1},
		{"two backends", "backend \"pg\" {}\n\nbackend \"pg\" {}\n", "Duplicate backend block", 3},
		{"unknown argument", "backend \"pg\" {\n  conn_str = \"x\"\n}\n", "Unsupported argument", 2},
		{"connection URL", "backend \"pg\" {\n  conn_str_env = \"postgres://u:" + pw + "@db.example.com/push\"\n}\n", "Connection string in configuration", 2},
		{"connection URL without password", "backend \"pg\" {\n  conn_str_env = \"postgres://db.example.com/push\"\n}\n", "Connection string in configuration", 2},
		{"key=value connection string", "backend \"pg\" {\n  conn_str_env = \"host=db password=" + pw + "\"\n}\n", "Connection string in configuration", 2},
		{"key-looking name", "backend \"pg\" {\n  conn_str_env = \"pg_4eC39HqLyjWDarjtT1zdp7dc\"\n}\n", "Connection string in configuration", 2},
		{"name with a dash", "backend \"pg\" {\n  conn_str_env = \"MY-PG\"\n}\n", "Invalid conn_str_env", 2},
		{"empty name", "backend \"pg\" {\n  conn_str_env = \"\"\n}\n", "Invalid conn_str_env", 2},
		{"variable", "variable \"v\" { default = \"X\" }\nbackend \"pg\" {\n  conn_str_env = var.v\n}\n", "Variables not allowed", 3},
		{"upper-case schema", "backend \"pg\" {\n  schema_name = \"Push\"\n}\n", "Invalid schema_name", 2},
		{"schema with digit first", "backend \"pg\" {\n  schema_name = \"1push\"\n}\n", "Invalid schema_name", 2},
		{"quoted schema", "backend \"pg\" {\n  schema_name = \"push; drop table x\"\n}\n", "Invalid schema_name", 2},
		{"long schema", "backend \"pg\" {\n  schema_name = \"" + strings.Repeat("s", 64) + "\"\n}\n", "Invalid schema_name", 2},
		{"system schema", "backend \"pg\" {\n  schema_name = \"pg_catalog\"\n}\n", "Invalid schema_name", 2},
		{"empty state name", "backend \"pg\" {\n  state_name = \" \"\n}\n", "Invalid state_name", 2},
		{"state name with escape", "backend \"pg\" {\n  state_name = \"a\\u001b[2J\"\n}\n", "Invalid state_name", 2},
		{"state name with bidi override", "backend \"pg\" {\n  state_name = \"a\\u202eb\"\n}\n", "Invalid state_name", 2},
		{"long state name", "backend \"pg\" {\n  state_name = \"" + strings.Repeat("x", backend.MaxStateNameLength+1) + "\"\n}\n", "Invalid state_name", 2},
		{"state name number", "backend \"pg\" {\n  state_name = [1]\n}\n", "Incorrect attribute value type", 2},
		{"timeout not a duration", "backend \"pg\" {\n  statement_timeout = \"soon\"\n}\n", "Invalid statement_timeout", 2},
		{"timeout too short", "backend \"pg\" {\n  connect_timeout = \"10ms\"\n}\n", "Invalid connect_timeout", 2},
		{"timeout zero", "backend \"pg\" {\n  lock_timeout = \"0s\"\n}\n", "Invalid lock_timeout", 2},
		{"keepalive too long", "backend \"pg\" {\n  tcp_keepalive = \"2h\"\n}\n", "Invalid tcp_keepalive", 2},
		{"check interval negative", "backend \"pg\" {\n  connection_check_interval = \"-1s\"\n}\n", "Invalid connection_check_interval", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cfg, diags := load(t, map[string]string{"main.hcl": svc, "backend.hcl": tt.src})
			found := false
			for _, d := range diags {
				if d.Summary == tt.summary && d.Subject != nil && d.Subject.Filename == "backend.hcl" && d.Subject.Start.Line == tt.line {
					found = true
				}
				if strings.Contains(d.Summary+d.Detail, pw) {
					t.Errorf("diagnostic quotes the password: %s", d.Detail)
				}
			}
			if !found {
				t.Errorf("want %q at backend.hcl:%d; got: %s", tt.summary, tt.line, diags.Error())
			}
			if tt.name != "two backends" && cfg.Backend != nil {
				t.Errorf("an invalid backend was kept: %+v", cfg.Backend)
			}
		})
	}
}

// TestUnknownTypeListsKnown: the diagnostic lists every registered type,
// those a front end adds included.
func TestUnknownTypeListsKnown(t *testing.T) {
	reg := backend.Builtins()
	reg["memory"] = backend.PG{}
	l := config.NewLoader()
	l.Backends = reg
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(svc+"backend \"s3\" {}\n"), 0o644)
	_, diags := l.LoadBackend(dir)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `There is no backend type "s3"; the known types are: memory, pg.`) {
		t.Fatalf("diags = %s", diags.Error())
	}
	// Without a registry the block is kept as written, unchecked.
	be, diags := config.NewLoader().LoadBackend(dir)
	if diags.HasErrors() || be == nil || be.Type != "s3" {
		t.Fatalf("unchecked LoadBackend = %+v, %s", be, diags.Error())
	}
}

// TestPGBlockRedacted: a connection string pasted into the block is
// neither quoted by the diagnostic nor shown in its source snippet.
func TestPGBlockRedacted(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		secrets     []string
	}{
		{"connection string", "postgres://u:pw@h/db", []string{"u:pw", "postgres://u"}},
		{"key=value connection string", "host=db password=hunter2", []string{"hunter2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, _, diags := load(t, map[string]string{"main.hcl": svc, "backend.hcl": "backend \"pg\" {\n  conn_str_env = \"" + tt.value + "\"\n}\n"})
			if len(diags) != 1 || diags[0].Summary != "Connection string in configuration" {
				t.Fatalf("diags = %s", diags.Error())
			}
			var buf bytes.Buffer
			if err := l.WriteDiagnostics(&buf, diags, 0, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "   2:   conn_str_env = \"") {
				t.Errorf("the line is not quoted:\n%s", buf.String())
			}
			for _, s := range tt.secrets {
				if strings.Contains(buf.String(), s) {
					t.Errorf("output shows %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

// TestPGOptions: the connection string comes from the variable the block
// names, and an empty one says which.
func TestPGOptions(t *testing.T) {
	c := &backend.PGConfig{ConnStrEnv: "TEAM_PG", SchemaName: "s", StateName: "x", Pos: config.Pos{Filename: "b.hcl", Line: 3}}
	_, err := c.Options(func(string) string { return "" })
	if err == nil || err.Error() != `environment variable TEAM_PG is empty: it must hold the postgres:// URL of the database that keeps the state (backend "pg" at b.hcl:3)` {
		t.Fatalf("err = %v", err)
	}
	o, err := c.Options(func(k string) string {
		if k == "TEAM_PG" {
			return "postgres://u:hunter2@db/push"
		}
		return ""
	})
	if err != nil || o.ConnString != "postgres://u:hunter2@db/push" || o.Schema != "s" || o.StateName != "x" {
		t.Fatalf("options = %+v, %v", o, err)
	}
	// pg.Open takes the password out of its messages itself (state/pg's
	// canary tests); the configuration learns it to refuse values holding it.
	if s := c.Secrets(func(string) string { return o.ConnString }); len(s) != 1 || s[0].What != "the database password (TEAM_PG)" || !slices.Contains(s[0].Values, "hunter2") {
		t.Errorf("Secrets = %+v", s)
	}
}
