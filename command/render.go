package command

import (
	"context"
	"errors"

	"pushform/operation"
	"pushform/views"
)

// renderOptions are the flags and argument of render.
type renderOptions struct {
	configFlags
	stateFlags
	jsonFlags
	users, devices []string
	address        string
}

// renderHelp is render's help.
func renderHelp() helpDoc {
	return helpDoc{
		usage: []string{"render [options] ADDR --user ID...", "render [options] ADDR --device ID..."},
		text: "Prints exactly what each person would receive of a notification, filled in as a plan fills it in: " +
			"title, body, open_to_url and tag, the translation their locale chooses and the variant they get (from " +
			"the state's ledger, else by bucket), or why they are held (their text cannot be filled in: an attribute " +
			"missing from user_data, say) or held out. Nothing is sent and the state is not changed; the state is " +
			"read, without locking it, only for the variants people already got.",
		examples: []string{
			"pushform render campaign.shipping.notification.shipped --user chloe --user gus",
			"pushform render notification.spring --device ann-phone --json",
		},
	}
}

func cmdRender(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("render")
	o := &renderOptions{}
	o.configFlags.bind(fs)
	o.stateFlags.bind(fs, false)
	fs.StringArrayVar(&o.users, "user", nil, "show what user `ID` would receive (repeatable)")
	fs.StringArrayVar(&o.devices, "device", nil, "show what device `ID` would receive (repeatable)")
	o.jsonFlags.bind(fs, "the texts")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("render", err)
	}
	addr, err := addressAndIDs("render", "a notification", fs, o.users, o.devices)
	if err != nil {
		return m.usageError("render", err)
	}
	o.address = addr
	if len(o.users)+len(o.devices) == 0 {
		return m.usageError("render", errors.New("render needs --user ID or --device ID: whose text to show"))
	}
	return runRender(ctx, m, o)
}

// runRender loads the configuration as validate does, reads the state
// for the variants people already got, and shows each person's text.
func runRender(ctx context.Context, m *Meta, o *renderOptions) int {
	cfg, diags := m.loadConfig(m.newLoader(), o.configFlags, nil)
	if diags.HasErrors() {
		return ExitError
	}
	rs, err := operation.Render(ctx, m.stateOperation("render", o.stateFlags), cfg, operation.RenderOptions{Address: o.address, Users: o.users, Devices: o.devices})
	if err != nil {
		return m.fail(err)
	}
	if err := views.NewRender(o.jsonFlags.format(), m.view(o.indent)).Render(o.address, rs); err != nil {
		return m.fail(err)
	}
	return ExitOK
}
