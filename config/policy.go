package config

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Policy enforcements: a failed deny stops plan and apply, a failed warn
// is shown.
const (
	PolicyDeny = "deny"
	PolicyWarn = "warn"
)

// PolicyFileSuffix names the files of a policy directory (--policy-dir,
// PUSHFORM_POLICY_DIRS): they hold policy blocks only.
const PolicyFileSuffix = ".policy.hcl"

// Policy is a policy block: a condition every plan is checked against
// before apply sends anything. Its expressions stay unevaluated: they read
// plan and change, which exist only once a plan does (package policy
// evaluates them).
type Policy struct {
	Name string
	// ForEachChange checks the condition once per change that sends,
	// with change set; otherwise once, on plan.
	ForEachChange bool
	// Enforcement is PolicyDeny (the default) or PolicyWarn.
	Enforcement string
	// Condition must be true; ErrorMessage says what failed.
	Condition, ErrorMessage hcl.Expression
	// Scope is what the expressions see besides plan and change: the
	// functions, and for a policy of the configuration its variables and
	// locals (a policy directory's see functions only).
	Scope *hcl.EvalContext
	Pos   Pos
}

var policySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each_change"},
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
		{Name: "enforcement"},
	},
}

// policyFileSchema is the schema of a policy directory's file: policy
// blocks only.
var policyFileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "policy", LabelNames: []string{"name"}}},
}

// PolicyObjects are the types of the objects a policy's expressions read
// (package plandoc's), given to the Loader so that Load reports what a
// plan would meet only later: an attribute of plan or change that does
// not exist, a condition that is not a bool.
type PolicyObjects struct {
	Plan, Change cty.Type
}

// policyBlock is a decoded policy block, not yet evaluated.
type policyBlock struct {
	block *hcl.Block
	attrs hcl.Attributes
	// dir is the policy directory of the block, "" for the configuration.
	dir string
}

func decodePolicyBlock(b *hcl.Block) (*policyBlock, hcl.Diagnostics) {
	if d := checkLabel(b, "policy"); d.HasErrors() {
		return nil, d
	}
	content, diags := b.Body.Content(policySchema)
	if diags.HasErrors() {
		return nil, diags
	}
	return &policyBlock{block: b, attrs: content.Attributes}, diags
}

// policyRoots are the names a policy's expressions may start with: those
// of the plan, and of the configuration (a policy directory's policies
// have none of the latter).
var policyRoots = []string{"plan", "change", "var", "local"}

// evalPolicy evaluates the settings of a policy block; ctx is what its
// expressions see besides plan and change.
func evalPolicy(pb *policyBlock, ctx *hcl.EvalContext, objs *PolicyObjects) (*Policy, hcl.Diagnostics) {
	p := &Policy{Name: pb.block.Labels[0], Enforcement: PolicyDeny, Scope: ctx, Pos: posOf(pb.block.DefRange),
		Condition: pb.attrs["condition"].Expr, ErrorMessage: pb.attrs["error_message"].Expr}
	var diags hcl.Diagnostics
	if a, ok := pb.attrs["for_each_change"]; ok {
		v, set, d := evalKnown(a, ctx, cty.Bool)
		diags = append(diags, d...)
		p.ForEachChange = set && v.True()
	}
	if a, ok := pb.attrs["enforcement"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		switch {
		case !set:
		case v == PolicyDeny || v == PolicyWarn:
			p.Enforcement = v
		default:
			diags = append(diags, errDiag("Invalid enforcement",
				fmt.Sprintf("enforcement must be %q (a failed policy stops plan and apply) or %q (it is shown), got %q.", PolicyDeny, PolicyWarn, v),
				a.Expr.Range().Ptr()))
		}
	}
	refs := checkPolicyRefs(pb.attrs["condition"], p.ForEachChange, pb.dir != "")
	refs = append(refs, checkPolicyRefs(pb.attrs["error_message"], p.ForEachChange, pb.dir != "")...)
	diags = append(diags, refs...)
	if objs != nil && !refs.HasErrors() {
		diags = append(diags, checkPolicyTypes(pb, p, objs)...)
	}
	return p, diags
}

// checkPolicyTypes evaluates a policy's expressions against unknown plan
// and change objects of their fixed types: a misspelt attribute is
// reported now, not by the first plan, and so is a condition that is not
// a bool or a message that is not a string.
func checkPolicyTypes(pb *policyBlock, p *Policy, objs *PolicyObjects) hcl.Diagnostics {
	ctx := p.Scope.NewChild()
	ctx.Variables = map[string]cty.Value{"plan": cty.UnknownVal(objs.Plan)}
	if p.ForEachChange {
		ctx.Variables["change"] = cty.UnknownVal(objs.Change)
	}
	var diags hcl.Diagnostics
	for _, c := range []struct {
		a  *hcl.Attribute
		ty cty.Type
	}{{pb.attrs["condition"], cty.Bool}, {pb.attrs["error_message"], cty.String}} {
		_, d := evalAttr(c.a, ctx, c.ty)
		diags = append(diags, d...)
	}
	return diags
}

// checkPolicyRefs reports references a policy's expression cannot
// resolve: change without for_each_change, configuration values in a
// policy directory's file, anything else unknown.
func checkPolicyRefs(a *hcl.Attribute, forEachChange, fromDir bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range a.Expr.Variables() {
		root := t.RootName()
		switch {
		case root == "change" && !forEachChange:
			diags = append(diags, errDiag("change without for_each_change",
				"change is the change being checked, set only in a policy with for_each_change = true; a policy without it checks the whole plan, as plan (plan.changes lists every change).",
				t.SourceRange().Ptr()))
		case fromDir && (root == "var" || root == "local"):
			diags = append(diags, errDiag("Configuration value in a policy directory",
				fmt.Sprintf("A policy from a policy directory applies to every configuration, so it cannot read %s; it sees plan, change and the functions.", root),
				t.SourceRange().Ptr()))
		case !slices.Contains(policyRoots, root):
			diags = append(diags, errDiag("Unknown name in a policy",
				fmt.Sprintf("A policy's %s may refer to plan, change (with for_each_change = true), var and local, not %s.", a.Name, root),
				t.SourceRange().Ptr()))
		}
	}
	return diags
}

// addPolicies adds policy blocks to the module, reporting a name declared
// twice (in the configuration or a policy directory).
func (m *module) addPolicies(pbs []*policyBlock) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, pb := range pbs {
		name := pb.block.Labels[0]
		key := "policy/" + name
		if prev, ok := m.names[key]; ok {
			diags = append(diags, duplicateBlock("policy", name, prev.DefRange, pb.block.DefRange))
			continue
		}
		m.names[key] = pb.block
		m.policies = append(m.policies, pb)
	}
	return diags
}

// evalPolicies evaluates the module's policy blocks: the configuration's
// with ctx, a policy directory's with the functions only (file and
// templatefile read that directory).
func (m *module) evalPolicies(ctx *hcl.EvalContext) ([]*Policy, hcl.Diagnostics) {
	var out []*Policy
	var diags hcl.Diagnostics
	scopes := map[string]*hcl.EvalContext{}
	for _, pb := range m.policies {
		scope := ctx
		if pb.dir != "" {
			if scopes[pb.dir] == nil {
				scopes[pb.dir] = &hcl.EvalContext{Functions: functions(pb.dir, m.budget)}
			}
			scope = scopes[pb.dir]
		}
		p, d := evalPolicy(pb, scope, m.policyObjects)
		diags = append(diags, d...)
		out = append(out, p)
	}
	return out, diags
}

// parsePolicyDirs reads the *.policy.hcl files of dirs into the module.
// Their diagnostic names are their paths relative to the configuration
// directory (configDir); files maps those names to the parsed files, for
// quoting.
func (l *Loader) parsePolicyDirs(mod *module, configDir string, dirs []string, files map[string]*hcl.File) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			diags = append(diags, errDiag("Invalid policy directory", err.Error(), nil))
			continue
		}
		names, err := regularFiles(abs, PolicyFileSuffix)
		if err != nil {
			diags = append(diags, errDiag("Cannot read policy directory",
				fmt.Sprintf("%s (a --policy-dir or an entry of PUSHFORM_POLICY_DIRS): %v.", dir, err), nil))
			continue
		}
		if len(names) == 0 {
			diags = append(diags, warnDiag("No policies in policy directory",
				fmt.Sprintf("%s holds no *%s files, so it adds no policy.", dir, PolicyFileSuffix), nil))
		}
		for _, name := range names {
			full := filepath.Join(abs, name)
			shown := full
			if rel, err := filepath.Rel(configDir, full); err == nil {
				shown = rel
			}
			src, err := ReadSource(full, MaxFileSize)
			if err != nil {
				diags = append(diags, errDiag("Cannot read policy file", err.Error(), fileStart(shown)))
				continue
			}
			f, d := ParseSource(shown, src)
			diags = append(diags, d...)
			if f == nil || d.HasErrors() {
				continue
			}
			files[shown] = f
			content, d := f.Body.Content(policyFileSchema)
			diags = append(diags, d...)
			var pbs []*policyBlock
			for _, b := range content.Blocks {
				pb, d := decodePolicyBlock(b)
				diags = append(diags, d...)
				if pb != nil {
					pb.dir = abs
					pbs = append(pbs, pb)
				}
			}
			diags = append(diags, mod.addPolicies(pbs)...)
		}
	}
	return diags
}
