package command

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"pushform/atomicfile"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/views"
)

// savedPlan is a plan file: the plan and the choices it was made with that
// apply needs again. Apply takes them from here, never from its own flags,
// so what was reviewed is what is applied.
type savedPlan struct {
	*planner.Plan
	// Vars and VarFiles are the --var and --var-file flags of the plan, as
	// given: apply loads the configuration (service, backend) with them.
	Vars     []string `json:"vars,omitempty"`
	VarFiles []string `json:"var_files,omitempty"`
	// AllowResend records plan --allow-resend: the reviewed plan may send
	// again what a rename without a moved block would (see ResendGuard).
	AllowResend bool `json:"allow_resend,omitempty"`
	// Now is plan --now: apply's clock starts there, as the plan's did.
	Now string `json:"now,omitempty"`
	// Overrides are plan --override-policy's, with their reason: apply
	// lets those deny policies through, as reviewed. Policies are the
	// results of the policies on the plan, for show.
	Overrides []plandoc.Override `json:"overrides,omitempty"`
	Policies  []plandoc.Policy   `json:"policies"`
	// MadeAt is the real time the plan was made (never --now): apply
	// refuses the plan once it is older than max_plan_age.
	MadeAt time.Time `json:"made_at,omitzero"`
	// Dir (the --chdir directory), ApplyCommand and Audience are for
	// show --markdown: the plan comment names the directory, the exact
	// command that applies the plan, and who gets it.
	Dir          string          `json:"dir,omitempty"`
	ApplyCommand string          `json:"apply_command,omitempty"`
	Audience     *views.Audience `json:"audience,omitempty"`
}

// markdownContext is what the plan comment says about where sp comes
// from and what applies it; the commit and the workflow run come from
// GitHub Actions' environment (GITHUB_SHA, GITHUB_SERVER_URL,
// GITHUB_REPOSITORY, GITHUB_RUN_ID) when set.
func (m *Meta) markdownContext(sp savedPlan) views.MarkdownContext {
	ctx := views.MarkdownContext{Dir: sp.Dir, ApplyCommand: sp.ApplyCommand, Audience: sp.Audience, Commit: m.Getenv("GITHUB_SHA")}
	if ctx.ApplyCommand != "" {
		ctx.Refusal = refusalNote(sp)
	}
	server, repo, run := m.Getenv("GITHUB_SERVER_URL"), m.Getenv("GITHUB_REPOSITORY"), m.Getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && run != "" {
		ctx.RunURL = strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + run
	}
	return ctx
}

// writePlanFile saves a plan for apply, readable by its owner only: it
// names every target.
func writePlanFile(path string, sp savedPlan) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(sp)
	})
}

// readPlanFile loads a saved plan.
func readPlanFile(path string) (*savedPlan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	defer f.Close()
	sp := savedPlan{Plan: &planner.Plan{}}
	if err := json.NewDecoder(f).Decode(&sp); err != nil {
		return nil, fmt.Errorf("%s is not a pushform plan: %w", path, err)
	}
	p := sp.Plan
	if p.FormatVersion != planner.FormatVersion {
		return nil, fmt.Errorf("%s has plan format %q; this pushform reads %q", path, p.FormatVersion, planner.FormatVersion)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sp.Now != "" {
		if _, err := time.Parse(time.RFC3339, sp.Now); err != nil {
			return nil, fmt.Errorf("%s: its now %q is not an RFC 3339 time", path, sp.Now)
		}
	}
	return &sp, nil
}

// savedPlanRefusals are the flags that shape a plan, with why apply refuses
// them next to a saved plan: the plan was reviewed as it was made, and a
// flag that silently changed nothing (or something) would apply another
// plan than the reviewed one. Terraform refuses the same way.
var savedPlanRefusals = []struct {
	flags []string
	what  string
}{
	{[]string{"var", "var-file"}, "variables"},
	{[]string{"target"}, "--target"},
	{[]string{"replace"}, "--replace"},
	{[]string{"resume"}, "--resume"},
	{[]string{"allow-resend"}, "--allow-resend"},
	{[]string{"refresh"}, "--refresh"},
	{[]string{"now"}, "--now"},
	{[]string{"retry-unknown"}, "--retry-unknown"},
	{[]string{"max-unknown-resends"}, "--max-unknown-resends"},
	{[]string{"override-policy", "override-reason"}, "--override-policy"},
}

// checkSavedPlanFlags refuses the plan-shaping flags of an apply given a
// saved plan.
func checkSavedPlanFlags(fs *pflag.FlagSet) error {
	for _, r := range savedPlanRefusals {
		for _, name := range r.flags {
			if !fs.Changed(name) {
				continue
			}
			how := "make a new plan with it (pushform plan --" + name + " ... --out FILE) and apply that"
			if r.what == "variables" {
				how = "the plan is applied with the variables it was made with; to change them, make a new plan (pushform plan --var ... --out FILE)"
			}
			return fmt.Errorf("Can't set %s when applying a saved plan: the saved plan is applied exactly as it was made and reviewed; %s. Nothing was sent", r.what, how)
		}
	}
	return nil
}

// refusalNote says why apply would refuse a plan saved with --out, or ""
// when it would apply it.
func refusalNote(sp savedPlan) string {
	if sp.AllowResend {
		return ""
	}
	err := sp.ResendGuard()
	if err == nil {
		return ""
	}
	msg := strings.TrimSuffix(err.Error(), " Nothing was sent.")
	msg = strings.Replace(msg, "apply with --allow-resend", "make the plan with --allow-resend", 1)
	return msg
}
