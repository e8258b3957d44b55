package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"pushform/atomicfile"
	"pushform/planner"
	"pushform/views"
)

// planOptions are the inputs of plan.
type planOptions struct {
	*Meta
	planFlags
	out string
	jsonFlags
	markdown, detailed bool
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
	r, err := m.openRun(ctx, &o.planFlags, "plan")
	if err != nil {
		return m.fail(err)
	}
	if o.out != "" {
		r.sendAt = m.clock()() // apply may send the saved plan at once
	}
	p, err := r.plan(ctx)
	if cerr := r.sess.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return m.fail(err)
	}
	if o.out != "" {
		if err := writePlanFile(m.path(o.out), p); err != nil {
			return m.fail(err)
		}
	}
	if err := m.writePlan(p, o.jsonFlags, o.markdown); err != nil {
		return m.fail(err)
	}
	if note := planClockNote(o.now, r.now, m.clock(), r.sess.State, o.out); note != "" {
		fmt.Fprintln(m.Stderr, note)
	}
	if o.out != "" && !o.enabled() && !o.markdown {
		fmt.Fprintf(m.Stdout, "\nSaved the plan to %s. To send exactly these notifications, run:\n  %s\n", o.out, o.applyCommand())
		if len(o.vars) > 0 {
			fmt.Fprintln(m.Stdout, "with the same --var flags: apply checks the plan against the configuration.")
		}
	}
	if o.detailed && p.HasChanges() {
		return ExitChanges
	}
	return ExitOK
}

// applyCommand is the command that applies the saved plan from where the
// user is: the same --chdir, state and variables files, all of them
// relative to the --chdir directory as the plan's were.
func (o *planOptions) applyCommand() string {
	words := []string{"pushform"}
	if o.Globals.Chdir != "" {
		words = append(words, "--chdir", shellQuote(o.Globals.Chdir))
	}
	words = append(words, "apply")
	for _, f := range o.varFiles {
		words = append(words, "--var-file", shellQuote(f))
	}
	if o.stateFlags.file != "" {
		words = append(words, "--state", shellQuote(o.stateFlags.file))
	}
	return strings.Join(append(words, shellQuote(o.out)), " ")
}

// writePlan shows p on stdout in the chosen format.
func (m *Meta) writePlan(p *planner.Plan, jf jsonFlags, asMarkdown bool) error {
	f := jf.format()
	if asMarkdown {
		f = views.Markdown
	}
	return views.NewPlan(f, m.view(jf.indent)).Plan(p)
}

// writePlanFile saves a plan for apply, readable by its owner only: it
// names every target.
func writePlanFile(path string, p *planner.Plan) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(p)
	})
}

// readPlanFile loads a saved plan.
func readPlanFile(path string) (*planner.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	defer f.Close()
	var p planner.Plan
	if err := json.NewDecoder(f).Decode(&p); err != nil {
		return nil, fmt.Errorf("%s is not a pushform plan: %w", path, err)
	}
	if p.FormatVersion != planner.FormatVersion {
		return nil, fmt.Errorf("%s has plan format %q; this pushform reads %q", path, p.FormatVersion, planner.FormatVersion)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}
