package command

import (
	"context"
)

// runShow renders a saved plan, or without one lists the state.
func runShow(ctx context.Context, m *Meta, args []string) int {
	var asJSON, asMarkdown bool
	var statePath string
	fs := m.FlagSet("show")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	fs.BoolVar(&asMarkdown, "markdown", false, "print a saved plan as markdown for a pull-request comment")
	bindStateFlag(fs, &statePath)
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	switch fs.NArg() {
	case 0:
		if asMarkdown {
			return m.Errorf("--markdown needs a saved plan file: pushform show PLANFILE --markdown")
		}
		rest := []string{"list"}
		if statePath != "" {
			rest = append(rest, "--state", statePath)
		}
		return runState(ctx, m, rest)
	case 1:
	default:
		return m.Errorf("show takes at most one argument, a saved plan file")
	}
	p, err := readPlanFile(m.path(fs.Arg(0)))
	if err != nil {
		return m.fail(err)
	}
	if asJSON && asMarkdown {
		return m.Errorf("--json and --markdown cannot be combined")
	}
	if err := m.writePlan(p, asJSON, asMarkdown); err != nil {
		return m.fail(err)
	}
	return ExitOK
}
