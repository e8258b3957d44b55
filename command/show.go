package command

import (
	"context"
	"errors"
)

// showOptions are the inputs of show.
type showOptions struct {
	*Meta
	stateFlags
	planFile string
	jsonFlags
	markdown bool
}

// showHelp is the help of show; its flags come from the flag set it parses.
func showHelp() helpDoc {
	return helpDoc{
		usage: []string{"show [options] [PLANFILE]"},
		text: "With a saved plan file, prints that plan: as plan would, as JSON, or as markdown for a " +
			"pull-request comment. Without one, lists the addresses in the state with their targets' outcomes.",
		examples: []string{
			"pushform show spring.plan -markdown > plan.md",
			"pushform show",
		},
	}
}

func cmdShow(ctx context.Context, m *Meta, args []string) int {
	o := &showOptions{Meta: m}
	fs := m.FlagSet("show")
	o.jsonFlags.bind(fs, "the plan or the state")
	fs.BoolVar(&o.markdown, "markdown", false, "print a saved plan as markdown for a pull-request comment")
	o.stateFlags.bind(fs, false)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("show", err)
	}
	switch {
	case fs.NArg() > 1:
		return m.usageError("show", errors.New("show takes at most one argument, a saved plan file"))
	case fs.NArg() == 0 && o.markdown:
		return m.usageError("show", errors.New("--markdown needs a saved plan file: pushform show PLANFILE --markdown"))
	case o.enabled() && o.markdown:
		return m.usageError("show", errors.New("--json and --markdown cannot be combined"))
	}
	o.planFile = fs.Arg(0)
	return runShow(ctx, o)
}

// runShow renders a saved plan, or without one lists the state.
func runShow(ctx context.Context, o *showOptions) int {
	m := o.Meta
	if o.planFile == "" {
		rest := []string{"list"}
		if o.file != "" {
			rest = append(rest, "--state", o.file)
		}
		if o.indent {
			rest = append(rest, "--json-indent")
		} else if o.json {
			rest = append(rest, "--json")
		}
		return runState(ctx, m, rest)
	}
	sp, err := readPlanFile(m.path(o.planFile))
	if err != nil {
		return m.fail(err)
	}
	if err := m.writePlan(*sp, o.jsonFlags, o.markdown); err != nil {
		return m.fail(err)
	}
	return ExitOK
}
