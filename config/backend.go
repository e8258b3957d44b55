package config

import (
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// BackendTypes checks backend blocks against the schema their type
// declares. The configuration keeps a backend block's body unevaluated and
// knows no backend's fields, as Terraform's configs package does: each
// backend declares and decodes its own (backend.Registry implements this).
type BackendTypes interface {
	// CheckBackend decodes b's body as its type's schema and reports every
	// problem, an unknown type included.
	CheckBackend(b *Backend) hcl.Diagnostics
}

// backendBlock is a decoded backend block.
type backendBlock struct {
	block   *hcl.Block
	backend *Backend // nil when its type refused the body
}

// decodeBackendBlock keeps a backend block: its type and body, unevaluated.
func decodeBackendBlock(b *hcl.Block) (*backendBlock, hcl.Diagnostics) {
	return &backendBlock{block: b, backend: &Backend{
		Type: b.Labels[0], Body: b.Body, TypeRange: b.LabelRanges[0], DeclRange: b.DefRange, Pos: posOf(b.DefRange),
	}}, nil
}

// checkBackend has l.Backends check bb; a body its type refuses leaves no
// Backend. Without Backends the block is kept unchecked.
func (l *Loader) checkBackend(bb *backendBlock) hcl.Diagnostics {
	if l.Backends == nil {
		return nil
	}
	diags := l.Backends.CheckBackend(bb.backend)
	if diags.HasErrors() {
		bb.backend = nil
	}
	return diags
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
			diags = append(diags, l.checkBackend(bb)...)
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

// LiteralString evaluates a string attribute that may not refer to
// anything (a backend block is decoded before anything is evaluated); set
// is false when it is null or could not be evaluated. For backends'
// decoders.
func LiteralString(a *hcl.Attribute) (val string, set bool, diags hcl.Diagnostics) {
	return literalString(a)
}

// QuoteValue quotes a configuration value for a diagnostic, unless it may
// be a secret.
func QuoteValue(v string) string { return quoteValue(v) }

// LooksSecret reports whether a value may be a secret: a key, a URL with
// credentials, or a connection string with a password.
func LooksSecret(v string) bool { return looksSecret(v) }

// IsEnvName reports whether v is an environment variable name (letters,
// digits and underscores, not starting with a digit).
func IsEnvName(v string) bool { return envNameRE.MatchString(v) }
