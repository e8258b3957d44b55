// Package testfile is the language of pushform test files (*.pftest.hcl):
// Terraform's test files for campaigns. Decode turns one parsed file into
// a File: its variables, the simulated service it runs against, and its
// runs with their asserts, kept as expressions until a run evaluates them.
// Nothing here runs anything.
package testfile

import (
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"pushform/config"
	"pushform/sandbox"
)

// File is one decoded test file.
type File struct {
	// Name is the file's path relative to the configuration directory.
	Name string
	// Variables are the file's variable values (its variables block).
	Variables map[string]config.Value
	// Sandbox is the simulated service of the file.
	Sandbox Sandbox
	// Runs are the run blocks, in order.
	Runs []*Run
}

// Sandbox is a file's sandbox block: a seed file, or seed blocks written
// inline. Neither: the seed the configuration's service block names, or
// an empty sandbox.
type Sandbox struct {
	// SeedFile is the seed attribute, relative to the configuration
	// directory; "" when not set.
	SeedFile  string
	SeedRange hcl.Range
	// Inline is the seed written in the block; nil when it holds none.
	Inline *sandbox.Seed
}

// Commands a run may make.
const (
	Plan  = "plan"
	Apply = "apply"
)

// Run is a run block.
type Run struct {
	Name string
	// DeclRange is where the block is.
	DeclRange hcl.Range
	// Command is Plan (the default) or Apply.
	Command string
	// Now is the simulated time of the run; zero to go on from the
	// previous run's clock (the first run: the real time).
	Now time.Time
	// Variables override the file's for this run.
	Variables map[string]config.Value
	// Faults are the sandbox's faults during this run.
	Faults Faults
	// Asserts are the run's assert blocks, in order.
	Asserts []*Assert
	// ExpectFailures are the variables whose validation the run expects
	// to fail (var.NAME), with where each is written.
	ExpectFailures []Expected
	// TestSends are the addresses the run sends as pushform test-send
	// does, before its command; TestSendsRange is where they are written.
	TestSends      []string
	TestSendsRange hcl.Range
}

// Faults are a run's sandbox block: what the service does wrong.
type Faults struct {
	// FailIDs are user and device ids answered failed (207).
	FailIDs []string
	// FailRate is the fraction of targets answered failed, chosen by a
	// stable hash of their ids (the sandbox's --fail-targets).
	FailRate float64
	// Latency delays every request.
	Latency time.Duration
}

// Assert is an assert block: condition must hold after the run.
type Assert struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

// Expected is one entry of expect_failures.
type Expected struct {
	Variable string
	Range    hcl.Range
}

var (
	fileSchema = &hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "variables"},
			{Type: "sandbox"},
			{Type: "run", LabelNames: []string{"name"}},
		},
	}
	fileSandboxSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "seed"}},
	}
	runSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "command"},
			{Name: "now"},
			{Name: "expect_failures"},
			{Name: "test_sends"},
		},
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "variables"},
			{Type: "sandbox"},
			{Type: "assert"},
		},
	}
	runSandboxSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "fail_ids"},
			{Name: "fail_rate"},
			{Name: "latency"},
		},
	}
	assertSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "condition", Required: true},
			{Name: "error_message", Required: true},
		},
	}
)

// Decode decodes the parsed test file f, named name. Values (variables,
// now, faults) are evaluated with funcs, the configuration's function
// table; conditions are kept for the runs. Every problem is reported; the
// File is nil when there is any error.
func Decode(name string, f *hcl.File, funcs map[string]function.Function) (*File, hcl.Diagnostics) {
	d := &decoder{ctx: &hcl.EvalContext{Functions: funcs}}
	out := &File{Name: name, Variables: map[string]config.Value{}}
	content, diags := f.Body.Content(fileSchema)
	d.diags = diags
	var seenVars, seenSandbox *hcl.Block
	runs := map[string]*Run{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "variables":
			if d.once(b, seenVars) {
				seenVars = b
				out.Variables = d.variables(b)
			}
		case "sandbox":
			if d.once(b, seenSandbox) {
				seenSandbox = b
				out.Sandbox = d.sandbox(b)
			}
		case "run":
			r := d.run(b)
			if prev, dup := runs[r.Name]; dup {
				d.errorf(b.LabelRanges[0], "Duplicate run block", "A run named %q is already declared at %s:%d.", r.Name, prev.DeclRange.Filename, prev.DeclRange.Start.Line)
				continue
			}
			runs[r.Name] = r
			out.Runs = append(out.Runs, r)
		}
	}
	if len(out.Runs) == 0 && !d.diags.HasErrors() {
		d.errorf(hcl.Range{Filename: f.Body.MissingItemRange().Filename, Start: hcl.InitialPos, End: hcl.InitialPos},
			"No run blocks", "A test file runs its run blocks in order; %s has none.", name)
	}
	if d.diags.HasErrors() {
		return nil, d.diags
	}
	return out, d.diags
}

type decoder struct {
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
}

func (d *decoder) errorf(subject hcl.Range, summary, format string, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: subject.Ptr()})
}

// once reports whether b is the first block of its type (prev is the one
// before, nil when none), and reports the duplicate otherwise.
func (d *decoder) once(b, prev *hcl.Block) bool {
	if prev == nil {
		return true
	}
	d.errorf(b.DefRange, "Duplicate "+b.Type+" block", "A test file (or run) has at most one %s block; the first is at line %d.", b.Type, prev.DefRange.Start.Line)
	return false
}

// variables evaluates a variables block's attributes.
func (d *decoder) variables(b *hcl.Block) map[string]config.Value {
	attrs, diags := b.Body.JustAttributes()
	d.diags = append(d.diags, diags...)
	out := make(map[string]config.Value, len(attrs))
	for name, a := range attrs {
		v, diags := a.Expr.Value(d.ctx)
		d.diags = append(d.diags, diags...)
		if !diags.HasErrors() {
			out[name] = config.Value{Value: v, Range: a.Expr.Range()}
		}
	}
	return out
}

// sandbox decodes a file's sandbox block.
func (d *decoder) sandbox(b *hcl.Block) Sandbox {
	content, rest, diags := b.Body.PartialContent(fileSandboxSchema)
	d.diags = append(d.diags, diags...)
	var out Sandbox
	if a, ok := content.Attributes["seed"]; ok {
		if v, ok := d.value(a, cty.String); ok {
			out.SeedFile, out.SeedRange = v.AsString(), a.Expr.Range()
		}
	}
	seed, diags := sandbox.DecodeSeed(rest)
	d.diags = append(d.diags, diags...)
	if seed != nil && (len(seed.APIKeys)+len(seed.Users)+len(seed.Devices)+len(seed.Topics)+len(seed.UserRanges) > 0) {
		out.Inline = seed
	}
	if out.SeedFile != "" && out.Inline != nil {
		d.errorf(b.DefRange, "Seed file and inline seed", "A sandbox block takes seed = FILE or seed blocks written in it (user, device, topic, user_range, api_key), not both.")
	}
	return out
}

// run decodes a run block.
func (d *decoder) run(b *hcl.Block) *Run {
	r := &Run{Name: b.Labels[0], DeclRange: b.DefRange, Command: Plan}
	if !hclsyntax.ValidIdentifier(r.Name) {
		d.errorf(b.LabelRanges[0], "Invalid run name", "%q is not a valid name: a name starts with a letter or underscore and contains only letters, digits, underscores and dashes.", r.Name)
	}
	content, diags := b.Body.Content(runSchema)
	d.diags = append(d.diags, diags...)
	if a, ok := content.Attributes["command"]; ok {
		switch kw := hcl.ExprAsKeyword(a.Expr); kw {
		case Plan, Apply:
			r.Command = kw
		default:
			d.errorf(a.Expr.Range(), "Invalid command", "command is plan or apply, written as a keyword (command = apply), not a string.")
		}
	}
	if a, ok := content.Attributes["now"]; ok {
		if v, ok := d.value(a, cty.String); ok {
			t, err := time.Parse(time.RFC3339, v.AsString())
			if err != nil {
				d.errorf(a.Expr.Range(), "Invalid now", "now is an RFC 3339 time, like 2026-12-01T08:30:00Z: %v.", err)
			}
			r.Now = t
		}
	}
	if a, ok := content.Attributes["expect_failures"]; ok {
		r.ExpectFailures = d.expectFailures(a)
	}
	if a, ok := content.Attributes["test_sends"]; ok {
		if v, ok := d.value(a, cty.List(cty.String)); ok {
			r.TestSendsRange = a.Expr.Range()
			for _, addr := range v.AsValueSlice() {
				if addr.IsNull() || addr.AsString() == "" {
					d.errorf(a.Expr.Range(), "Invalid test_sends", "test_sends lists addresses of notifications, as pushform test-send takes them: non-empty strings.")
					break
				}
				r.TestSends = append(r.TestSends, addr.AsString())
			}
		}
	}
	var seenVars, seenSandbox *hcl.Block
	for _, blk := range content.Blocks {
		switch blk.Type {
		case "variables":
			if d.once(blk, seenVars) {
				seenVars = blk
				r.Variables = d.variables(blk)
			}
		case "sandbox":
			if d.once(blk, seenSandbox) {
				seenSandbox = blk
				r.Faults = d.faults(blk)
			}
		case "assert":
			ac, diags := blk.Body.Content(assertSchema)
			d.diags = append(d.diags, diags...)
			cond, ok1 := ac.Attributes["condition"]
			msg, ok2 := ac.Attributes["error_message"]
			if ok1 && ok2 {
				r.Asserts = append(r.Asserts, &Assert{Condition: cond.Expr, ErrorMessage: msg.Expr, DeclRange: blk.DefRange})
			}
		}
	}
	return r
}

// expectFailures decodes expect_failures = [var.NAME, ...].
func (d *decoder) expectFailures(a *hcl.Attribute) []Expected {
	exprs, diags := hcl.ExprList(a.Expr)
	d.diags = append(d.diags, diags...)
	var out []Expected
	for _, e := range exprs {
		t, diags := hcl.AbsTraversalForExpr(e)
		name := ""
		if !diags.HasErrors() && len(t) == 2 && t.RootName() == "var" {
			if at, ok := t[1].(hcl.TraverseAttr); ok {
				name = at.Name
			}
		}
		if name == "" {
			d.errorf(e.Range(), "Invalid expect_failures entry", "expect_failures lists variables whose validation the run expects to fail, as var.NAME.")
			continue
		}
		out = append(out, Expected{Variable: name, Range: e.Range()})
	}
	return out
}

// faults decodes a run's sandbox block.
func (d *decoder) faults(b *hcl.Block) Faults {
	content, diags := b.Body.Content(runSandboxSchema)
	d.diags = append(d.diags, diags...)
	var f Faults
	if a, ok := content.Attributes["fail_ids"]; ok {
		if v, ok := d.value(a, cty.List(cty.String)); ok {
			for _, id := range v.AsValueSlice() {
				if id.IsNull() || id.AsString() == "" {
					d.errorf(a.Expr.Range(), "Invalid fail_ids", "fail_ids lists user and device ids: non-empty strings.")
					break
				}
				f.FailIDs = append(f.FailIDs, id.AsString())
			}
		}
	}
	if a, ok := content.Attributes["fail_rate"]; ok {
		if v, ok := d.value(a, cty.Number); ok {
			r, _ := v.AsBigFloat().Float64()
			if math.IsNaN(r) || r < 0 || r > 1 {
				d.errorf(a.Expr.Range(), "Invalid fail_rate", "fail_rate is a fraction of the targets, from 0 to 1.")
			}
			f.FailRate = r
		}
	}
	if a, ok := content.Attributes["latency"]; ok {
		if v, ok := d.value(a, cty.String); ok {
			l, err := time.ParseDuration(v.AsString())
			if err != nil || l < 0 {
				d.errorf(a.Expr.Range(), "Invalid latency", "latency is a duration like \"250ms\" or \"2s\".")
			}
			f.Latency = l
		}
	}
	return f
}

// value evaluates a to a known, non-null value of type ty.
func (d *decoder) value(a *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	v, diags := a.Expr.Value(d.ctx)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	v, err := convert.Convert(v, ty)
	if err != nil || v.IsNull() || !v.IsWhollyKnown() {
		why := "it is null"
		if err != nil {
			why = err.Error()
		}
		d.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s must be a %s: %s.", a.Name, ty.FriendlyName(), why)
		return cty.NilVal, false
	}
	return v, true
}
