package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Defaults of the backend "pg" block.
const (
	DefaultConnStrEnv = "PUSHFORM_PG_CONN_STR"
	DefaultSchemaName = "pushform"
	DefaultStateName  = "default"
)

// backendTypes are the known backend block labels.
var backendTypes = []string{"pg"}

// MaxStateNameLength caps state_name, in characters.
const MaxStateNameLength = 200

var pgBackendSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "conn_str_env"},
		{Name: "schema_name"},
		{Name: "state_name"},
	},
}

// sqlIdentRE is a plain (unquoted) SQL identifier; PostgreSQL truncates
// names at 63 bytes.
var sqlIdentRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// backendBlock is a decoded backend block.
type backendBlock struct {
	block   *hcl.Block
	backend *Backend
}

// decodeBackendBlock decodes a backend block. Its values are literals, as
// in Terraform: the backend is opened before anything is evaluated. The
// Backend is nil when the block is unusable.
func decodeBackendBlock(b *hcl.Block) (*backendBlock, hcl.Diagnostics) {
	bb := &backendBlock{block: b}
	typ := b.Labels[0]
	if typ != "pg" {
		return bb, hcl.Diagnostics{errDiag("Unsupported backend type",
			fmt.Sprintf("There is no backend type %s; the known types are: %s. Without a backend block the state is a local file.", quoteValue(typ), strings.Join(backendTypes, ", ")),
			b.LabelRanges[0].Ptr())}
	}
	content, diags := b.Body.Content(pgBackendSchema)
	be := &Backend{Type: typ, ConnStrEnv: DefaultConnStrEnv, SchemaName: DefaultSchemaName, StateName: DefaultStateName, Pos: posOf(b.DefRange)}
	ok := !diags.HasErrors()
	if a, has := content.Attributes["conn_str_env"]; has {
		v, set, d := literalString(a)
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
		case !envNameRE.MatchString(v):
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
		v, set, d := literalString(a)
		diags = append(diags, d...)
		switch {
		case !set:
			ok = ok && !d.HasErrors()
		case !sqlIdentRE.MatchString(v) || strings.HasPrefix(v, "pg_") || v == "information_schema":
			diags = append(diags, errDiag("Invalid schema_name",
				fmt.Sprintf("schema_name must be a plain SQL identifier: lower-case letters, digits and underscores, not starting with a digit, at most 63 characters, and not a system schema (pg_*, information_schema); got %s.", quoteValue(v)),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			be.SchemaName = v
		}
	}
	if a, has := content.Attributes["state_name"]; has {
		v, set, d := literalString(a)
		diags = append(diags, d...)
		switch {
		case !set:
			ok = ok && !d.HasErrors()
		case strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > MaxStateNameLength || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			diags = append(diags, errDiag("Invalid state_name",
				fmt.Sprintf("state_name must be non-empty printable text of at most %d characters (no control or formatting characters), such as \"marketing\"; got %s.", MaxStateNameLength, quoteValue(v)),
				a.Expr.Range().Ptr()))
			ok = false
		default:
			be.StateName = v
		}
	}
	if ok {
		bb.backend = be
	}
	return bb, diags
}

// looksLikeConnStr reports whether an env var name is a connection string
// (URL or key=value form) or a secret instead.
func looksLikeConnStr(v string) bool {
	return looksSecret(v) || strings.ContainsAny(v, ":/@= \t")
}

// LoadBackend reads only the backend block of the configuration in dir:
// commands that touch the state without running a plan (state list, state
// pull, force-unlock) must find the same state as plan and apply, even
// while other blocks do not validate. It returns nil without a backend
// block (the local file backend). Syntax errors of any file are reported,
// since a broken file may hold the block.
func (l *Loader) LoadBackend(dir string) (*Backend, hcl.Diagnostics) {
	l.parsed, l.files, l.redact, l.last = map[string]*hcl.File{}, nil, nil, nil
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, hcl.Diagnostics{errDiag("Invalid configuration directory", err.Error(), nil)}
	}
	names, err := configFiles(abs)
	if err != nil {
		return nil, hcl.Diagnostics{errDiag("Cannot read configuration directory", err.Error(), nil)}
	}
	var diags hcl.Diagnostics
	var found *backendBlock
	for _, name := range names {
		src, err := ReadSource(filepath.Join(abs, name), MaxFileSize)
		if err != nil {
			diags = append(diags, errDiag("Cannot read configuration file", err.Error(), fileStart(name)))
			continue
		}
		f, d := ParseSource(name, src)
		diags = append(diags, d...)
		if f == nil || d.HasErrors() {
			continue
		}
		l.parsed[name] = f
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			if b.Type != "backend" || len(b.Labels) != 1 {
				continue
			}
			bb, d := decodeBackendBlock(b.AsHCLBlock())
			diags = append(diags, d...)
			if found != nil {
				diags = append(diags, errDiag("Duplicate backend block",
					fmt.Sprintf("A configuration has at most one backend block, saying where its state is kept; the first is at %s.", rangePos(found.block.DefRange)),
					b.DefRange().Ptr()))
				continue
			}
			found = bb
		}
	}
	if len(diags) > 0 {
		diags = sortDiags(dedupe(l.redaction().diags(diags)))
	}
	if diags.HasErrors() || found == nil {
		return nil, diags
	}
	return found.backend, diags
}
