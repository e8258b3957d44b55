package backend

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/state/pg"
)

// Defaults of the backend "pg" block.
const (
	DefaultConnStrEnv = "PUSHFORM_PG_CONN_STR"
	DefaultSchemaName = pg.DefaultSchema
	DefaultStateName  = pg.DefaultStateName
)

// MaxStateNameLength caps state_name, in characters.
const MaxStateNameLength = 200

// PG is the PostgreSQL backend type: backend "pg" { ... }.
type PG struct{}

// PGConfig is a decoded backend "pg" block.
type PGConfig struct {
	// ConnStrEnv is the NAME of the environment variable holding the
	// postgres:// URL, never the URL itself; default DefaultConnStrEnv.
	ConnStrEnv string
	// SchemaName is a plain SQL identifier ([a-z_][a-z0-9_]*, at most 63
	// bytes); default DefaultSchemaName.
	SchemaName string
	// StateName selects one state among those in the schema; printable, at
	// most 200 characters; default DefaultStateName.
	StateName string
	// Timeouts bound every wait on the server; zero fields take pg's
	// defaults.
	Timeouts pg.Timeouts
	Pos      config.Pos
}

var pgBackendSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "conn_str_env"},
		{Name: "schema_name"},
		{Name: "state_name"},
		{Name: "connect_timeout"},
		{Name: "statement_timeout"},
		{Name: "lock_timeout"},
		{Name: "tcp_keepalive"},
		{Name: "connection_check_interval"},
	},
}

// sqlIdentRE is a plain (unquoted) SQL identifier; PostgreSQL truncates
// names at 63 bytes.
var sqlIdentRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Where names where the state is kept, for messages.
func (PG) Where() string { return "PostgreSQL" }

// Decode implements Type.
func (PG) Decode(b *config.Backend) (Opener, hcl.Diagnostics) {
	c, diags := DecodePG(b)
	if c == nil {
		return nil, diags
	}
	return c, diags
}

// DecodePG decodes a backend "pg" block; the config is nil when the block
// is unusable.
func DecodePG(b *config.Backend) (*PGConfig, hcl.Diagnostics) {
	content, diags := b.Body.Content(pgBackendSchema)
	be := &PGConfig{ConnStrEnv: DefaultConnStrEnv, SchemaName: DefaultSchemaName, StateName: DefaultStateName, Pos: b.Pos}
	ok := !diags.HasErrors()
	if a, has := content.Attributes["conn_str_env"]; has {
		v, set, d := config.LiteralString(a)
		diags = append(diags, d...)
		switch {
		case !set:
			ok = ok && !d.HasErrors()
		case looksLikeConnStr(v):
			// Never quoted: it may hold the password.
			diags = append(diags, errDiag("Connection string in configuration",
				`conn_str_env takes the NAME of the environment variable that holds the postgres:// URL, and this value looks like a connection string or a secret itself. Remove it from the file (and change the password if it was committed), put it in the environment, and name the variable: conn_str_env = "PUSHFORM_PG_CONN_STR".`,
				a.Expr.Range().Ptr()))
			ok = false
		case !config.IsEnvName(v):
			// Not quoted: a value that is not a name may hold a password.
			diags = append(diags, errDiag("Invalid conn_str_env",
				fmt.Sprintf("conn_str_env must name an environment variable (letters, digits and underscores, not starting with a digit), such as %q; this value is not one (not shown, in case it holds a password).", DefaultConnStrEnv),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			be.ConnStrEnv = v
		}
	}
	if a, has := content.Attributes["schema_name"]; has {
		v, set, d := config.LiteralString(a)
		diags = append(diags, d...)
		switch {
		case !set:
			ok = ok && !d.HasErrors()
		case !sqlIdentRE.MatchString(v) || strings.HasPrefix(v, "pg_") || v == "information_schema":
			diags = append(diags, errDiag("Invalid schema_name",
				fmt.Sprintf("schema_name must be a plain SQL identifier: lower-case letters, digits and underscores, not starting with a digit, at most 63 characters, and not a system schema (pg_*, information_schema); got %s.", config.QuoteValue(v)),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			be.SchemaName = v
		}
	}
	if a, has := content.Attributes["state_name"]; has {
		v, set, d := config.LiteralString(a)
		diags = append(diags, d...)
		switch {
		case !set:
			ok = ok && !d.HasErrors()
		case strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > MaxStateNameLength || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			diags = append(diags, errDiag("Invalid state_name",
				fmt.Sprintf("state_name must be non-empty printable text of at most %d characters (no control or formatting characters), such as \"marketing\"; got %s.", MaxStateNameLength, config.QuoteValue(v)),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			be.StateName = v
		}
	}
	for _, d := range []struct {
		name     string
		dst      *time.Duration
		zeroOK   bool
		min, max time.Duration
	}{
		{"connect_timeout", &be.Timeouts.Connect, false, time.Second, time.Hour},
		{"statement_timeout", &be.Timeouts.Statement, false, time.Second, 24 * time.Hour},
		{"lock_timeout", &be.Timeouts.Lock, false, 100 * time.Millisecond, 24 * time.Hour},
		{"tcp_keepalive", &be.Timeouts.Keepalive, false, time.Second, time.Hour},
		{"connection_check_interval", &be.Timeouts.CheckInterval, true, time.Second, time.Hour},
	} {
		a, has := content.Attributes[d.name]
		if !has {
			continue
		}
		v, set, dd := config.LiteralString(a)
		diags = append(diags, dd...)
		if !set {
			ok = ok && !dd.HasErrors()
			continue
		}
		t, err := time.ParseDuration(v)
		switch {
		case err == nil && t == 0 && d.zeroOK:
			*d.dst = pg.Disabled
		case err != nil || t < d.min || t > d.max:
			zero := ""
			if d.zeroOK {
				zero = `, or "0s" to turn it off`
			}
			diags = append(diags, errDiag("Invalid "+d.name,
				fmt.Sprintf("%s must be a duration from %s to %s such as \"30s\" or \"2m\"%s; got %s.", d.name, d.min, d.max, zero, config.QuoteValue(v)),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			*d.dst = t
		}
	}
	if !ok {
		return nil, diags
	}
	return be, diags
}

func errDiag(summary, detail string, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject}
}

// looksLikeConnStr reports whether an env var name is a connection string
// (URL or key=value form) or a secret instead.
func looksLikeConnStr(v string) bool {
	return config.LooksSecret(v) || strings.ContainsAny(v, ":/@= \t")
}

// Open implements Opener: the connection string comes from the
// environment variable the block names.
func (c *PGConfig) Open(ctx context.Context, env OpenEnv) (State, error) {
	opts, err := c.Options(env.Getenv)
	if err != nil {
		return nil, err
	}
	opts.Interrupt = ctx // the command's: done on Ctrl-C
	opts.Redact = env.Secrets.String
	m, err := pg.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Options are the options of pg.Open, with the connection string from the
// environment.
func (c *PGConfig) Options(getenv func(string) string) (pg.Options, error) {
	conn := getenv(c.ConnStrEnv)
	if conn == "" {
		return pg.Options{}, fmt.Errorf("environment variable %s is empty: it must hold the postgres:// URL of the database that keeps the state (backend \"pg\" at %s)", c.ConnStrEnv, c.Pos)
	}
	// pg takes the connection string and its password out of every
	// message itself, in every form.
	return pg.Options{ConnString: conn, Schema: c.SchemaName, StateName: c.StateName, Timeouts: c.Timeouts}, nil
}
