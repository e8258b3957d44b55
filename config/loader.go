package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

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
	// entries set variables.
	Environ []string
	// Recipients maps a data "recipients" block name to the fetched user ids.
	// Nil means not fetched: targets that depend on it stay unknown.
	Recipients map[string][]string
}

// EnvVarPrefix starts environment variables that set configuration variables.
const EnvVarPrefix = "PUSHFORM_VAR_"

// Loader loads configuration directories and keeps the parsed files, so that
// diagnostics can quote the source. A Loader is not safe for concurrent use.
type Loader struct {
	files map[string]*hcl.File
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader {
	return &Loader{files: map[string]*hcl.File{}}
}

// Files returns the files parsed by the last Load, by diagnostic filename.
func (l *Loader) Files() map[string]*hcl.File { return l.files }

// WriteDiagnostics renders diags with source snippets of the loaded files.
// width 0 means no wrapping.
func (l *Loader) WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, width uint, color bool) error {
	if err := hcl.NewDiagnosticTextWriter(w, l.files, width, color).WriteDiagnostics(diags); err != nil {
		return fmt.Errorf("writing diagnostics: %w", err)
	}
	return nil
}

// loadState is one run of Load: the collected blocks, the values evaluated
// so far, and every diagnostic.
type loadState struct {
	dir   string
	opts  Options
	files map[string]*hcl.File
	diags hcl.Diagnostics
	cfg   *Config

	services  []*hcl.Block
	variables map[string]*variable
	varNames  []string
	locals    map[string]*hcl.Attribute
	data      map[string]*hcl.Block
	topics    map[string]*hcl.Block
	campaigns map[string]*hcl.Block
	// campaignAttrs are the attributes of each campaign block.
	campaignAttrs map[string]hcl.Attributes
	messages      []*messageBlock
	// names maps campaign/kind/name to its first block, to report duplicates.
	names map[string]*hcl.Block

	vars     map[string]cty.Value
	localVal map[string]cty.Value
	ctx      *hcl.EvalContext
}

// messageBlock is a notification or badge block before expansion.
type messageBlock struct {
	kind     Kind
	campaign string
	block    *hcl.Block
	content  *hcl.BodyContent
	// duplicate blocks are checked but left out of the Config.
	duplicate bool
}

// Load reads every *.hcl file of dir (not recursive, in name order) except
// the sandbox seed named by the service block, and evaluates it. The Config
// is usable whenever diags has no errors; all problems of all files are
// reported in one run.
func (l *Loader) Load(dir string, opts Options) (*Config, hcl.Diagnostics) {
	l.files = map[string]*hcl.File{}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, hcl.Diagnostics{errDiag("Invalid configuration directory", err.Error(), nil)}
	}
	s := &loadState{
		dir:           abs,
		opts:          opts,
		files:         l.files,
		cfg:           &Config{Dir: abs, Topics: map[string]Topic{}, Campaigns: map[string]Campaign{}},
		variables:     map[string]*variable{},
		locals:        map[string]*hcl.Attribute{},
		data:          map[string]*hcl.Block{},
		topics:        map[string]*hcl.Block{},
		campaigns:     map[string]*hcl.Block{},
		campaignAttrs: map[string]hcl.Attributes{},
		names:         map[string]*hcl.Block{},
	}
	s.load()
	return s.cfg, sortDiags(dedupe(s.diags))
}

func (s *loadState) load() {
	names, err := configFiles(s.dir)
	if err != nil {
		s.diags = append(s.diags, errDiag("Cannot read configuration directory", err.Error(), nil))
		return
	}
	type parsed struct {
		name  string
		file  *hcl.File
		diags hcl.Diagnostics
	}
	var all []parsed
	for _, name := range names {
		src, err := ReadSource(filepath.Join(s.dir, name), MaxFileSize)
		if err != nil {
			all = append(all, parsed{name: name, diags: hcl.Diagnostics{errDiag("Cannot read configuration file", err.Error(), fileStart(name))}})
			continue
		}
		f, d := ParseSource(name, src)
		if f != nil {
			s.files[name] = f
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
	broken := false
	for _, p := range all {
		if seed != "" && p.name == seed {
			continue // the sandbox package reads and checks it
		}
		s.diags = append(s.diags, p.diags...)
		if p.diags.HasErrors() || p.file == nil {
			broken = true
			continue
		}
		s.decodeFile(p.file)
	}
	if len(names) == 0 {
		s.diags = append(s.diags, errDiag("No configuration files",
			fmt.Sprintf("The directory %s contains no *.hcl files.", s.dir), nil))
		return
	}
	if len(s.services) == 0 && !broken {
		s.diags = append(s.diags, errDiag("Missing service block",
			`The configuration needs exactly one service block, saying which environment it is for, e.g. service { environment = "test" }.`,
			fileStart(firstNonSeed(names, seed))))
	}

	s.decodeVariableValues()
	s.buildContext()
	s.evalLocals()
	s.decodeService()
	s.decodeTopicsAndCampaigns()
	s.expandMessages()

	for name := range s.data {
		s.cfg.DataSources = append(s.cfg.DataSources, name)
	}
	sort.Strings(s.cfg.DataSources)
	sort.Slice(s.cfg.Messages, func(i, j int) bool { return s.cfg.Messages[i].Address < s.cfg.Messages[j].Address })
}

func firstNonSeed(names []string, seed string) string {
	for _, n := range names {
		if n != seed {
			return n
		}
	}
	return ""
}

// configFiles lists the regular *.hcl files of dir, sorted.
func configFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".hcl" {
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

func (s *loadState) decodeFile(f *hcl.File) {
	content, diags := f.Body.Content(rootSchema)
	s.diags = append(s.diags, diags...)
	for _, b := range content.Blocks {
		switch b.Type {
		case "service":
			if len(s.services) > 0 {
				first := s.services[0]
				s.diags = append(s.diags, errDiag("Duplicate service block",
					fmt.Sprintf("A configuration has exactly one service block; the first is at %s.", rangePos(first.DefRange)),
					b.DefRange.Ptr()))
				continue
			}
			s.services = append(s.services, b)
		case "variable":
			s.decodeVariableBlock(b)
		case "locals":
			s.decodeLocalsBlock(b)
		case "data":
			s.decodeDataBlock(b)
		case "topic":
			if s.checkName(b, "topic") && s.unique(s.topics, b, "topic") {
				s.topics[b.Labels[0]] = b
			}
		case "campaign":
			if s.checkName(b, "campaign") && s.unique(s.campaigns, b, "campaign") {
				s.campaigns[b.Labels[0]] = b
				s.decodeCampaignBody(b)
			}
		case "notification", "badge":
			s.addMessageBlock(b, "")
		}
	}
}

func (s *loadState) decodeLocalsBlock(b *hcl.Block) {
	attrs, diags := b.Body.JustAttributes()
	s.diags = append(s.diags, diags...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := attrs[n]
		if prev, ok := s.locals[n]; ok {
			s.diags = append(s.diags, errDiag("Duplicate local value",
				fmt.Sprintf("local.%s is already defined at %s.", n, rangePos(prev.NameRange)), a.NameRange.Ptr()))
			continue
		}
		s.locals[n] = a
	}
}

func (s *loadState) decodeDataBlock(b *hcl.Block) {
	if b.Labels[0] != "recipients" {
		s.diags = append(s.diags, errDiag("Unsupported data source",
			fmt.Sprintf("There is no data source %q; the only one is \"recipients\" (GET /push-notifications/recipients).", b.Labels[0]),
			b.LabelRanges[0].Ptr()))
		return
	}
	if !hclsyntax.ValidIdentifier(b.Labels[1]) {
		s.diags = append(s.diags, invalidName("data source", b.Labels[1], b.LabelRanges[1]))
		return
	}
	_, diags := b.Body.Content(&hcl.BodySchema{})
	s.diags = append(s.diags, diags...)
	if prev, ok := s.data[b.Labels[1]]; ok {
		s.diags = append(s.diags, errDiag("Duplicate data source",
			fmt.Sprintf("data.recipients.%s is already declared at %s.", b.Labels[1], rangePos(prev.DefRange)), b.DefRange.Ptr()))
		return
	}
	s.data[b.Labels[1]] = b
}

func (s *loadState) decodeCampaignBody(b *hcl.Block) {
	content, diags := b.Body.Content(campaignSchema)
	s.diags = append(s.diags, diags...)
	s.campaignAttrs[b.Labels[0]] = content.Attributes
	for _, mb := range content.Blocks {
		s.addMessageBlock(mb, b.Labels[0])
	}
}

func (s *loadState) addMessageBlock(b *hcl.Block, campaign string) {
	if !s.checkName(b, b.Type) {
		return
	}
	key := campaign + "/" + b.Type + "/" + b.Labels[0]
	content, diags := b.Body.Content(messageSchema)
	s.diags = append(s.diags, diags...)
	mb := &messageBlock{kind: Kind(b.Type), campaign: campaign, block: b, content: content}
	if prev, ok := s.names[key]; ok {
		s.diags = append(s.diags, errDiag("Duplicate "+b.Type+" block",
			fmt.Sprintf("%s is already defined at %s; each address must be unique.", blockAddress(campaign, Kind(b.Type), b.Labels[0]), rangePos(prev.DefRange)),
			b.DefRange.Ptr()))
		mb.duplicate = true // still checked, so one run reports its problems too
	} else {
		s.names[key] = b
	}
	s.messages = append(s.messages, mb)
}

// checkName reports a block label that cannot be part of an address.
func (s *loadState) checkName(b *hcl.Block, what string) bool {
	if hclsyntax.ValidIdentifier(b.Labels[0]) {
		return true
	}
	s.diags = append(s.diags, invalidName(what, b.Labels[0], b.LabelRanges[0]))
	return false
}

func (s *loadState) unique(seen map[string]*hcl.Block, b *hcl.Block, what string) bool {
	prev, ok := seen[b.Labels[0]]
	if !ok {
		return true
	}
	s.diags = append(s.diags, errDiag("Duplicate "+what+" block",
		fmt.Sprintf("A %s named %q is already declared at %s.", what, b.Labels[0], rangePos(prev.DefRange)), b.DefRange.Ptr()))
	return false
}

func invalidName(what, name string, r hcl.Range) *hcl.Diagnostic {
	return errDiag("Invalid "+what+" name",
		fmt.Sprintf("%q is not a valid name: a name starts with a letter or underscore and contains only letters, digits, underscores and dashes.", name),
		r.Ptr())
}

func errDiag(summary, detail string, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject}
}

func warnDiag(summary, detail string, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: subject}
}

func fileStart(name string) *hcl.Range {
	if name == "" {
		return nil
	}
	p := hcl.Pos{Line: 1, Column: 1}
	return &hcl.Range{Filename: name, Start: p, End: p}
}

func rangePos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

func posOf(r hcl.Range) Pos {
	return Pos{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

// dedupe drops repeated diagnostics: a for_each over a thousand rows with
// one mistake should say so once.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		sev             hcl.DiagnosticSeverity
		summary, detail string
		subject         hcl.Range
	}
	seen := make(map[key]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := key{sev: d.Severity, summary: d.Summary, detail: d.Detail}
		if d.Subject != nil {
			k.subject = *d.Subject
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

// sortDiags orders diagnostics by file and position, those without a
// source location first, so output reads top to bottom.
func sortDiags(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}
