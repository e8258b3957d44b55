package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pushform/plandoc"
	"pushform/planner"
	"pushform/policy"
	"pushform/views"
)

// planOptions are the inputs of plan.
type planOptions struct {
	*Meta
	planFlags
	out string
	jsonFlags
	markdown, detailed bool
	// allowResend lets apply send the plan despite its renames (see
	// planner.Plan.ResendGuard); it is saved with the plan.
	allowResend bool
}

// planHelp is the help of plan; its flags come from the flag set it parses.
func planHelp() helpDoc {
	return helpDoc{
		usage: []string{"plan [options]"},
		text: "Compares the configuration with the state and the recipients list, and prints what apply " +
			"would send: per address, the targets to create, send to, retry, replace or forget, with word " +
			"diffs of changed texts. Nothing is sent and the state is not changed. Save the plan with " +
			"--out to review it and then apply exactly it. Every plan is checked against the policies " +
			"(policy blocks, --policy-dir): a failed deny policy exits 1 after the plan and saves no plan.",
		examples: []string{
			"pushform plan -out=spring.plan",
			"pushform plan -var-file=env/test.pfvars -state=env/test.state",
			"pushform plan -detailed-exitcode -json > plan.json",
			"pushform plan -policy-dir=../org-policies -out=spring.plan",
		},
	}
}

func cmdPlan(ctx context.Context, m *Meta, args []string) int {
	o, err := parsePlan(m, args)
	if err != nil {
		return m.usageError("plan", err)
	}
	return runPlan(ctx, o)
}

func parsePlan(m *Meta, args []string) (*planOptions, error) {
	o := &planOptions{Meta: m}
	fs := m.FlagSet("plan")
	o.planFlags.bind(fs)
	fs.StringVar(&o.out, "out", "", "save the plan to `FILE` for apply")
	o.jsonFlags.bind(fs, "the plan")
	fs.BoolVar(&o.markdown, "markdown", false, "print the plan as markdown for a pull-request comment")
	fs.BoolVar(&o.detailed, "detailed-exitcode", false, "exit 0 with no changes, 2 with changes, 1 on error")
	fs.BoolVar(&o.allowResend, "allow-resend", false, "let apply send the saved plan although it forgets an address and sends the same content under another (a rename without a moved block)")
	if err := m.parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("plan takes no arguments, got %q", fs.Args())
	case o.enabled() && o.markdown:
		return nil, errors.New("--json and --markdown cannot be combined")
	}
	if _, err := o.planFlags.check(); err != nil {
		return nil, err
	}
	return o, nil
}

func runPlan(ctx context.Context, o *planOptions) int {
	m := o.Meta
	if ce, ok := views.NewPlan(o.format(), m.view(o.indent)).(views.ConfigErrors); ok {
		o.configErrors = ce
	}
	r, err := m.openRun(ctx, &o.planFlags, "plan")
	if err != nil {
		return m.fail(err)
	}
	if err := checkPlanAhead(r.Clock, o.out, maxPlanAge(r.Session.Config)); err != nil {
		m.closeRun(r)
		return m.fail(err)
	}
	p, err := r.Plan(ctx)
	var results []plandoc.Policy
	if err == nil {
		results, err = r.Policies(p, o.overrideList())
	}
	if cerr := r.Session.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return m.fail(err)
	}
	sp := o.saved(p)
	sp.Policies, sp.MadeAt = results, r.Clock.Real
	if o.out != "" || o.markdown {
		sp.Audience = r.Audience(p)
	}
	denied := policy.Denied(results)
	if o.out != "" && len(denied) == 0 {
		if err := writePlanFile(m.path(o.out), sp); err != nil {
			return m.fail(err)
		}
	}
	if err := m.writePlan(sp, o.jsonFlags, o.markdown); err != nil {
		return m.fail(err)
	}
	if len(denied) > 0 {
		// The whole plan and its failures are shown; nothing is saved.
		err := error(&policy.DeniedError{Denied: denied})
		if o.out != "" {
			err = fmt.Errorf("%w; no plan was saved to %s", err, o.out)
		}
		return m.fail(err)
	}
	if note := r.Clock.PlanNote(o.out); note != "" {
		fmt.Fprintln(m.Stderr, note)
	}
	if o.out != "" && !o.enabled() && !o.markdown {
		if why := refusalNote(sp); why != "" {
			fmt.Fprintf(m.Stdout, "\nSaved the plan to %s, but apply will refuse it:\n%s\n", o.out, why)
		} else {
			fmt.Fprintf(m.Stdout, "\nSaved the plan to %s. %s\n  %s\n", o.out, views.ApplyLead(p), o.applyCommand())
		}
	}
	if o.detailed && p.HasChanges() {
		return ExitChanges
	}
	return ExitOK
}

// saved is what plan --out writes: p and the choices apply takes from it.
func (o *planOptions) saved(p *planner.Plan) savedPlan {
	sp := savedPlan{Plan: p, Vars: o.vars, VarFiles: o.varFiles, AllowResend: o.allowResend, Now: o.now, Dir: o.Globals.Chdir,
		Overrides: o.overrideList()}
	if o.out != "" {
		sp.ApplyCommand = o.applyCommand()
	}
	return sp
}

// applyCommand is the command that applies the saved plan from where the
// user is: the same --chdir and state, relative to the --chdir directory
// as the plan's were. The variables are in the plan.
func (o *planOptions) applyCommand() string {
	words := []string{"pushform"}
	if o.Globals.Chdir != "" {
		words = append(words, "--chdir", shellQuote(o.Globals.Chdir))
	}
	words = append(words, "apply")
	if o.stateFlags.file != "" {
		words = append(words, "--state", shellQuote(o.stateFlags.file))
	}
	return strings.Join(append(words, shellQuote(o.out)), " ")
}

// writePlan shows sp's plan on stdout in the chosen format.
func (m *Meta) writePlan(sp savedPlan, jf jsonFlags, asMarkdown bool) error {
	f := jf.format()
	v := m.view(jf.indent)
	v.Policies = sp.Policies
	if asMarkdown {
		f = views.Markdown
		v.Markdown = m.markdownContext(sp)
	}
	return views.NewPlan(f, v).Plan(sp.Plan)
}

// stdoutWidth is the width to wrap stdout's text at: the terminal's, or 0
// when stdout is not one.
func (m *Meta) stdoutWidth() int {
	if !m.StdoutTerminal {
		return 0
	}
	return m.Width
}
