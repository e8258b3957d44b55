package config

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Options are the inputs of Load besides the configuration directory.
type Options struct {
	// Vars are --var name=value flags, in command-line order.
	Vars []string
	// VarFiles are --var-file paths, in order; relative paths are resolved
	// against the configuration directory.
	VarFiles []string
	// Environ is the process environment as KEY=VALUE pairs; PUSHFORM_VAR_name
	// entries set variables. The API key (in the variable api_key_env
	// names) and the database password (in the connection string of the
	// one conn_str_env names) are read from it too, only to make sure no
	// evaluated value holds them and no diagnostic shows them.
	Environ []string
	// Recipients maps a data "recipients" block name to the fetched user ids.
	// Nil means not fetched: targets that depend on it stay unknown.
	Recipients map[string][]string
	// PolicyDirs are directories whose *.policy.hcl files add policy
	// blocks (--policy-dir, PUSHFORM_POLICY_DIRS), in order.
	PolicyDirs []string
	// Values are variable values a front end evaluated itself (the
	// variables blocks of pushform test): they win over every other
	// source.
	Values map[string]Value
}

// Value is a variable's value as Options.Values gives it, with where it
// was written.
type Value struct {
	Value cty.Value
	Range hcl.Range
}

// Loader loads configuration directories. It keeps the parsed files, so
// that diagnostics can quote the source, and what the last Load evaluated,
// so that Resolve can complete it with recipients without reading or
// parsing anything again. A Loader is not safe for concurrent use.
type Loader struct {
	// Backends checks backend blocks (backend.Registry); nil keeps them
	// unchecked, for callers that never open the state.
	Backends BackendTypes
	// PolicyObjects checks what policies read of plan and change; nil
	// checks only the names they start with.
	PolicyObjects *PolicyObjects
	// parsed are the files of the last Load, by diagnostic filename.
	parsed map[string]*hcl.File
	// files are parsed with secret-looking values masked, and redact what
	// was masked: made when first needed, as most loads report nothing.
	files  map[string]*hcl.File
	redact *redaction
	// budget counts what the for expressions of the last Load walk.
	budget *budget
	// maxIterations replaces MaxIterations when not 0 (tests, fuzzing:
	// the cap's mechanism at a smaller size).
	maxIterations int64
	// maxBytes replaces MaxBytes when not 0.
	maxBytes int64
	// last is the last Load's evaluation, for Resolve.
	last *evaluation
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader {
	return &Loader{}
}

// Files returns the files parsed by the last Load, by diagnostic filename,
// with secret-looking values masked: for quoting in diagnostics only.
func (l *Loader) Files() map[string]*hcl.File {
	l.redaction()
	return l.files
}

// redaction masks the parsed files on first use.
func (l *Loader) redaction() *redaction {
	if l.redact == nil {
		l.redact = newRedaction()
		if l.last != nil {
			l.redact.known = l.last.secrets // the secrets the last Load knew of
		}
		l.files = make(map[string]*hcl.File, len(l.parsed))
		for name, f := range l.parsed {
			l.files[name] = l.redact.file(f)
		}
	}
	return l.redact
}

// WriteDiagnostics renders diags with source snippets of the loaded files.
// A snippet never shows a secret-looking value (an API key, a URL with
// credentials, a query or a fragment, the value of api_key): the files are
// quoted from copies where such values are masked, byte for byte. width 0
// means no wrapping.
func (l *Loader) WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, width uint, color bool) error {
	if err := writeDiagnostics(w, l.Files(), diags, width, color); err != nil {
		return fmt.Errorf("writing diagnostics: %w", err)
	}
	return nil
}

// Load reads every *.hcl file of dir (not recursive, in name order) except
// the sandbox seed named by the service block, and evaluates it. The Config
// is usable whenever diags has no errors; all problems of all files are
// reported in one run.
func (l *Loader) Load(dir string, opts Options) (*Config, hcl.Diagnostics) {
	l.parsed, l.files, l.redact, l.last = map[string]*hcl.File{}, nil, nil, nil
	l.budget = newBudget(cmp.Or(l.maxIterations, MaxIterations), cmp.Or(l.maxBytes, MaxBytes))
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, hcl.Diagnostics{errDiag("Invalid configuration directory", err.Error(), nil)}
	}
	files := l.parsed
	mod, diags := l.parse(abs, files)
	if mod != nil && len(opts.PolicyDirs) > 0 {
		diags = append(diags, l.parsePolicyDirs(mod, abs, opts.PolicyDirs, files)...)
	}
	var e *evaluation
	if mod != nil {
		mod.budget, mod.policyObjects = l.budget, l.PolicyObjects
		var varFiles []varFile
		var d hcl.Diagnostics
		e, varFiles, d = evaluate(mod, opts, l.Backends)
		diags = append(diags, d...)
		for _, vf := range varFiles {
			files[vf.name] = vf.file
		}
		l.last = e // before the diagnostics are redacted, with its secrets
	}
	if len(diags) > 0 {
		diags = sortDiags(dedupe(l.redaction().diags(diags)))
	}
	if e == nil {
		return &Config{Dir: abs, Topics: map[string]Topic{}, Campaigns: map[string]Campaign{}}, diags
	}
	e.reported = make(map[diagKey]bool, len(diags))
	for _, d := range diags {
		e.reported[keyOf(d)] = true
	}
	return e.cfg, diags
}

// parse reads and decodes every configuration file of dir into a module.
// The module is nil when there is nothing to evaluate.
func (l *Loader) parse(dir string, files map[string]*hcl.File) (*module, hcl.Diagnostics) {
	names, err := configFiles(dir)
	if err != nil {
		return nil, hcl.Diagnostics{errDiag("Cannot read configuration directory", err.Error(), nil)}
	}
	type parsed struct {
		name  string
		file  *hcl.File
		diags hcl.Diagnostics
	}
	var all []parsed
	for _, name := range names {
		src, err := ReadSource(filepath.Join(dir, name), MaxFileSize)
		if err != nil {
			all = append(all, parsed{name: name, diags: hcl.Diagnostics{errDiag("Cannot read configuration file", err.Error(), fileStart(name))}})
			continue
		}
		f, d := ParseSource(name, src)
		if f != nil {
			if body, ok := f.Body.(*hclsyntax.Body); ok {
				meterForExprs(body, l.budget)
			}
			files[name] = f
		}
		all = append(all, parsed{name, f, d})
	}
	var parsedFiles []*hcl.File
	for _, p := range all {
		if p.file != nil {
			parsedFiles = append(parsedFiles, p.file)
		}
	}
	seed := sandboxSeed(parsedFiles)
	mod := newModule(dir)
	var diags hcl.Diagnostics
	broken := false
	for _, p := range all {
		if seed != "" && p.name == seed {
			continue // the sandbox package reads and checks it
		}
		diags = append(diags, p.diags...)
		if p.diags.HasErrors() || p.file == nil {
			broken = true
			continue
		}
		f, d := decodeFile(p.file)
		diags = append(diags, d...)
		for _, bb := range f.backends {
			diags = append(diags, l.checkBackend(bb)...)
		}
		diags = append(diags, mod.addFile(f)...)
	}
	if len(names) == 0 {
		return nil, append(diags, errDiag("No configuration files",
			fmt.Sprintf("The directory %s contains no *.hcl files.", dir), nil))
	}
	if mod.service == nil && !broken {
		diags = append(diags, errDiag("Missing service block",
			`The configuration needs exactly one service block, saying which environment it is for, e.g. service { environment = "test" }.`,
			fileStart(firstNonSeed(names, seed))))
	}
	return mod, diags
}

func firstNonSeed(names []string, seed string) string {
	for _, n := range names {
		if n != seed {
			return n
		}
	}
	return ""
}

// TestFileSuffix ends the names of pushform test's files, which are no
// part of the configuration.
const TestFileSuffix = ".pftest.hcl"

// configFiles lists the regular *.hcl files of dir, sorted, but for test
// files.
func configFiles(dir string) ([]string, error) {
	names, err := regularFiles(dir, ".hcl")
	return slices.DeleteFunc(names, func(n string) bool { return strings.HasSuffix(n, TestFileSuffix) }), err
}

// regularFiles lists the regular files of dir whose names end in suffix,
// sorted.
func regularFiles(dir, suffix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !info.Mode().IsRegular() {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// sandboxSeed finds the literal service { sandbox = "..." } in the parsed
// files, cleaned, or "". It runs before decoding so the seed (a different
// schema) is never decoded as configuration.
func sandboxSeed(files []*hcl.File) string {
	for _, f := range files {
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			if b.Type != "service" {
				continue
			}
			attr, ok := b.Body.Attributes["sandbox"]
			if !ok {
				continue
			}
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
				continue
			}
			return filepath.Clean(filepath.FromSlash(v.AsString()))
		}
	}
	return ""
}
